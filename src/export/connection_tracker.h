// SPDX-License-Identifier: Apache-2.0
// The web server's view of its open connections, fed by libmicrohttpd's notifications, for two
// jobs libmicrohttpd 0.9.75 does not do:
//  - a request deadline: a connection whose request has not fully arrived within `deadline` of
//    its opening (TLS handshake included) or of its previous response is shut down. MHD's own
//    timeout only notices silence, so a client sending one byte a second ("slowloris") would
//    otherwise hold its connection, and a slot under the connection limit, forever.
//  - eviction of the longest-waiting: when a connection opens with more than `soft_limit` open
//    and not yet shut, the one whose request has been awaited longest (opened, or answered, at
//    least `min_age` ago; never one being answered) is shut down. A slowloris client that holds
//    hundreds of connections from many addresses (issue 35: 12 addresses, scrapes at 6.5 s) then
//    makes room for each new connection instead of holding the server at its connection limit,
//    where new ones (a scrape) wait in the kernel's accept queue.
//  - a stopping server's waits: until no response is being produced or sent, or until every
//    connection has closed.
// The deadline is enforced by one reaper thread, started by the constructor (so it inherits the
// constructing thread's CPU affinity) and joined by the destructor. It shuts a socket down (never
// closes it) under the same mutex that the closed notification takes before MHD closes the
// socket, so it never touches a descriptor MHD has released.
// Thread-safety: the notifications come from MHD's worker threads, the waits from the thread that
// stops the server; one mutex guards everything.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace jitterd {

class ConnectionTracker {
 public:
  using Clock = std::chrono::steady_clock;

  // `soft_limit` 0: no eviction.
  ConnectionTracker(Clock::duration deadline, std::size_t soft_limit = 0,
                    Clock::duration min_age = std::chrono::milliseconds(100));
  ~ConnectionTracker();
  ConnectionTracker(const ConnectionTracker&) = delete;
  ConnectionTracker& operator=(const ConnectionTracker&) = delete;

  // `connection` is MHD's handle, used as a key only; `fd` its socket.
  void opened(const void* connection, int fd);
  // The request is complete and its response queued: exempt from the deadline until sent.
  void answering(const void* connection);
  // The response was sent (or abandoned): the next request's deadline starts now.
  void answered(const void* connection);
  void closed(const void* connection);

  // Wait until no connection is being answered (or, with all_closed, until none is open), or
  // until `until`; true if the condition was met.
  bool wait_quiet(Clock::time_point until, bool all_closed);

  std::size_t open() const;
  std::uint64_t dropped() const;  // connections shut down for missing their deadline
  std::uint64_t evicted() const;  // connections shut down to make room (soft_limit)

 private:
  struct Connection {
    int fd = -1;
    bool answering = false;
    bool shut = false;
    Clock::time_point deadline;
  };

  void reap();
  void evict_longest_waiting(Clock::time_point now);  // with mutex_ held

  const Clock::duration deadline_;
  const std::size_t soft_limit_;
  const Clock::duration min_age_;
  std::size_t live_ = 0;  // open and not shut
  std::uint64_t evicted_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<const void*, Connection> connections_;
  std::size_t answering_ = 0;
  std::uint64_t dropped_ = 0;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace jitterd
