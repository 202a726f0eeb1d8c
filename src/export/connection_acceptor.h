// SPDX-License-Identifier: Apache-2.0
// The web server's acceptor: one thread that takes connections off the listening socket as fast
// as the kernel queues them, admits each through the connection tracker (per-address limit,
// eviction of the longest-waiting: export/connection_admission.h) and hands it to the server
// (libmicrohttpd's MHD_add_connection, through `hand_over`). libmicrohttpd 0.9.75 in poll mode
// accepts one connection per worker loop, so a client reconnecting at once from many addresses
// (slowloris) kept the kernel's accept queue full and a scrape's connection waited behind it; this
// thread drains the queue instead. While the server holds as many connections as it may, the
// acceptor holds too (the queue waits) until closes catch up, rather than hand over a connection
// that would be refused.
//
// Several servers may share one listening socket (a reload): each has its acceptor, and the
// kernel gives each connection to one of them.
// Thread-safety: construct and destroy (stop()) from one thread. The thread is started by the
// constructor, so it runs on the constructing thread's CPUs (the housekeeping CPUs: never a sampled
// or watched one).
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "export/connection_tracker.h"

namespace jitterd {

class ConnectionAcceptor {
 public:
  // `hand_over` gives an admitted connection (its socket non-blocking and close-on-exec) to the
  // server, which owns the socket from then on; false if the server refused it (and closed it).
  using HandOver = std::function<bool(int fd, const sockaddr* address, socklen_t length)>;

  // `where` names the socket in the log ("127.0.0.1:9978"). Throws std::runtime_error when its
  // wake-up descriptor cannot be made.
  ConnectionAcceptor(int listen_fd, std::string where, ConnectionTracker& tracker, HandOver hand_over);
  ~ConnectionAcceptor();  // stop()
  ConnectionAcceptor(const ConnectionAcceptor&) = delete;
  ConnectionAcceptor& operator=(const ConnectionAcceptor&) = delete;

  // Stops accepting and joins the thread; connections still queued are left to the kernel (and
  // to another server on the same socket).
  void stop();

 private:
  void run();
  void take(int fd, const sockaddr* address, socklen_t length);
  bool wait_for_connection();
  bool rest(int milliseconds);
  bool wait(int watched, int milliseconds);  // poll the wake-up (and the socket); false: stopped
  void failed_accept(int error);

  const int listen_fd_;
  const std::string where_;
  ConnectionTracker& tracker_;
  HandOver hand_over_;
  int wake_fd_ = -1;  // an eventfd: stop() writes it
  std::chrono::steady_clock::time_point last_warning_{};
  std::uint64_t failures_unlogged_ = 0;
  std::thread thread_;
};

}  // namespace jitterd
