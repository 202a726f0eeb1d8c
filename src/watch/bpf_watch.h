// SPDX-License-Identifier: Apache-2.0
// The watch's BPF engine: loads watch.bpf.c (built into a libbpf skeleton at build time), tells
// it which CPUs are watched and which threads are the application's, and reads what it counted.
// The program pairs each interruption's entry and exit in the kernel, on the CPU it happened on,
// and keeps per-CPU figures by source (a vector, a device IRQ, a softirq, a class of preempting
// task): count, time (nested interruptions counted once, as the innermost's), the longest and a
// log2 histogram; interruptions at or above the outlier threshold also go to a ring the reader
// drains each window. Reading copies the per-CPU maps on the reader's CPU: no IPI, no perf
// counter, no MSR, no wakeup on a watched CPU.
//
// The same program covers the sampled CPUs for the attribution probe, so the gaps of a sampled CPU
// and the interruptions of a watched one are named by one engine in one vocabulary: there the
// sampler's preemptions count, and the outliers (down to a quarter of the sampler's threshold)
// wait in a bounded queue per CPU until the attribution probe takes them (take_records).
//
// Loading needs CAP_BPF and CAP_PERFMON (or root) and a kernel with BTF; open() says why it
// could not, so the watch falls back to the counts. Used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/msr_pmu.h"
#include "watch/bpf_smi.h"
#include "watch/bpf_timers.h"
#include "watch/ipi_senders.h"
#include "watch/kernel_watch.h"

namespace jitterd {

// The program's handlers, named as its BPF programs are ("irq_entry", ..., "sched_switch").
std::size_t bpf_program_count();
std::string_view bpf_program_name(std::size_t program);
// Whether a handler times its runs where its CPU has a role: all but the IPI senders, which run on
// the sending CPU and read no clock.
bool bpf_program_timed(std::size_t program);

// The outlier ring's size for `watched` watched and `sampled` sampled CPUs: 256 KiB per watched
// CPU (read every second) and 2 MiB per sampled CPU (read every attribution interval: ten
// seconds of a 1000 Hz tick is 640 KB of records), a power of two between 256 KiB and 64 MiB.
std::size_t bpf_ring_bytes(std::size_t watched, std::size_t sampled);
class BpfWatch : public KernelWatch {
 public:
  struct SampledCpu {
    int cpu = 0;
    std::uint64_t outlier_threshold_ns = 0;
  };
  struct Options {
    std::vector<int> cpus;  // the watched CPUs
    std::uint64_t outlier_threshold_ns = 10000;
    int jitterd_tgid = 0;             // preemptions by these threads are jitterd's own
    std::vector<SampledCpu> sampled;  // the sampled CPUs covered for attribution
    // The msr PMU's events: where given, each watched CPU reads its own SMI counter, and APERF
    // and MPERF, in its local timer interrupt (bpf/watch_smi.bpf.h).
    MsrPmu msr_pmu;
  };
  // Loads and attaches the program; nullptr and `why_not` (one line) when it cannot.
  static std::unique_ptr<BpfWatch> open(const Options& options, std::string& why_not);
  ~BpfWatch() override;
  BpfWatch(const BpfWatch&) = delete;
  BpfWatch& operator=(const BpfWatch&) = delete;

  // The application's threads now; on the watched CPUs the program counts preemptions of these.
  std::string_view method() const override { return "bpf"; }
  void set_application(const std::vector<int>& tids) override;
  // The samplers' threads now; on the sampled CPUs the program counts preemptions of these.
  void set_sampler_threads(const std::vector<int>& tids);
  // The watched CPUs' figures, and their outliers since the last read.
  PairedReading read() override;
  // `cpu`'s records since the last take: a sampled CPU's always, a watched CPU's once
  // want_records asked for them (empty for any other CPU).
  PairedRecords take_records(int cpu) override;
  // Keep a watched CPU's records down to `threshold_ns` (own time) for take_records too (a loop
  // probe's loop runs there); the kernel's threshold for that CPU becomes the lower of this and the
  // watch's, and read() still gives the watch only those at or above its own.
  void want_records(int cpu, std::uint64_t threshold_ns) override;
  // The watched CPUs' SMI counters as their own timer interrupts last read them (none where the
  // msr PMU has no smi event or the kernel refused the counters: smi_why_not() says why).
  std::map<int, SmiReading> read_smis();
  std::string smi_why_not() const;
  // The watched CPUs' APERF and MPERF as their own timer interrupts last read them (none where the
  // msr PMU lacks either or the kernel refused them: frequency_why_not() says why).
  std::map<int, CycleCounts> read_cycles();
  std::string frequency_why_not() const;
  // The timers started on the watched CPUs since the program loaded, by function (bpf/watch_timers.bpf.h).
  TimerStartsReading read_timer_starts();
  // The optional tracepoints this kernel lacks ("irq_vectors:thermal_apic_entry", ...).
  const std::vector<std::string>& missing_tracepoints() const override { return missing_; }
  const std::vector<int>& cpus() const override { return options_.cpus; }
  const Options& options() const { return options_; }
  // Of the threads set_application was last given, those the program's map could not take
  // (their preemptions are not counted): the map holds pid_max threads, so only a failed
  // allocation leaves one out.
  std::size_t application_untracked() const override { return application_untracked_; }

 private:
  struct Loaded;
  explicit BpfWatch(Options options);
  std::unique_ptr<Loaded> loaded_;
  Options options_;
  std::vector<std::string> missing_;
  void track(std::vector<int> application, std::vector<int> samplers);
  void drain();
  void age_ipi_senders(PairedReading& reading);
  IpiSenderTotals ipi_senders_;
  std::vector<int> application_, samplers_;  // as last set, sorted
  std::vector<int> tracked_;                 // sorted, as in the program's map
  std::size_t application_untracked_ = 0;
};

}  // namespace jitterd
