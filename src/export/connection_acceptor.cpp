// SPDX-License-Identifier: Apache-2.0
#include "export/connection_acceptor.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
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
// How often a held acceptor with connections waiting to be sorted looks for room again.
constexpr int kHeldPollMs = 10;
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

ConnectionAcceptor::ConnectionAcceptor(int listen_fd, std::string where, ConnectionTracker& tracker, Sort sort,
                                       HandOver hand_over)
    : listen_fd_(listen_fd),
      where_(std::move(where)),
      tracker_(tracker),
      sort_(std::move(sort)),
      hand_over_(std::move(hand_over)) {
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
  // Admitted and not sorted yet: the page lane answers them as the server stops or drains.
  for (const Unsorted& waiting : unsorted_)
    give(waiting.fd, reinterpret_cast<const sockaddr*>(&waiting.address), waiting.length, Lane::pages);
  unsorted_.clear();
}

// Drains the accept queue while the tracker has room; waits on the socket when it is empty, and
// sorts the connections waiting for their first bytes all the while.
void ConnectionAcceptor::run() {
  for (;;) {
    if (!unsorted_.empty() && !wait(false, 0)) return;
    if (!tracker_.room_now()) {
      // Held: the waiting connections are still sorted, each by the end of its wait.
      if (unsorted_.empty() ? !tracker_.wait_for_room() : !wait(false, kHeldPollMs)) return;
      continue;
    }
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
      if (!wait(true, -1)) return;
    } else if (!of_that_connection(error)) {
      failed_accept(error);
      if (!rest(kRestAfterFailureMs)) return;
    }
  }
}

void ConnectionAcceptor::take(int fd, const sockaddr* address, socklen_t length) {
  std::string key = client_address_key(address);
  if (!tracker_.admit(fd, key)) {
    close(fd);  // its address is at its limit: closed without a response
    return;
  }
  const Sorting sorting = sort_(fd, key);
  if (sorting != Sorting::undecided) {
    give(fd, address, length, sorting == Sorting::telemetry ? Lane::telemetry : Lane::pages);
    return;
  }
  if (unsorted_.size() >= kSortWaiting) {
    const Unsorted& oldest = unsorted_.front();
    give(oldest.fd, reinterpret_cast<const sockaddr*>(&oldest.address), oldest.length, Lane::pages);
    unsorted_.pop_front();
  }
  Unsorted waiting{fd, {}, length, std::move(key), Clock::now() + kSortWait};
  std::memcpy(&waiting.address, address, std::min<std::size_t>(length, sizeof waiting.address));
  unsorted_.push_back(std::move(waiting));
}

void ConnectionAcceptor::give(int fd, const sockaddr* address, socklen_t length, Lane lane) {
  if (!hand_over_(fd, address, length, lane)) tracker_.forget(fd);  // the server closed it
}

void ConnectionAcceptor::sort_waiting(const std::vector<pollfd>& polled) {
  const Clock::time_point now = Clock::now();
  std::deque<Unsorted> still;
  for (std::size_t i = 0; i < unsorted_.size(); ++i) {
    Unsorted& waiting = unsorted_[i];
    const short events = polled[i + 2].revents;
    Sorting sorting = events == 0 ? Sorting::undecided : sort_(waiting.fd, waiting.key);
    // A hang-up or an error with nothing to read: the page lane's worker finds out and closes it.
    if (sorting == Sorting::undecided && (events != 0 || waiting.until <= now)) sorting = Sorting::pages;
    if (sorting == Sorting::undecided)
      still.push_back(std::move(waiting));
    else
      give(waiting.fd, reinterpret_cast<const sockaddr*>(&waiting.address), waiting.length,
           sorting == Sorting::telemetry ? Lane::telemetry : Lane::pages);
  }
  unsorted_.swap(still);
}

// Rests `milliseconds`, the socket unwatched; false if stop() came meanwhile.
bool ConnectionAcceptor::rest(int milliseconds) { return wait(false, milliseconds); }

bool ConnectionAcceptor::wait(bool listening, int milliseconds) {
  polled_.clear();
  polled_.push_back({wake_fd_, POLLIN, 0});
  polled_.push_back({listening ? listen_fd_ : -1, POLLIN, 0});  // poll skips a negative descriptor
  for (const Unsorted& waiting : unsorted_) polled_.push_back({waiting.fd, POLLIN, 0});
  int timeout = milliseconds;
  if (!unsorted_.empty()) {  // the oldest's wait ends first: every wait is kSortWait long
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(unsorted_.front().until - Clock::now());
    const int until_sorted = static_cast<int>(std::max<std::int64_t>(left.count(), 0));
    timeout = timeout < 0 ? until_sorted : std::min(timeout, until_sorted);
  }
  while (poll(polled_.data(), static_cast<nfds_t>(polled_.size()), timeout) < 0 && errno == EINTR) {
  }
  if ((polled_[0].revents & POLLIN) != 0) return false;
  if (!unsorted_.empty()) sort_waiting(polled_);
  return true;
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
