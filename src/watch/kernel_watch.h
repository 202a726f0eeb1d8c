// SPDX-License-Identifier: Apache-2.0
// What the watch probe reads a watched CPU's interruptions through, whichever engine pairs them:
// the BPF program in the kernel (watch/bpf_watch.h, method `bpf`) or perf's records of the same
// tracepoints paired on the reader's CPU (watch/trace_watch.h, method `tracepoints`). Both give
// the one reading type defined here (PairedReading: per source, in the BPF program's enum
// jd_source order, named by watch/watch_sources.cpp), so everything downstream (metrics, status
// page, baselines) is shared, and the loops probe takes its records from the engine the watch
// opened (WatchEngineSlot). Plain data; an engine is used by one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitterd {

// The sources the program books time to, in its enum jd_source order, named as the kernel does:
// "local_timer", "reschedule", "call_function", ..., "nmi", "device_irq", "softirq_HI", ...,
// "preempt_jitterd", "preempt_kernel_percpu", "preempt_application", "preempt_stray".
std::string_view watch_source_name(std::size_t source);
std::size_t watch_source_count();
// The source's cause in attribution's vocabulary (host/attribution.h cause_names), "preempted"
// for the preemption sources.
std::string_view watch_source_cause(std::size_t source);
// The preempting task's class for a preemption source, in host/task_classes.h's words
// ("jitterd", "kernel_percpu", "application", "stray"), "" for the others.
std::string_view watch_source_task_class(std::size_t source);

inline constexpr std::size_t kSourceBuckets = 32;  // bucket b: [2^b, 2^(b+1)) ns; the last open-ended

struct SourceFigures {
  std::uint64_t count = 0, ns = 0, max_ns = 0;
  std::array<std::uint64_t, kSourceBuckets> buckets{};
  bool operator==(const SourceFigures&) const = default;
};

struct DeviceIrqFigures {
  std::uint64_t count = 0, ns = 0, max_ns = 0;
  bool operator==(const DeviceIrqFigures&) const = default;
};

// One watched CPU, cumulative since the engine opened.
struct PairedCpuFigures {
  int cpu = 0;
  std::vector<SourceFigures> sources;                 // indexed by source
  std::map<int, DeviceIrqFigures> device_irqs;        // by IRQ number
  std::array<std::uint64_t, 8> tick_stop_failures{};  // by dependency bit (tick_dependency_name)
  std::uint64_t tick_stop_failures_unknown = 0;
  std::uint64_t outliers_lost = 0;    // the ring was full
  std::uint64_t unmatched_exits = 0;  // an exit with no entry: the program attached mid-interrupt
  std::uint64_t too_deep = 0;         // nesting beyond the program's stack
  // IPIs sent to this CPU by the sending task's name (ipi:ipi_send_cpu and ipi_send_cpumask),
  // cumulative: at most kMaxIpiSenderNames names (watch/ipi_senders.h), the IPIs of further names
  // in ipi_senders_other.
  std::map<std::string, std::uint64_t> ipi_senders;
  std::uint64_t ipi_senders_other = 0;
};

// timer:tick_stop's dependency bit b: "POSIX_TIMER", "PERF_EVENTS", "SCHED", "CLOCK_UNSTABLE",
// "RCU", "RCU_EXP", then "bit6", "bit7".
std::string_view tick_dependency_name(std::size_t bit);

// One handler's cost on the CPUs of one role, cumulative from the load: every run counts; the time
// is measured on the watched and sampled CPUs only, where it does its work (on the others it reads
// no clock: it looks its CPU's role up and returns), and there on one run in 16, each timed run's
// time counted 16 times (an estimate of the total: JD_COST_SAMPLE in watch/bpf/watch_bpf.h).
struct BpfProgramCost {
  std::uint64_t runs = 0;
  std::uint64_t ns = 0;
  bool operator==(const BpfProgramCost&) const = default;
};
// By role: the watched CPUs, the sampled CPUs, every other CPU.
struct BpfProgramCosts {
  BpfProgramCost watched, sampled, other;
  bool operator==(const BpfProgramCosts&) const = default;
};

