// SPDX-License-Identifier: Apache-2.0
#include "export/hash_pool.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace jitterd {

struct HashPool::State {
  struct Entry {
    std::string key;
    Job job;
    Clock::time_point queued;
  };
  explicit State(Limits l) : limits(l) {}

  const Limits limits;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::deque<Entry> queue;
  std::unordered_map<std::string, std::size_t> per_key;  // waiting or running
  bool stopping = false;
};

namespace {
// SCHED_BATCH: the scheduler never lets this thread preempt a waking one, so a worker answering
// a scrape takes the CPU at once. Its nice stays 0: at nice 19 its share beside two busy threads
// of nice 0 is under 1%, and a cost-14 check took over a minute on a loaded machine (tested with
// two `yes` hogs). Not SCHED_IDLE, which would starve it for as long as anything else wants the
// CPU. Failing to change the policy is harmless, so it is not reported.
void lower_priority() {
  sched_param normal{};
  static_cast<void>(sched_setscheduler(0, SCHED_BATCH, &normal));
}

}  // namespace

void HashPool::run(std::shared_ptr<State> state) {
  lower_priority();
  for (;;) {
    State::Entry entry;
    {
      std::unique_lock lock(state->mutex);
      state->changed.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
      if (state->stopping) return;
      entry = std::move(state->queue.front());
      state->queue.pop_front();
    }
    entry.job(HashPool::Clock::now() - entry.queued > state->limits.max_wait);
    entry.job = nullptr;  // what it holds goes now, outside the lock
    std::lock_guard lock(state->mutex);
    const auto count = state->per_key.find(entry.key);
    if (count != state->per_key.end() && --count->second == 0) state->per_key.erase(count);
  }
}

HashPool::HashPool(Limits limits, const std::string& thread_name) : state_(std::make_shared<State>(limits)) {
  for (unsigned i = 0; i < std::max(1u, limits.threads); ++i) {
    threads_.emplace_back(run, state_);
    pthread_setname_np(threads_.back().native_handle(), thread_name.substr(0, 15).c_str());
  }
}

HashPool::~HashPool() { stop(); }

HashPool::Admission HashPool::submit(const std::string& key, Job job) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return Admission::stopped;
    if (state_->queue.size() >= state_->limits.queue) return Admission::full;
    std::size_t& count = state_->per_key[key];
    if (count >= state_->limits.per_key) return Admission::key_full;
    ++count;
    state_->queue.push_back({key, std::move(job), Clock::now()});
  }
  state_->changed.notify_one();
  return Admission::accepted;
}

void HashPool::stop() {
  std::deque<State::Entry> dropped;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return;
    state_->stopping = true;
    dropped.swap(state_->queue);
  }
  state_->changed.notify_all();
  // A thread in the middle of a job finishes it on its own, then sees stopping and exits.
  for (std::thread& thread : threads_) thread.detach();
}

std::size_t HashPool::waiting() const {
  std::lock_guard lock(state_->mutex);
  return state_->queue.size();
}

}  // namespace jitterd
