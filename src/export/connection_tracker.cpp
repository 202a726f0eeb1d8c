// SPDX-License-Identifier: Apache-2.0
#include "export/connection_tracker.h"

#include <pthread.h>
#include <sys/socket.h>

namespace jitterd {

ConnectionTracker::ConnectionTracker(Clock::duration deadline) : deadline_(deadline) {
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
    connections_[connection] = Connection{fd, false, false, Clock::now() + deadline_};
  }
  changed_.notify_all();
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