struct PairedOutlier {
  std::uint64_t start_ns = 0;  // CLOCK_MONOTONIC: its entry, or the switch away from the thread
  std::uint64_t end_ns = 0;    // CLOCK_MONOTONIC
  std::uint64_t duration_ns = 0;
  int cpu = 0;
  std::size_t source = 0;
  std::uint32_t id = 0;  // IRQ number, softirq vector, or the preempting task's pid
  std::uint32_t tgid = 0;
  bool kernel_thread = false, per_cpu = false, application = false;
  std::string name;  // the IRQ's handler, or the preempting task's name (as the kernel has it)
};

struct PairedReading {
  std::vector<PairedCpuFigures> cpus;       // the watched CPUs, in order
  std::vector<PairedOutlier> outliers;      // drained from the ring since the previous reading, oldest first
  std::uint64_t outliers_dropped = 0;       // drained but beyond kMaxOutliersPerReading, not kept
  std::uint64_t ipi_senders_untracked = 0;  // IPIs to watched CPUs whose sender the full map could not take
  std::vector<BpfProgramCosts> programs;    // by program (bpf_program_name)
};

// A bound on one reading's memory, about 6 MB (what the bpf ring holds between two readings for 16
// watched CPUs, 256 KiB each at 64 B a record). Beyond it an outlier is counted as dropped, and the tail counts of that
// reading are unknown (a cap of 1,024 made them unknown at 1,171 injected preemptions a second).
inline constexpr std::size_t kMaxOutliersPerReading = 1u << 16;

// A CPU's records since they were last taken (KernelWatch::take_records), oldest first.
struct PairedRecords {
  std::vector<PairedOutlier> events;
  std::uint64_t dropped = 0;  // beyond kMaxSampledEventsPerCpu between two takes: the oldest went
  std::uint64_t lost = 0;     // cumulative, this CPU's: the kernel's ring was full (tracepoints: perf samples)
};

// Held per CPU between two takes (the attribution probe's interval, 10 s by default): a
// CPU whose tick runs at 1000 Hz fills a tenth of it.
inline constexpr std::size_t kMaxSampledEventsPerCpu = 1u << 17;

class KernelWatch {
 public:
  virtual ~KernelWatch() = default;
  // "bpf" or "tracepoints": the watch method this engine is.
  virtual std::string_view method() const = 0;
  // The application's threads now: their preemptions on the watched CPUs count.
  virtual void set_application(const std::vector<int>& tids) = 0;
  // The watched CPUs' figures (cumulative) and their outliers since the last read.
  virtual PairedReading read() = 0;
  // The optional tracepoints this kernel lacks ("irq_vectors:thermal_apic_entry", ...).
  virtual const std::vector<std::string>& missing_tracepoints() const = 0;
  // Of the threads set_application was last given, those the engine could not track.
  virtual std::size_t application_untracked() const = 0;
  virtual const std::vector<int>& cpus() const = 0;
  // Keep a watched CPU's interruptions down to `threshold_ns` (own time) as records for
  // take_records (a loop runs there and its gaps are matched with them), besides the outliers
  // read() gives, which stay at the watch's own threshold.
  virtual void want_records(int cpu, std::uint64_t threshold_ns) = 0;
  // The records of `cpu` since the last take, for a CPU want_records asked for (empty for another).
  virtual PairedRecords take_records(int cpu) = 0;
};

// The watch probe's engine, published in the probe context (ProbeContext::watch_engine) so the
// loops probe takes its loops' records from the engine the watch opened, whichever it is: the
// watch publishes what it opens and clears it when it closes it; the loops probe asks each run and
// holds what it got for that run. The two use the engine one at a time (the readers' lane); the
// slot itself may be read and set from any thread.
class WatchEngineSlot {
 public:
  void publish(std::shared_ptr<KernelWatch> engine) {
    std::lock_guard lock(mutex_);
    engine_ = std::move(engine);
  }
  std::shared_ptr<KernelWatch> get() const {
    std::lock_guard lock(mutex_);
    return engine_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<KernelWatch> engine_;
};

}  // namespace jitterd
