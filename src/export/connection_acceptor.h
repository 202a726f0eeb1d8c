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
// Each admitted connection is sorted to a lane of workers (export/request_sorting.h) before it is
// handed over: by `sort`, at once when it can tell, else when the connection's first bytes arrive,
// for at most kSortWait (then the page lane). At most kSortWaiting connections wait to be sorted
// (one more hands the longest-waiting to the page lane); a connection whose client has sent
// nothing yet costs the acceptor a slot in its poll, never a wait.
//
// Several servers may share one listening socket (a reload): each has its acceptor, and the
// kernel gives each connection to one of them.
// Thread-safety: construct and destroy (stop()) from one thread. The thread is started by the
// constructor, so it runs on the constructing thread's CPUs (the housekeeping CPUs: never a sampled
// or watched one).
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "export/connection_tracker.h"
#include "export/request_sorting.h"

namespace jitterd {

inline constexpr std::chrono::milliseconds kSortWait{200};
inline constexpr std::size_t kSortWaiting = 64;

class ConnectionAcceptor {
 public:
  // `hand_over` gives an admitted connection (its socket non-blocking and close-on-exec) to the
  // server's `lane`, which owns the socket from then on; false if the server refused it (and
  // closed it).
  using HandOver = std::function<bool(int fd, const sockaddr* address, socklen_t length, Lane lane)>;
  // The lane of a connection, by its socket and its client's address key; undecided: ask again
  // when bytes arrive. Called on the acceptor's thread.
  using Sort = std::function<Sorting(int fd, const std::string& address)>;

  // `where` names the socket in the log ("127.0.0.1:9978"). Throws std::runtime_error when its
  // wake-up descriptor cannot be made.
  ConnectionAcceptor(int listen_fd, std::string where, ConnectionTracker& tracker, Sort sort, HandOver hand_over);
  ~ConnectionAcceptor();  // stop()
  ConnectionAcceptor(const ConnectionAcceptor&) = delete;
  ConnectionAcceptor& operator=(const ConnectionAcceptor&) = delete;

  // Stops accepting and joins the thread; connections still queued are left to the kernel (and
  // to another server on the same socket).
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  // An admitted connection waiting for its first bytes.
  struct Unsorted {
    int fd;
    sockaddr_storage address;
    socklen_t length;
    std::string key;  // the client's address key
    Clock::time_point until;
  };

  void run();
  void take(int fd, const sockaddr* address, socklen_t length);
  void give(int fd, const sockaddr* address, socklen_t length, Lane lane);
  // Hands over the waiting connections whose bytes arrived (`arrived`: their indexes' poll results)
  // or whose wait is over.
  void sort_waiting(const std::vector<pollfd>& polled);
  // Polls the wake-up, the listening socket (with `listening`) and the waiting connections for at
  // most `milliseconds` (-1: no limit but the waiting ones' ends); false: stopped.
  bool wait(bool listening, int milliseconds);
  bool rest(int milliseconds);
  void failed_accept(int error);

  const int listen_fd_;
  const std::string where_;
  ConnectionTracker& tracker_;
  Sort sort_;
  HandOver hand_over_;
  std::deque<Unsorted> unsorted_;  // oldest first
  std::vector<pollfd> polled_;     // wake-up, listening socket, then unsorted_ in order
  int wake_fd_ = -1;               // an eventfd: stop() writes it
  std::chrono::steady_clock::time_point last_warning_{};
  std::uint64_t failures_unlogged_ = 0;
  std::thread thread_;
};

}  // namespace jitterd
