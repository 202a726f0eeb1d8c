// SPDX-License-Identifier: Apache-2.0
// The web server's listening TCP socket, opened by jitterd rather than by libmicrohttpd so that a
// bind failure names the address and the errno text, and so that a restarted server (a reload)
// takes over the same socket: connections waiting in its accept queue are served by the new server
// instead of being refused or reset. The servers sharing one hold it by shared_ptr.
// Thread-safety: immutable after construction; construct and destroy from the main thread.
#pragma once

#include <stdexcept>
#include <string>

#include "config/web_config.h"

namespace jitterd {

// Why a socket could not listen: the message names the address, the step and the errno text.
class ListenError : public std::runtime_error {
 public:
  ListenError(const std::string& message, int error_number)
      : std::runtime_error(message), error_number_(error_number) {}
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};

class ListenSocket {
 public:
  // Throws ListenError "cannot listen on ADDRESS: bind: Address already in use".
  // "[::]" listens on IPv6 and IPv4 alike (IPV6_V6ONLY off); other IPv6 addresses on IPv6 only.
  // ":PORT" (every address) is "[::]:PORT", or "0.0.0.0:PORT" on a host without IPv6.
  explicit ListenSocket(const ListenAddress& address);
  ~ListenSocket();
  ListenSocket(const ListenSocket&) = delete;
  ListenSocket& operator=(const ListenSocket&) = delete;

  int fd() const { return fd_; }
  const ListenAddress& address() const { return address_; }
  // The address with the port actually bound (port 0 picks a free one): "127.0.0.1:41234".
  std::string bound_address() const;

 private:
  ListenAddress address_;
  int fd_ = -1;
  unsigned short bound_port_ = 0;
};

}  // namespace jitterd
