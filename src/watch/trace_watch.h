// SPDX-License-Identifier: Apache-2.0
// The `tracepoints` engine: perf_event_open(2) records the tracepoints the BPF program attaches to
// (interrupt entries and exits, x86 APIC vectors, softirqs, NMIs, TLB flushes, sched_switch,
// timer:tick_stop) on each of its CPUs into a ring per CPU (host/trace_events.h), and
// watch/trace_pairing.h pairs them on the reader's CPU into the figures and records the `bpf`
// engine gives. The watch opens one over the watched CPUs (its `tracepoints` method), the
// attribution probe one over the sampled CPUs (records only, the samplers as the application), so
// a gap is named from paired records whichever engine made them. For kernels where the BPF program
// cannot load (no BTF, before 5.18) but tracefs and CAP_PERFMON are there.
//
// Its cost, and why `auto` never picks it: perf wakes a ring's reader with an irq_work on the
// traced CPU once per ring's worth of records written (the watermark is the whole ring, the fewest
// the kernel allows), so a watched CPU takes one interrupt of jitterd's own per
// kTraceWatchRingBytes of records: about one per 60,000 interruptions it records. Each is counted
// (tracer_wakeups) and exported, never hidden. The IPIs' senders (ipi:ipi_send_*, which fire on
// the sending CPU) are the bpf method's only. Used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"
#include "host/trace_events.h"
#include "watch/bpf_watch.h"
#include "watch/kernel_watch.h"
#include "watch/trace_pairing.h"

namespace jitterd {

// Each watched CPU's perf ring: 4 MiB, about 60,000 records.
inline constexpr std::size_t kTraceWatchRingBytes = std::size_t{4} << 20;

// The tracepoints the method records (under <tracefs>/events), with what each does to the pairing.
struct WatchTracepoint {
  TracepointSpec spec;
  PairingTracepoint pairing;
};
const std::vector<WatchTracepoint>& watch_tracepoints();
// Their specs alone, in that order (what TraceEventReader opens).
std::span<const TracepointSpec> watch_tracepoint_specs();

class TraceWatch : public KernelWatch {
 public:
  struct Options {
    std::vector<int> cpus;                       // the watched (or sampled) CPUs
    std::uint64_t outlier_threshold_ns = 10000;  // UINT64_MAX: records only (want_records), no outliers
    int jitterd_tgid = 0;
    std::size_t ring_bytes = kTraceWatchRingBytes;  // per CPU, a power of two of pages
  };
  // Opens the events; nullptr and `why_not` (one line: tracefs, the capability, the paranoid
  // level) when it cannot.
  static std::unique_ptr<TraceWatch> open(const HostReader& host, const Options& options, std::string& why_not);

  std::string_view method() const override { return "tracepoints"; }
  void set_application(const std::vector<int>& tids) override;
  PairedReading read() override;
  const std::vector<std::string>& missing_tracepoints() const override { return missing_; }
  std::size_t application_untracked() const override { return 0; }
  const std::vector<int>& cpus() const override { return options_.cpus; }
  void want_records(int cpu, std::uint64_t threshold_ns) override { pairing_.want_records(cpu, threshold_ns); }
  // Drains the rings first, so the records reach up to now (the outliers wait for the next read()).
  PairedRecords take_records(int cpu) override;
  // Per watched CPU, the irq_work interrupts perf's wakeups of the reader cost it so far.
  std::map<int, std::uint64_t> tracer_wakeups() const;

 private:
  TraceWatch(const HostReader& host, Options options);
  // Every record written since the last drain, into the pairing.
  void drain();
  const HostReader& host_;
  Options options_;
  TraceEventReader reader_;
  InterruptionPairing pairing_;
  std::vector<PairingTracepoint> roles_;  // by the reader's tracepoint index
  std::vector<std::string> missing_;
  std::vector<std::uint64_t> lost_seen_;  // by ring, what the pairing was told
};

}  // namespace jitterd
