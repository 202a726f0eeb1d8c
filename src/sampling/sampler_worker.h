// SPDX-License-Identifier: Apache-2.0
// One sampler thread for one CPU: pins itself, then allocates and first-touches its memory on
// that CPU, locks it, warms up (the warm-up window is discarded but gives the loop's floor),
// waits at the start barrier, and spins in spans (continuous, or bursts of `spin` every
// `period`). Probes may borrow the thread through run_paused(): sampling stops, the task runs on
// the CPU, sampling restarts, and the pause is not recorded as a gap. A thread that finds itself
// off its CPU (the CPU went offline, or its affinity was changed) stops sampling, so that no gap
// of another CPU is reported as this one's, and tries to pin itself back every kCpuRetry. Where
// the msr PMU counts SMIs (and APERF/MPERF), the thread opens its CPU's counters after pinning and reads them between
// spans (a continuous sampler leaves its span every kCounterReadPeriod for it), so the read is
// local, never an IPI, and never inside the loop (host/cpu_counter.h).
// Thread-safety: every public member may be called from any housekeeping thread; startup() and
// shared() only after wait_ready() returned.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "host/cpu_counter.h"
#include "measure/sampler_loop.h"
#include "measure/tick.h"
#include "measure/tick_scale.h"

namespace jitterd {

// The longest a probe may hold a sampler's CPU in one borrow (run_paused) while the sampler still
// counts as alive: well inside the shipped unit's WatchdogSec=30s (pings every 15 s). Probes
// borrow per step (one rate, one operation, one pair side) and the configuration keeps every
// step on a sampled CPU below half of it, so only a step that hangs makes a sampler stalled.
inline constexpr std::chrono::seconds kMaxSamplerBorrow{10};

// How often a sampler that has lost its CPU tries to pin itself back.
inline constexpr std::chrono::milliseconds kCpuRetry{250};

// How long a continuous sampler with a counter to read spins before it leaves its span to read
// it: a few microseconds unsampled a second (the read, a VM exit in a guest), which
// jitterd_sampler_sampled_seconds_total accounts for like any time between spans.
inline constexpr std::chrono::milliseconds kCounterReadPeriod{1000};

struct SamplerSettings {
  int cpu = 0;
  TickMethod method = TickMethod::steady_clock;
  TickScale scale;
  std::optional<std::chrono::nanoseconds> threshold;  // nullopt: floor × floor_multiple
  unsigned floor_multiple = 20;
  bool continuous = false;
  std::chrono::nanoseconds spin{std::chrono::milliseconds(100)};
  std::chrono::nanoseconds period{std::chrono::seconds(1)};
  std::chrono::nanoseconds warmup{std::chrono::seconds(1)};
  std::chrono::nanoseconds window{std::chrono::seconds(60)};
  bool lock_memory = true;
  int realtime_priority = 0;
  std::size_t ring_capacity = 4096;
  // The msr PMU's smi event (host/msr_pmu.h), nullopt where the machine has none; its aperf and
  // mperf events, both or neither.
  std::optional<PmuEvent> smi_event, aperf_event, mperf_event;

  double duty_cycle() const;
};

// What the worker found while starting; written before ready, constant afterwards.
struct SamplerStartup {
  pid_t tid = 0;
  bool pinned = false;
  bool memory_locked = false;
  int realtime_priority = 0;      // the SCHED_FIFO priority obtained, 0 for SCHED_OTHER
  std::uint64_t floor_ticks = 0;  // smallest gap of the warm-up window
  std::uint64_t threshold_ticks = 0;
  std::vector<std::string> warnings;
  std::string error;            // non-empty: this CPU is not being sampled
  std::string smi_error;        // why SMIs are not counted on this CPU though the PMU has the event
  std::string frequency_error;  // why APERF/MPERF are not, though the PMU has them
};

class SamplerWorker {
 public:
  explicit SamplerWorker(SamplerSettings settings);
  ~SamplerWorker();
  SamplerWorker(const SamplerWorker&) = delete;
  SamplerWorker& operator=(const SamplerWorker&) = delete;

  void start();
  void wait_ready();
  void release();  // the start barrier: called for every worker once all are ready
  void stop();     // returns once the thread has exited

  const SamplerSettings& settings() const { return settings_; }
  const SamplerStartup& startup() const { return startup_; }
  const SamplerShared* shared() const { return shared_.get(); }
  bool sampling() const { return startup_.error.empty() && !exited_.load(); }
  // True while the loop keeps proving progress on its CPU: its last check is recent enough for
  // its duty cycle (a burst sampler sleeps up to `period` between checks), or a probe has held
  // its CPU (run_paused) for at most kMaxSamplerBorrow. False while the thread is off its CPU.
  bool alive(std::uint64_t now_tick) const;
  // What the watchdog asks: alive, or off its CPU and still retrying (the machine took the CPU
  // away; the thread is not stalled).
  bool responsive(std::uint64_t now_tick) const;
  // True from the moment the loop found itself off its CPU until it has pinned itself back.
  bool off_cpu() const { return off_cpu_.load(std::memory_order_relaxed); }
  // How many times the loop found itself off its CPU.
  std::uint64_t cpu_losses() const { return cpu_losses_.load(std::memory_order_acquire); }
  // While off_cpu(): when the loop found itself off its CPU (Unix seconds, 0 if not known yet),
  // and the errno of its last attempt to pin itself back (EINVAL: the CPU is offline or outside
  // the process's cpuset; 0: the kernel took the mask, yet the thread ran elsewhere).
  double off_cpu_since() const { return off_cpu_since_.load(std::memory_order_relaxed); }
  int pin_error() const { return pin_error_.load(std::memory_order_relaxed); }

  // Runs `task` on this worker's CPU with sampling paused. The future holds an exception when
  // the thread is not running or is off its CPU.
  std::future<void> run_paused(std::function<void()> task);

 private:
  void thread_main();
  bool prepare();
  void warm_up();
  void sample();
  bool run_span(std::uint64_t end_tick);
  bool wait_for_cpu();
  bool heartbeat_recent(std::uint64_t now_tick) const;
  void run_pending_tasks();
  void open_counters();
  bool counters_open() const { return smi_.is_open() || cycles_.is_open(); }
  std::optional<std::uint64_t> read_smis() const;
  void read_counters(std::optional<std::uint64_t> span_start);
  void refuse_pending_tasks();

  struct Task {
    std::function<void()> work;
    std::promise<void> done;
  };

  SamplerSettings settings_;
  SamplerStartup startup_;
  std::unique_ptr<SamplerShared> shared_;
  SamplerWriterState writer_;
  CpuCounter smi_;                          // opened, read and closed on the sampled CPU only
  CycleCounters cycles_;                    // likewise
  std::optional<std::uint64_t> last_smis_;  // the last read: a continuous sampler's next span's start
  std::uint64_t smis_in_spans_ = 0;
  std::thread thread_;
  std::atomic<bool> interrupt_span_{false};
  std::atomic<bool> exited_{false};
  std::atomic<bool> off_cpu_{false};
  std::atomic<std::uint64_t> cpu_losses_{0};
  std::atomic<double> off_cpu_since_{0};
  std::atomic<int> pin_error_{0};
  std::atomic<std::uint64_t> task_started_tick_{0};  // while a borrowed task runs; 0 otherwise
  std::mutex mutex_;
  std::condition_variable changed_;
  bool ready_ = false;
  bool released_ = false;
  bool stopping_ = false;
  bool finished_ = false;  // the thread will run no more tasks
  std::deque<Task> tasks_;
};

}  // namespace jitterd
