// SPDX-License-Identifier: Apache-2.0
// The web server's connections, admitted by its acceptor (export/connection_acceptor.h) and then
// followed through libmicrohttpd's notifications, for what libmicrohttpd 0.9.75 does not do
// (the rules, as plain decisions, are export/connection_admission.h's):
//  - admission before libmicrohttpd: the per-address limit, eviction of the connection whose
//    request has been awaited longest when many are open, and holding the acceptor (the kernel's
//    accept queue waits) while the server holds as many connections as it may, shut ones not yet
//    closed included, so libmicrohttpd is never handed a connection its own limit would refuse;
//  - a request deadline: a connection whose request has not fully arrived within the deadline of
//    its admission (TLS handshake included) or of its previous response is shut down. MHD's own
//    timeout only notices silence, so a client sending one byte a second ("slowloris") would
//    otherwise hold its connection forever;
//  - a stopping server's waits: until no response is being produced or sent, or until every
//    connection has closed.
// The deadline is enforced by one reaper thread, started by the constructor (so it inherits the
// constructing thread's CPU affinity) and joined by the destructor. A socket is shut down (never
// closed) under the same mutex that the closed notification takes before MHD closes the socket,
// so no descriptor MHD has released is touched.
// Thread-safety: the acceptor's calls come from its thread, the notifications from MHD's workers,
// the waits from the thread that stops the server; one mutex guards everything.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "export/connection_admission.h"
#include "export/web_counters.h"

namespace jitterd {

class ConnectionTracker {
 public:
  using Clock = std::chrono::steady_clock;

  // What was shed since the start (ConnectionAdmission's counters), and how often the acceptor
  // held.
  struct Counts {
    std::uint64_t refused = 0;   // over the per-address limit: closed at once
    std::uint64_t evicted = 0;   // shut down to make room
    std::uint64_t dropped = 0;   // shut down at their request deadline
    std::uint64_t unserved = 0;  // handed to libmicrohttpd and refused by it
    std::uint64_t lost = 0;      // closed by libmicrohttpd without its closed notification
    std::uint64_t holds = 0;     // times the acceptor stopped accepting until there was room
  };

  // `counters` (may be null; must outlive the tracker) receives what is shed as it happens.
  explicit ConnectionTracker(AdmissionLimits limits, WebCounters* counters = nullptr);
  ~ConnectionTracker();
  ConnectionTracker(const ConnectionTracker&) = delete;
  ConnectionTracker& operator=(const ConnectionTracker&) = delete;

  // The acceptor's side. wait_for_room blocks while the server may take no connection; false once
  // release() was called (the acceptor stops). room_now says the same without waiting (false also
  // once released).
  bool wait_for_room();
  bool room_now();
  // False: refused (the caller closes it). True: admitted; the connection it evicts, if any, is
  // shut down. `address`: export/auth_failures.h client_address_key.
  bool admit(int fd, const std::string& address);
  void forget(int fd);  // the server refused what it was handed (and closed it)
  void release();

  // libmicrohttpd's notifications, by the connection's socket.
  void opened(int fd);
  // The request is complete: exempt from eviction and the deadline until its response is sent.
  void answering(int fd);
  // The response was sent (or abandoned): the next request's deadline starts now.
  void answered(int fd);
  void closed(int fd);

  // Wait until no connection is being answered (or, with all_closed, until none is held), or
  // until `until`; true if the condition was met.
  bool wait_quiet(Clock::time_point until, bool all_closed);

  std::size_t open() const;  // held by the server: live and shut, not yet closed
  Counts counts() const;

 private:
  void reap();
  void notify_reaper_if_earlier(Clock::time_point before);  // with mutex_ held
  // With mutex_ held: whether the acceptor may take one now (a refusal starts a hold, counted once).
  ConnectionAdmission::Step step(Clock::time_point now);
  void publish();  // with mutex_ held: the admission's counts since the last call, to counters_

  mutable std::mutex mutex_;
  ConnectionAdmission admission_;
  std::condition_variable changed_;         // the acceptor's and the stopping thread's waits
  std::condition_variable deadline_moved_;  // the reaper's
  WebCounters* counters_;
  Counts published_{};  // what counters_ was given so far
  std::uint64_t unserved_ = 0;
  std::uint64_t holds_ = 0;
  bool holding_ = false;
  bool released_ = false;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace jitterd
