// SPDX-License-Identifier: Apache-2.0
// The counts engine: what the kernel took from the CPUs that run the application, read from the
// kernel's own counters without running anything there (the `counts` method; it needs no
// privilege). Each reading takes, per watched CPU, the interrupts and softirqs it counted
// (/proc/interrupts, /proc/softirqs, named by attribution's causes), the time tasks ran there
// (/proc/schedstat), and for the application's threads on it their involuntary and voluntary
// context switches and run-queue wait (/proc/PID/task/TID/status and schedstat). For a thread
// that never sleeps each involuntary switch is one preemption and its run-queue wait is the time
// other tasks took from it, both exact. Totals are cumulative from the first reading and never
// go down: a thread that exits keeps what it had counted, a new one counts from its start, a
// reused thread number is a new thread (its start time differs). By name, the threads are found by
// a walk of every thread once in kReadingsPerFullSearch readings and among the known processes in
// between.
//
// Nothing here touches a watched CPU: every file is read on the caller's CPU, and procfs
// answers from counters the watched CPU keeps itself (no IPI, no perf counter, no MSR). Used by
// one thread at a time (the watch probe's); the reading is a plain value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/interrupt_counts.h"
#include "host/thread_stats.h"
#include "watch/application.h"
#include "watch/sched_counters.h"

namespace jitterd {

// A search by task name walks every thread of the machine once in this many readings (and
// whenever the application has no thread left); in between it lists the known processes' threads.
// A new process of the application is found within this many readings; a known one's new thread
// at once.
inline constexpr int kReadingsPerFullSearch = 10;

// Device IRQs listed by name per watched CPU; events of further ones count in their cause only.
inline constexpr std::size_t kMaxDeviceIrqsPerCpu = 16;

struct WatchedCpu {
  int cpu = 0;
  bool online = false;  // has a column in /proc/interrupts at this reading
  bool nohz_full = false;
  // Cumulative since the first reading:
  std::map<std::string, std::uint64_t> interrupts;  // hard IRQs and IPIs by cause (cause_names)
  std::map<std::string, std::uint64_t> softirqs;    // by cause
  std::map<std::pair<std::string, std::string>, std::uint64_t> device_irqs;  // (irq, name)
  std::uint64_t preemptions = 0;  // the application's involuntary switches
  std::uint64_t voluntary_switches = 0;
  std::uint64_t wait_ns = 0;             // the application's run-queue wait: taken by other tasks
  std::uint64_t application_run_ns = 0;  // the application's time on the CPU
  // Every task's time there minus the application's (accounted when a task leaves the CPU, so a
  // stretch the application runs without a break shows when it ends); needs /proc/schedstat.
  std::uint64_t other_tasks_ns = 0;
  // The last window:
  std::size_t application_threads = 0;
  std::uint64_t window_timer_interrupts = 0;
};

struct WatchedThread {
  ApplicationThread thread;
  int cpu = -1;  // watched_cpu_of
  // Cumulative since jitterd first saw the thread (since it started, if that was later).
  std::uint64_t preemptions = 0, voluntary_switches = 0, wait_ns = 0, run_ns = 0;
};

// The application's threads on no watched CPU that a reading lists by name (the rest are counted).
inline constexpr std::size_t kListedThreadsElsewhere = 8;

struct WatchReading {
  double window_seconds = 0;  // since the previous reading; 0 for the first
  std::vector<WatchedCpu> cpus;
  std::vector<WatchedThread> threads;             // the application's threads on watched CPUs now
  std::size_t application_threads_elsewhere = 0;  // found, but on no watched CPU
  // The first kListedThreadsElsewhere of them (by pid, then tid), to name them.
  std::vector<ApplicationThread> threads_elsewhere;
  // /proc/schedstat was readable (kernels with CONFIG_SCHEDSTATS): other_tasks_ns is measured.
  bool other_tasks_measured = false;
  std::vector<std::string> problems;  // one line each, this reading
};

// The name /proc/interrupts gives device IRQ `irq` on `cpu` in `reading` ("" where it has none).
std::string device_irq_name(const WatchReading& reading, int cpu, int irq);

class CountsEngine {
 public:
  CountsEngine(ApplicationSettings application, std::vector<int> cpus);
  // One reading at `monotonic_seconds` (CLOCK_MONOTONIC, for the window's length).
  WatchReading read(const HostReader& host, double monotonic_seconds);
  const std::vector<int>& cpus() const { return cpus_; }

 private:
  struct ThreadState {
    SchedTimes sched;
    ContextSwitches switches;
    WatchedThread totals;
  };
  using ThreadKey = std::pair<int, unsigned long long>;  // tid, start ticks
  struct CpuState {
    WatchedCpu totals;
    std::uint64_t cpu_run_ns = 0;  // /proc/schedstat's run time since the first reading
  };

  void count_interrupts(const InterruptSnapshot& now);
  void count_threads(const HostReader& host, WatchReading& reading);
  void count_cpu_time(const std::map<int, SchedTimes>& schedstat);
  void count_other_tasks();

  ApplicationSettings application_;
  std::vector<int> cpus_;  // sorted
  std::map<int, CpuState> states_;
  std::map<ThreadKey, ThreadState> threads_;
  std::optional<InterruptSnapshot> previous_interrupts_;
  std::map<int, SchedTimes> previous_schedstat_;
  std::optional<double> previous_seconds_;
  std::optional<double> previous_uptime_;
  std::vector<int> known_pids_;  // the processes the application's threads were last found in
  int readings_since_full_search_ = kReadingsPerFullSearch;
};

}  // namespace jitterd
