// SPDX-License-Identifier: Apache-2.0
// Runs the periodic probes in two lanes, each one thread created by the main thread after it is
// restricted to the housekeeping CPUs: the readers' lane (the probes the registry marks `reader`:
// the watch, the loops, attribution's drain of the BPF engine) and the active probes' lane (those
// that spin or borrow CPUs for seconds: pacing, pinning, clock, c2c, ...). Within a lane one probe
// runs at a time, each at its own interval; the lanes run side by side, so a reader keeps its
// cadence whatever an active probe does (docs/DESIGN.md, "Readers keep their cadence"). The first
// round starts shortly after start-up so every probe's metrics appear early. A probe that throws
// is recorded as a failure (success 0, logged when its state changes), never fatal. A probe's
// states (what it does and why) are logged when they first appear and when they change.
// What the lanes share: each has its own copy of the ProbeContext (its functions and shared
// pointers point at the same samplers and BPF engine: SamplerWorker::run_paused and
// SharedBpfWatch::get are safe from any thread; the engine itself is used by readers only), the
// statuses (under the lock), the state log (its own lock) and the after-run hook, which must be
// safe to call from both lanes at once.
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
  // `separate_readers` false puts every probe in one lane, as before readers had their own (for the
  // cadence benchmark's side-by-side figure).
  ProbeScheduler(std::vector<std::unique_ptr<Probe>> probes, ProbeContext context,
                 std::chrono::nanoseconds first_delay = std::chrono::seconds(2),
                 std::shared_ptr<ProbeStateLog> states = nullptr, bool separate_readers = true);
  ~ProbeScheduler();
  ProbeScheduler(const ProbeScheduler&) = delete;
  ProbeScheduler& operator=(const ProbeScheduler&) = delete;

  // `hook` runs on the lane's thread after each run is stored (the daemon makes the run's /metrics
  // text there, not in a scrape); the two lanes may call it at once. Call before start().
  void set_after_run(std::function<void()> hook) { after_run_ = std::move(hook); }
  // `hook` runs under the scheduler's lock as each run is stored, so that nothing reading
  // statuses() can see the run before the hook has run (the daemon advances the status pages'
  // generation there: export/page_builder.h). It must be quick and must not call statuses().
  // Call before start().
  void set_on_store(std::function<void()> hook) { on_store_ = std::move(hook); }
  void start();
  // Cancels the running probes at their next unit boundary and waits up to `grace` for the lanes'
  // threads to end. Returns false if a probe is still inside one long unit (its thread is then
  // left to the caller's exit); true once every thread has ended.
  bool stop(std::chrono::nanoseconds grace = std::chrono::hours(24));
  ProbeStatuses statuses() const;

 private:
  // One thread and the probes it runs (indices into probes_), with its own copy of the context.
  struct Lane {
    std::vector<std::size_t> probes;
    ProbeContext context;
    std::thread thread;
    bool ended = false;  // guarded by mutex_
  };
  void loop(Lane& lane);
  // Logs what the run says and makes `snapshot` the probe's last run.
  void store(std::size_t index, std::shared_ptr<const ProbeStatus> snapshot);
  bool all_ended() const;  // with mutex_ held

  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // readers' first, then the active probes'; none empty
  std::chrono::nanoseconds first_delay_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool started_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  ProbeStatuses statuses_;
  std::shared_ptr<ProbeStateLog> states_;
  std::function<void()> after_run_;
  std::function<void()> on_store_;
};

}  // namespace jitterd
