// SPDX-License-Identifier: Apache-2.0
#include "export/connection_tracker.h"

#include <pthread.h>
#include <sys/socket.h>

namespace jitterd {

ConnectionTracker::ConnectionTracker(Clock::duration deadline, std::size_t soft_limit, Clock::duration min_age)
    : deadline_(deadline), soft_limit_(soft_limit), min_age_(min_age) {
  reaper_ = std::thread([this] { reap(); });
  pthread_setname_np(reaper_.native_handle(), "web-deadlines");
}

ConnectionTracker::~ConnectionTracker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  reaper_.join();
}

void ConnectionTracker::opened(const void* connection, int fd) {
  {
    std::lock_guard lock(mutex_);
    const Clock::time_point now = Clock::now();
    if (const auto old = connections_.find(connection); old != connections_.end()) {  // a key MHD reused
      if (old->second.answering) --answering_;
      if (!old->second.shut) --live_;
      connections_.erase(old);
    }
    connections_.emplace(connection, Connection{fd, false, false, now + deadline_});
    ++live_;
    if (soft_limit_ != 0 && live_ > soft_limit_) evict_longest_waiting(now);
  }
  changed_.notify_all();
}

// The connection whose request has been awaited longest (earliest deadline: each deadline is a
// fixed time after its wait began), if it has waited at least min_age: a fresh connection whose
// request is on its way is never the one evicted.
void ConnectionTracker::evict_longest_waiting(Clock::time_point now) {
  Connection* oldest = nullptr;
  for (auto& [key, c] : connections_) {
    if (c.answering || c.shut) continue;
    if (oldest == nullptr || c.deadline < oldest->deadline) oldest = &c;
  }
  if (oldest == nullptr || oldest->deadline - deadline_ > now - min_age_) return;
  shutdown(oldest->fd, SHUT_RDWR);
  oldest->shut = true;
  --live_;
  ++evicted_;
}

void ConnectionTracker::answering(const void* connection) {
  std::lock_guard lock(mutex_);
  const auto found = connections_.find(connection);
  if (found == connections_.end() || found->second.answering) return;
  found->second.answering = true;
  ++answering_;
}

void ConnectionTracker::answered(const void* connection) {
  {
    std::lock_guard lock(mutex_);
    const auto found = connections_.find(connection);
    if (found == connections_.end() || !found->second.answering) return;
    found->second.answering = false;
    found->second.deadline = Clock::now() + deadline_;
    --answering_;
  }
  changed_.notify_all();
}

void ConnectionTracker::closed(const void* connection) {
  {
    std::lock_guard lock(mutex_);
    const auto found = connections_.find(connection);
    if (found == connections_.end()) return;
    if (found->second.answering) --answering_;
    if (!found->second.shut) --live_;
    connections_.erase(found);
  }
  changed_.notify_all();
}

bool ConnectionTracker::wait_quiet(Clock::time_point until, bool all_closed) {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, until, [&] { return all_closed ? connections_.empty() : answering_ == 0; });
}

std::size_t ConnectionTracker::open() const {
  std::lock_guard lock(mutex_);
  return connections_.size();
}

std::uint64_t ConnectionTracker::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::uint64_t ConnectionTracker::evicted() const {
  std::lock_guard lock(mutex_);
  return evicted_;
}

// Sleeps until the earliest deadline (or a change), shuts down what is overdue. MHD then sees
// the connection end on its next poll and closes it, telling closed().
void ConnectionTracker::reap() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    for (auto& [key, connection] : connections_) {
      if (connection.answering || connection.shut) continue;
      if (connection.deadline <= now) {
        shutdown(connection.fd, SHUT_RDWR);
        connection.shut = true;
        --live_;
        ++dropped_;
      } else if (connection.deadline < next) {
        next = connection.deadline;
      }
    }
    if (next == Clock::time_point::max())
      changed_.wait(lock);
    else
      changed_.wait_until(lock, next);
  }
}

}  // namespace jitterd
