// SPDX-License-Identifier: Apache-2.0
#include "export/connection_admission.h"

namespace jitterd {

namespace {
// How many of the longest-waiting connections an eviction looks at for one without unread bytes,
// and how soon the acceptor looks again when none of them qualified (a worker is reading them).
constexpr int kCandidates = 8;
constexpr auto kRecheck = std::chrono::milliseconds(10);
}  // namespace

ConnectionAdmission::ConnectionAdmission(AdmissionLimits limits, Unread unread)
    : limits_(std::move(limits)), unread_(std::move(unread)) {}

ConnectionAdmission::Step ConnectionAdmission::next(Clock::time_point now) const {
  constexpr Clock::time_point until_a_change = Clock::time_point::max();
  // Shut connections count: until the server closes them they hold its slots and descriptors.
  if (connections_.size() >= limits_.live_limit + limits_.closing_room) return {false, until_a_change};
  if (live_ < limits_.live_limit) return {true, {}};
  if (waiting_.empty()) return {false, until_a_change};  // every live one pending or being answered
  const Clock::time_point evictable = waiting_.begin()->first + limits_.min_age;
  if (evictable > now) return {false, evictable};
  if (victim(now) >= 0) return {true, {}};
  return {false, now + kRecheck};
}

// The longest-waiting connection that has waited min_age, if the client's bytes on it have all
// been read: a fresh connection whose request is on its way (a scrape's), or one whose request
// waits for a busy worker, is never the one evicted.
int ConnectionAdmission::victim(Clock::time_point now) const {
  int looked = 0;
  for (const auto& [since, fd] : waiting_) {
    if (since + limits_.min_age > now || looked++ == kCandidates) break;
    if (!unread_ || !unread_(fd)) return fd;
  }
  return -1;
}

ConnectionAdmission::Admission ConnectionAdmission::admit(int fd, const std::string& address,
                                                          Clock::time_point now) {
  // The kernel gave this descriptor again, so the server closed the one we knew by it without
  // telling (libmicrohttpd does so when it cannot start serving a connection handed to it).
  if (const auto stale = connections_.find(fd); stale != connections_.end()) {
    erase(stale);
    ++lost_;
  }
  if (held_from(address) >= limits_.per_address) {
    ++refused_;
    return {};
  }
  Admission admission{true, -1};
  if (live_ >= limits_.evict_above) admission.evicted = victim(now);
  if (admission.evicted >= 0) {
    shut(admission.evicted, connections_.at(admission.evicted));
    ++evicted_;
  }
  connections_.emplace(fd, Connection{State::pending, address, now});
  ++live_;
  ++live_by_address_[address];
  return admission;
}

void ConnectionAdmission::forget(int fd) {
  if (const auto found = connections_.find(fd); found != connections_.end()) erase(found);
}

bool ConnectionAdmission::opened(int fd) {
  const auto found = connections_.find(fd);
  if (found == connections_.end() || found->second.state != State::pending) return false;
  // Its deadline counts from its admission: time spent waiting for a worker is the client's too.
  found->second.state = State::waiting;
  waiting_.emplace(found->second.since, fd);
  return true;
}

bool ConnectionAdmission::answering(int fd) {
  const auto found = connections_.find(fd);
  if (found == connections_.end()) return false;
  Connection& connection = found->second;
  if (connection.state != State::waiting && connection.state != State::pending) return false;
  const bool was_waiting = connection.state == State::waiting;
  if (was_waiting) waiting_.erase({connection.since, fd});
  connection.state = State::answering;
  ++answering_;
  return was_waiting;
}

bool ConnectionAdmission::answered(int fd, Clock::time_point now) {
  const auto found = connections_.find(fd);
  if (found == connections_.end() || found->second.state != State::answering) return false;
  --answering_;
  found->second.state = State::waiting;
  found->second.since = now;
  waiting_.emplace(now, fd);
  return true;
}

bool ConnectionAdmission::closed(int fd) {
  const auto found = connections_.find(fd);
  if (found == connections_.end()) return false;
  erase(found);
  return true;
}

std::vector<int> ConnectionAdmission::overdue(Clock::time_point now) {
  std::vector<int> fds;
  while (!waiting_.empty() && waiting_.begin()->first + limits_.deadline <= now) {
    const int fd = waiting_.begin()->second;
    shut(fd, connections_.at(fd));
    ++dropped_;
    fds.push_back(fd);
  }
  return fds;
}

ConnectionAdmission::Clock::time_point ConnectionAdmission::next_deadline() const {
  return waiting_.empty() ? Clock::time_point::max() : waiting_.begin()->first + limits_.deadline;
}

std::size_t ConnectionAdmission::held_from(const std::string& address) const {
  const auto found = live_by_address_.find(address);
  return found == live_by_address_.end() ? 0 : found->second;
}

void ConnectionAdmission::shut(int fd, Connection& connection) {
  if (connection.state == State::shut) return;
  if (connection.state == State::waiting) waiting_.erase({connection.since, fd});
  if (connection.state == State::answering) --answering_;
  connection.state = State::shut;
  --live_;
  release_address(connection.address);
}

void ConnectionAdmission::erase(std::unordered_map<int, Connection>::iterator found) {
  shut(found->first, found->second);  // a no-op on one already shut
  connections_.erase(found);
}

void ConnectionAdmission::release_address(const std::string& address) {
  const auto found = live_by_address_.find(address);
  if (found == live_by_address_.end()) return;
  if (--found->second == 0) live_by_address_.erase(found);
}

}  // namespace jitterd
