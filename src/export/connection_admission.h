// SPDX-License-Identifier: Apache-2.0
// Which connections the web server takes, keeps and sheds: the decisions of admission, as plain
// data and functions (no threads, no sockets, no clock of its own), so that they are tested
// exactly; export/connection_tracker.h runs them under a mutex for the acceptor, libmicrohttpd's
// notifications and the deadline reaper.
//
// A connection is known by its socket descriptor, from the moment the acceptor admits it until
// the server has closed it. Its states:
//   pending    admitted and handed to the server, which has not started serving it yet
//   waiting    served, its request not complete yet (awaited since it opened or since its previous
//              response was sent)
//   answering  its request complete, its response being built or sent
//   shut       shut down by us (evicted, or past its request deadline), not yet closed by the server
// A live connection is one not shut: pending, waiting or answering.
//
// The rules (docs/operations.md lists the values):
//  - the acceptor takes a new connection only while fewer than live_limit + closing_room are held
//    by the server in all (shut ones included: each is a descriptor and a slot of the server's
//    own limit until the server closes it), and only while fewer than live_limit are live or one
//    can be evicted; otherwise it holds, and the kernel's accept queue waits;
//  - a connection from an address that already has per_address live ones is refused (closed);
//  - with evict_above or more live, admitting a connection shuts down the waiting one whose
//    request has been awaited longest, if it has waited at least min_age (never one being answered,
//    never one the server has not started serving, never one with bytes the server has not read
//    yet: its request may be there, behind a busy worker);
//  - a waiting connection whose request has not arrived `deadline` after its wait began is shut.
// Thread-safety: none; the caller serializes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jitterd {

struct AdmissionLimits {
  std::size_t evict_above = 384;   // live connections from which each admission evicts one
  std::size_t live_limit = 512;    // live connections beyond which the acceptor holds
  std::size_t closing_room = 128;  // shut connections the server may hold on top of live_limit
  std::size_t per_address = 128;   // live connections from one client address
  std::chrono::steady_clock::duration deadline = std::chrono::seconds(3);
  std::chrono::steady_clock::duration min_age = std::chrono::milliseconds(100);
};

class ConnectionAdmission {
 public:
  using Clock = std::chrono::steady_clock;

  // What the acceptor may do now: take a connection, or hold until `until` (a connection then
  // becomes old enough to evict) or, with until == time_point::max(), until a connection is
  // answered or closed.
  struct Step {
    bool accept = true;
    Clock::time_point until{};
  };
  // The outcome of admit(): refused (close it; the address is at its limit), or admitted, with
  // the descriptor of the connection evicted to make room (to shut down), if any.
  struct Admission {
    bool admitted = false;
    int evicted = -1;
  };

  // Whether bytes the client sent wait unread on the connection's socket (the tracker asks the
  // kernel: FIONREAD); none when not given.
  using Unread = std::function<bool(int fd)>;

  explicit ConnectionAdmission(AdmissionLimits limits, Unread unread = {});

  Step next(Clock::time_point now) const;
  // `address` is the client's address key (export/auth_failures.h client_address_key: an IPv6
  // client is its /64).
  Admission admit(int fd, const std::string& address, Clock::time_point now);
  // The server refused a connection handed to it (and closed its socket).
  void forget(int fd);

  // From the server's notifications; each returns whether the earliest deadline may have moved.
  bool opened(int fd);
  bool answering(int fd);
  bool answered(int fd, Clock::time_point now);
  bool closed(int fd);

  // Shuts every waiting connection past its deadline: their descriptors, to shut down.
  std::vector<int> overdue(Clock::time_point now);
  // When the next waiting connection reaches its deadline (time_point::max() if none waits).
  Clock::time_point next_deadline() const;

  std::size_t live() const { return live_; }
  std::size_t held() const { return connections_.size(); }  // live and shut: what the server holds
  std::size_t answering_count() const { return answering_; }
  std::size_t held_from(const std::string& address) const;  // live from that address

  std::uint64_t refused() const { return refused_; }  // over the per-address limit
  std::uint64_t evicted() const { return evicted_; }  // shut to make room
  std::uint64_t dropped() const { return dropped_; }  // shut at their request deadline
  std::uint64_t lost() const { return lost_; }        // closed by the server without a word

 private:
  enum class State { pending, waiting, answering, shut };
  struct Connection {
    State state = State::pending;
    std::string address;
    Clock::time_point since;  // when its wait began: admitted, or its previous response sent
  };
  using Waiting = std::set<std::pair<Clock::time_point, int>>;  // (since, fd), longest first

  int victim(Clock::time_point now) const;  // the connection to evict now, or -1
  void shut(int fd, Connection& connection);
  void erase(std::unordered_map<int, Connection>::iterator found);
  void release_address(const std::string& address);

  AdmissionLimits limits_;
  Unread unread_;
  std::unordered_map<int, Connection> connections_;
  std::unordered_map<std::string, std::size_t> live_by_address_;
  Waiting waiting_;
  std::size_t live_ = 0;
  std::size_t answering_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t evicted_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t lost_ = 0;
};

}  // namespace jitterd
