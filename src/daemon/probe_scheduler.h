// Runs the periodic probes: one thread, created by the main thread after it is restricted to the
// housekeeping CPUs, runs one probe at a time (probes never overlap), each at its own interval.
// The first round starts shortly after start-up so every probe's metrics appear early. A probe
// that throws is recorded as a failure (success 0, logged when its state changes), never fatal.
// Thread-safety: start/stop from the main thread; statuses() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probes/probe.h"

namespace jitterd {

class ProbeScheduler {
 public:
  ProbeScheduler(std::vector<std::unique_ptr<Probe>> probes, ProbeContext context,
                 std::chrono::nanoseconds first_delay = std::chrono::seconds(2));
  ~ProbeScheduler();
  ProbeScheduler(const ProbeScheduler&) = delete;
  ProbeScheduler& operator=(const ProbeScheduler&) = delete;

  void start();
  // Cancels the running probe at its next unit boundary and waits up to `grace` for the thread
  // to end. Returns false if a probe is still inside one long unit (the thread is then left to
  // the caller's exit); true once the thread has ended.
  bool stop(std::chrono::nanoseconds grace = std::chrono::hours(24));
  std::vector<ProbeStatus> statuses() const;

 private:
  void loop();

  std::vector<std::unique_ptr<Probe>> probes_;
  ProbeContext context_;
  std::chrono::nanoseconds first_delay_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool loop_ended_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::vector<ProbeStatus> statuses_;
};

}  // namespace jitterd
