// SPDX-License-Identifier: Apache-2.0
// Runs the periodic probes: one thread, created by the main thread after it is restricted to the
// housekeeping CPUs, runs one probe at a time (probes never overlap), each at its own interval.
// The first round starts shortly after start-up so every probe's metrics appear early. A probe
// that throws is recorded as a failure (success 0, logged when its state changes), never fatal.
// A probe's states (what it does and why) are logged when they first appear and when they change.
// Thread-safety: start/stop from the main thread; statuses() from any thread (each probe's last
// run is an immutable snapshot, swapped under the lock when the probe finishes).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "probes/probe.h"

namespace jitterd {

// The probe states (ProbeResult::states) last logged, by probe and subject. The daemon keeps one
// for its whole life and hands it to every scheduler, so a reload that restarts the probes does
// not log an unchanged state again. Thread-safe.
class ProbeStateLog {
 public:
  // Logs "probe NAME: SUBJECT: LINE" (warn or info) when it differs from what was last logged for
  // NAME and SUBJECT, and returns whether it did.
  bool log_if_changed(const std::string& probe, const std::string& subject, const ProbeState& state);

 private:
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, ProbeState> last_;
};

class ProbeScheduler {
 public:
  // `states` may be shared with the schedulers before and after this one (reloads); null: a
  // scheduler of its own.
  ProbeScheduler(std::vector<std::unique_ptr<Probe>> probes, ProbeContext context,
                 std::chrono::nanoseconds first_delay = std::chrono::seconds(2),
                 std::shared_ptr<ProbeStateLog> states = nullptr);
  ~ProbeScheduler();
  ProbeScheduler(const ProbeScheduler&) = delete;
  ProbeScheduler& operator=(const ProbeScheduler&) = delete;

  // `hook` runs on the scheduler's thread after each run is stored (the daemon makes the run's
  // /metrics text there, not in a scrape). Call before start().
  void set_after_run(std::function<void()> hook) { after_run_ = std::move(hook); }
  void start();
  // Cancels the running probe at its next unit boundary and waits up to `grace` for the thread
  // to end. Returns false if a probe is still inside one long unit (the thread is then left to
  // the caller's exit); true once the thread has ended.
  bool stop(std::chrono::nanoseconds grace = std::chrono::hours(24));
  ProbeStatuses statuses() const;

 private:
  void loop();
  // Logs what the run says and makes `snapshot` the probe's last run.
  void store(std::size_t index, std::shared_ptr<const ProbeStatus> snapshot);

  std::vector<std::unique_ptr<Probe>> probes_;
  ProbeContext context_;
  std::chrono::nanoseconds first_delay_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool loop_ended_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  ProbeStatuses statuses_;
  std::shared_ptr<ProbeStateLog> states_;
  std::function<void()> after_run_;
};

}  // namespace jitterd
