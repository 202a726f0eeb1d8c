// SPDX-License-Identifier: Apache-2.0
#include "export/connection_acceptor.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "export/auth_failures.h"

namespace jitterd {

namespace {
using namespace std::chrono_literals;

// How long the acceptor rests after accept() failed for want of descriptors or memory: the
// connection stays queued, and retrying at once would spin.
constexpr int kRestAfterFailureMs = 100;
constexpr auto kWarningEvery = 10s;

// Errors accept() returns for the connection it was taking, not for the socket (accept(2): Linux
// passes on a pending network error of the new connection): the next one is taken at once.
bool of_that_connection(int error) {
  switch (error) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case ENOPROTOOPT:
    case ENETDOWN:
    case ENETUNREACH:
    case EHOSTDOWN:
    case EHOSTUNREACH:
    case ENONET:
    case EOPNOTSUPP:
    case ETIMEDOUT:
      return true;
    default:
      return false;
  }
}
}  // namespace

ConnectionAcceptor::ConnectionAcceptor(int listen_fd, std::string where, ConnectionTracker& tracker,
                                       HandOver hand_over)
    : listen_fd_(listen_fd), where_(std::move(where)), tracker_(tracker), hand_over_(std::move(hand_over)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0)
    throw std::runtime_error("cannot serve on " + where_ + ": eventfd for the acceptor: " + std::strerror(errno));
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "web-accept");
}

ConnectionAcceptor::~ConnectionAcceptor() { stop(); }

void ConnectionAcceptor::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  const ssize_t written = write(wake_fd_, &one, sizeof one);  // fails only on overflow: never once
  (void)written;
  tracker_.release();  // ends a hold
  thread_.join();
  close(wake_fd_);
  wake_fd_ = -1;
}

// Drains the accept queue while the tracker has room; waits on the socket when it is empty.
void ConnectionAcceptor::run() {
  while (tracker_.wait_for_room()) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      take(fd, reinterpret_cast<const sockaddr*>(&address), length);
      continue;
    }
    const int error = errno;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      if (!wait_for_connection()) return;
    } else if (!of_that_connection(error)) {
      failed_accept(error);
      if (!rest(kRestAfterFailureMs)) return;
    }
  }
}

void ConnectionAcceptor::take(int fd, const sockaddr* address, socklen_t length) {
  if (!tracker_.admit(fd, client_address_key(address))) {
    close(fd);  // its address is at its limit: closed without a response
    return;
  }
  if (!hand_over_(fd, address, length)) tracker_.forget(fd);  // the server closed it
}

// Until a connection is queued (true) or stop() (false).
bool ConnectionAcceptor::wait_for_connection() { return wait(2, -1); }

// Rests `milliseconds`, the socket unwatched; false if stop() came meanwhile.
bool ConnectionAcceptor::rest(int milliseconds) { return wait(1, milliseconds); }

bool ConnectionAcceptor::wait(int watched, int milliseconds) {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
  while (poll(fds, static_cast<nfds_t>(watched), milliseconds) < 0 && errno == EINTR) {
  }
  return (fds[0].revents & POLLIN) == 0;
}

void ConnectionAcceptor::failed_accept(int error) {
  ++failures_unlogged_;
  const auto now = std::chrono::steady_clock::now();
  if (last_warning_ != std::chrono::steady_clock::time_point{} && now - last_warning_ < kWarningEvery) return;
  spdlog::warn(
      "web server on {}: cannot accept a connection: {} ({} times since the last warning); the "
      "connections wait in the kernel's queue",
      where_, std::strerror(error), failures_unlogged_);
  last_warning_ = now;
  failures_unlogged_ = 0;
}

}  // namespace jitterd
