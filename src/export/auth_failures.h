// SPDX-License-Identifier: Apache-2.0
// A short memory of failed basic auth logins, per client address: the keyed digests
// (BasicAuth::digest) of the credentials that failed, so that the same wrong credentials from the
// same address are refused again without a bcrypt. A failed pair can never succeed later on the
// same server (its users are fixed until a reload makes a new one), so the memory only has to be
// bounded, not exact: at most `addresses` addresses (the least recently failing one is forgotten
// first), `per_address` failures each (the least recently seen first), each kept for `keep` after
// it was last seen, so a client that keeps sending the same wrong password stays refused for
// nothing. Plain data with
// the time passed in, tested without threads. Thread-safety: none; its owner (export/auth_gate.h)
// holds a mutex around it.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

struct sockaddr;

namespace jitterd {

// Which "address" a client is, for per-address limits: an IPv4 address, an IPv4-mapped IPv6
// address as its IPv4 one, and an IPv6 address by its /64 prefix (one host usually holds a whole
// /64, so a per-address limit on full IPv6 addresses would be none). Empty for other families.
std::string client_address_key(const sockaddr* address);

class FailureMemory {
 public:
  using Clock = std::chrono::steady_clock;

  FailureMemory(std::size_t addresses, std::size_t per_address, Clock::duration keep);

  // True when `digest` failed from `address` and was last seen within `keep` before `now`; then
  // it counts as seen again at `now`.
  bool remembers(const std::string& address, const std::string& digest, Clock::time_point now);
  // Remembers that `digest` failed from `address` at `now`.
  void add(const std::string& address, const std::string& digest, Clock::time_point now);

  std::size_t addresses() const { return by_address_.size(); }
  // Failures remembered, expired ones that were not dropped yet included.
  std::size_t size() const;

 private:
  struct Failure {
    std::string digest;
    Clock::time_point until;
  };
  struct Address {
    std::deque<Failure> failures;  // least recently seen first
    Clock::time_point last;        // when a failure was last added or seen
  };

  void make_room(Clock::time_point now);

  std::size_t address_limit_;
  std::size_t per_address_;
  Clock::duration keep_;
  std::unordered_map<std::string, Address> by_address_;
};

}  // namespace jitterd
