// SPDX-License-Identifier: Apache-2.0
// The web server's thread for password hashing (bcrypt), so that a login never runs on a
// libmicrohttpd worker and a flood of logins cannot delay a scrape whose password is already
// verified: a few threads (kHashThreads in auth_gate.h) at SCHED_BATCH (a worker that wakes takes
// the CPU from them at once; at nice 0 they still get a fair share on a busy machine, where nice 19
// let two CPU hogs stretch a one-second hash past a minute), a bounded queue, a bound per key (the
// client address), and no
// join. stop() drops the jobs that wait; a job that is running finishes on its detached thread,
// which then exits: the thread co-owns the queue's state and its job co-owns what the job touches,
// so nothing it touches can be gone, and nobody waits for a hash (a cost-14 one takes a second).
// The threads start in the constructor and inherit the constructing thread's CPUs: construct on
// the housekeeping CPUs (the web server's constructor does).
// Thread-safety: submit() from any thread; construct and stop from one.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace jitterd {

class HashPool {
 public:
  using Clock = std::chrono::steady_clock;
  // `expired`: the job waited longer than max_wait before a thread took it. Its client has waited
  // long enough: it should answer "busy" rather than do its work. A job must not throw.
  using Job = std::function<void(bool expired)>;
  struct Limits {
    unsigned threads = 1;
    std::size_t queue = 8;    // jobs waiting for a thread
    std::size_t per_key = 4;  // jobs waiting or running for one key
    Clock::duration max_wait = std::chrono::seconds(2);
  };
  enum class Admission { accepted, full, key_full, stopped };

  HashPool(Limits limits, const std::string& thread_name);
  ~HashPool();  // stop()
  HashPool(const HashPool&) = delete;
  HashPool& operator=(const HashPool&) = delete;

  // Queues `job` unless the queue is full, `key` has per_key jobs already, or stop() was called.
  Admission submit(const std::string& key, Job job);
  // Drops the waiting jobs (destroyed, never run), detaches the threads; returns at once.
  void stop();

  std::size_t waiting() const;

 private:
  struct State;
  static void run(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
  std::vector<std::thread> threads_;
};

}  // namespace jitterd
