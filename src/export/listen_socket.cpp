// SPDX-License-Identifier: Apache-2.0
#include "export/listen_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace jitterd {

namespace {
// Longer than the default of 128 so that a burst of scrapers is queued, not refused; the kernel
// caps it at net.core.somaxconn.
constexpr int kBacklog = 1024;

[[noreturn]] void fail(const ListenAddress& address, const char* step, int error) {
  throw ListenError("cannot listen on " + address.to_string() + ": " + step + ": " + std::strerror(error), error);
}

// ":PORT" on a host without IPv6 (ipv6.disable=1, or no IPv6 in this network namespace): every
// IPv4 address, as node_exporter's Go listener does.
ListenAddress without_ipv6(const ListenAddress& address) {
  const int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe >= 0) {
    close(probe);
    return address;
  }
  if (errno != EAFNOSUPPORT) return address;
  ListenAddress v4 = address;
  v4.host = "0.0.0.0";
  v4.ipv6 = false;
  return v4;
}
}  // namespace

ListenSocket::ListenSocket(const ListenAddress& wanted)
    : address_(wanted.every_address ? without_ipv6(wanted) : wanted) {
  const ListenAddress& address = address_;
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (address.ipv6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(address.port);
    if (inet_pton(AF_INET6, address.host.c_str(), &v6->sin6_addr) != 1) fail(address, "address", EINVAL);
    length = sizeof *v6;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(address.port);
    if (inet_pton(AF_INET, address.host.c_str(), &v4->sin_addr) != 1) fail(address, "address", EINVAL);
    length = sizeof *v4;
  }
  // Non-blocking: each server's acceptor (two share it during a reload) drains it with accept4()
  // until EAGAIN, and one that loses the race for a connection must not block there.
  fd_ = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) fail(address, "socket", errno);
  const int on = 1;
  // SO_REUSEADDR: a restart binds again at once despite connections in TIME_WAIT.
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (address.ipv6) {
    // Only the unspecified address takes IPv4 too, whatever net.ipv6.bindv6only says.
    const int v6only = address.host == "::" ? 0 : 1;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  }
  const auto close_and_fail = [&](const char* step) {
    const int error = errno;
    close(fd_);
    fd_ = -1;
    fail(address, step, error);
  };
  if (bind(fd_, reinterpret_cast<const sockaddr*>(&storage), length) != 0) close_and_fail("bind");
  if (listen(fd_, kBacklog) != 0) close_and_fail("listen");
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &bound_length) != 0) close_and_fail("getsockname");
  bound_port_ = ntohs(address.ipv6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                   : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
}

ListenSocket::~ListenSocket() {
  if (fd_ >= 0) close(fd_);
}

std::string ListenSocket::bound_address() const {
  ListenAddress bound = address_;
  bound.port = bound_port_;
  return bound.to_string();
}

}  // namespace jitterd
