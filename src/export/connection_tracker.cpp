// SPDX-License-Identifier: Apache-2.0
#include "export/connection_tracker.h"

#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

namespace jitterd {

namespace {
// Bytes the client sent that the server has not read yet (called with the mutex held, so the
// socket is still the connection's: MHD closes it only after its closed notification).
bool unread_input(int fd) {
  int bytes = 0;
  return ioctl(fd, FIONREAD, &bytes) == 0 && bytes > 0;
}
}  // namespace

ConnectionTracker::ConnectionTracker(AdmissionLimits limits, WebCounters* counters)
    : admission_(std::move(limits), unread_input), counters_(counters) {
  reaper_ = std::thread([this] { reap(); });
  pthread_setname_np(reaper_.native_handle(), "web-deadlines");
}

ConnectionTracker::~ConnectionTracker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    released_ = true;
  }
  deadline_moved_.notify_all();
  changed_.notify_all();
  reaper_.join();
}

ConnectionAdmission::Step ConnectionTracker::step(Clock::time_point now) {
  const ConnectionAdmission::Step next = admission_.next(now);
  if (next.accept) {
    holding_ = false;
  } else if (!holding_) {
    holding_ = true;
    ++holds_;
    publish();
  }
  return next;
}

bool ConnectionTracker::wait_for_room() {
  std::unique_lock lock(mutex_);
  while (!released_) {
    const ConnectionAdmission::Step next = step(Clock::now());
    if (next.accept) return true;
    if (next.until == Clock::time_point::max())
      changed_.wait(lock);
    else
      changed_.wait_until(lock, next.until);
  }
  return false;
}

bool ConnectionTracker::room_now() {
  std::lock_guard lock(mutex_);
  return !released_ && step(Clock::now()).accept;
}

void ConnectionTracker::publish() {
  if (counters_ == nullptr) return;
  const Counts now{
      admission_.refused(), admission_.evicted(), admission_.dropped(), unserved_, admission_.lost(), holds_};
  count(counters_->per_address_limit, now.refused - published_.refused);
  count(counters_->evicted, now.evicted - published_.evicted);
  count(counters_->request_deadline, now.dropped - published_.dropped);
  count(counters_->refused_by_server, now.unserved - published_.unserved);
  count(counters_->closed_unserved, now.lost - published_.lost);
  count(counters_->accept_holds, now.holds - published_.holds);
  published_ = now;
}

bool ConnectionTracker::admit(int fd, const std::string& address) {
  std::lock_guard lock(mutex_);
  const ConnectionAdmission::Admission admission = admission_.admit(fd, address, Clock::now());
  // Shut, not closed: MHD closes it when its worker sees the end, after telling closed().
  if (admission.evicted >= 0) shutdown(admission.evicted, SHUT_RDWR);
  publish();
  return admission.admitted;
}

void ConnectionTracker::forget(int fd) {
  {
    std::lock_guard lock(mutex_);
    admission_.forget(fd);
    ++unserved_;
    publish();
  }
  changed_.notify_all();
}

void ConnectionTracker::release() {
  {
    std::lock_guard lock(mutex_);
    released_ = true;
  }
  changed_.notify_all();
}

void ConnectionTracker::notify_reaper_if_earlier(Clock::time_point before) {
  if (admission_.next_deadline() < before) deadline_moved_.notify_one();
}

void ConnectionTracker::opened(int fd) {
  {
    std::lock_guard lock(mutex_);
    const Clock::time_point before = admission_.next_deadline();
    admission_.opened(fd);
    notify_reaper_if_earlier(before);
  }
  changed_.notify_all();  // a connection the acceptor may evict once it is old enough
}

void ConnectionTracker::answering(int fd) {
  std::lock_guard lock(mutex_);
  admission_.answering(fd);
}

void ConnectionTracker::answered(int fd) {
  {
    std::lock_guard lock(mutex_);
    const Clock::time_point before = admission_.next_deadline();
    admission_.answered(fd, Clock::now());
    notify_reaper_if_earlier(before);
  }
  changed_.notify_all();
}

void ConnectionTracker::closed(int fd) {
  {
    std::lock_guard lock(mutex_);
    admission_.closed(fd);
  }
  changed_.notify_all();
}

bool ConnectionTracker::wait_quiet(Clock::time_point until, bool all_closed) {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(
      lock, until, [&] { return all_closed ? admission_.held() == 0 : admission_.answering_count() == 0; });
}

std::size_t ConnectionTracker::open() const {
  std::lock_guard lock(mutex_);
  return admission_.held();
}

ConnectionTracker::Counts ConnectionTracker::counts() const {
  std::lock_guard lock(mutex_);
  return {admission_.refused(), admission_.evicted(), admission_.dropped(), unserved_, admission_.lost(), holds_};
}

// Sleeps until the earliest deadline (or an earlier one appears), shuts down what is overdue. MHD
// then sees the connection end on its next poll and closes it, telling closed().
void ConnectionTracker::reap() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    for (const int fd : admission_.overdue(Clock::now())) shutdown(fd, SHUT_RDWR);
    publish();
    const Clock::time_point next = admission_.next_deadline();
    if (next == Clock::time_point::max())
      deadline_moved_.wait(lock);
    else
      deadline_moved_.wait_until(lock, next);
  }
}

}  // namespace jitterd
