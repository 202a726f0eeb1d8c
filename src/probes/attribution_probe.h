// SPDX-License-Identifier: Apache-2.0
// Attribution probe: why the sampled CPUs were interrupted. Every interval (one attribution
// window) it reads /proc/interrupts and /proc/softirqs and each sampler's interruption counters,
// and per sampled CPU exports what fired there (counters by cause category; by source for at
// most `source_detail` sources) and a breakdown of the window's interruptions by most likely
// cause, as counters. Three methods, exported as jitterd_attribution_method_info:
//   bpf: where the context's BPF engine loads (watch/shared_bpf_watch.h, the same program that
//     watches the application's CPUs), each interruption the sampler kept is matched to the
//     engine's records of that CPU (every interruption, softirq or preemption of the sampler down
//     to a quarter of its threshold, with its start, end and own time): its cause is the record
//     that took the most of it, named as the watch names a watched CPU's interruptions;
//   tracepoints: where bpf is off or cannot load and the kernel lets jitterd open the tracepoints
//     the program attaches to, the watch's tracepoints engine (watch/trace_watch.h) opened over
//     the sampled CPUs pairs their entries and exits into the same records on the reader's CPU,
//     matched the same way;
//     both methods name an interruption's taker through one matcher (probes/interruption_takers.h)
//     and show the most named takers per CPU in the window's table of what took the interruptions;
//   window_deltas: otherwise, the window's interruptions are shared out among its interrupt
//     counts (host/attribution.h), an estimate: no cause gets more interruptions than it had
//     events, and the rest stays unexplained.
// Used by one thread at a time (the probe scheduler's); keeps the previous window's counts.
#pragma once

#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "host/attribution.h"
#include "host/interrupt_counts.h"
#include "measure/counter_calibration.h"
#include "probes/interruption_takers.h"
#include "probes/probe.h"
#include "watch/trace_watch.h"

namespace jitterd {

// The probe's settings, as the `probes.attribution` section of the configuration sets them.
struct AttributionSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::seconds(10)};
  // Off by default: the shipped systemd unit does not permit tracing (systemd/jitterd-tracepoints.conf).
  bool tracepoints = false;
  // 0: what fired on a sampled CPU is counted by cause category only. N: also by source
  // (jitterd_attribution_source_events_total) for the N sources of each CPU with the most events
  // since start. The configuration allows 0..64.
  std::size_t source_detail = 0;
  // The BPF engine (watch/shared_bpf_watch.h) where it loads: the first choice, as for the watch.
  bool bpf = true;
  bool operator==(const AttributionSettings&) const = default;
};

// A record within this much of an interruption's start or end counts as overlapping it: the
// counter-to-clock conversion is exact to the pairing's bracket (tens of ns); the rest is margin
// for the time the kernel takes between entering and recording the event.
inline constexpr std::uint64_t kTraceSlackNs = 2000;

// The tracepoints engine's perf ring per sampled CPU: a noisy CPU's ten seconds (one attribution
// interval) of interrupt entries and exits, ticks and switches fit.
inline constexpr std::size_t kSampledTraceRingBytes = std::size_t{2} << 20;

class AttributionProbe : public SettingsProbe<AttributionSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "attribution"; }
  ProbeResult run(ProbeContext& context) override;

 private:
  struct CpuWindow {  // a sampler's counters at the previous run, and its ring's next sequence
    std::uint64_t interruptions = 0, interrupted_ticks = 0, next_sequence = 0;
    std::optional<std::uint64_t> smis, steal_ticks;  // below the kernel, where counted
    std::uint64_t smis_in_spans = 0;                 // of the SMIs, those while the sampler spun
    std::optional<CycleCounts> cycles;               // APERF/MPERF, where counted
  };
  struct CpuTotals {                                     // accumulated since the probe started
    std::map<std::string, std::uint64_t> interruptions;  // by cause
    std::map<std::string, double> stolen_seconds;        // by cause
    std::map<std::pair<std::string, std::string>, std::pair<std::string, std::uint64_t>>
        events;  // (kind, source) -> (name, count)
    std::map<std::pair<std::string, std::string>, std::uint64_t> events_by_cause;  // (kind, cause) -> count
    std::uint64_t coincident = 0;
    std::map<std::string, std::uint64_t> preempted_by_class;  // bpf: the preempting task's class
    std::optional<std::uint64_t> smis;                        // the sampler's SMI count (msr PMU)
    std::optional<std::uint64_t> steal_ticks;                 // /proc/stat steal, USER_HZ ticks
    std::optional<CycleCounts> cycles;                        // the sampler's APERF/MPERF
    std::optional<double> frequency;                          // over the last window, of the base
  };
  // A sampled CPU's counters and ring as read at the start of a run: the window they close (the
  // sampler's last SMI and APERF/MPERF readings; the CPU's steal added from /proc/stat), and the
  // ring's entries since the last window in `fresh`.
  struct SamplerCounts {
    int cpu;
    CpuWindow now;
    std::vector<Interruption> fresh;
  };
  void open_methods(const ProbeContext& context);
  void track_samplers(const ProbeContext& context, const std::vector<int>& sampled);
  static void count_events(CpuTotals& totals, const std::vector<SourceDelta>& deltas);
  void open_tracepoints(const ProbeContext& context);
  // A reading's window by cause, its interruptions named one by one from the engine's records
  // (those no record explains settled below the kernel, those its ring overwrote not_kept; the
  // most named takers in `who`), or estimated from the window's interrupt counts (`deltas`).
  std::map<std::string, std::uint64_t> named_causes(const SamplerCounts& r, const CpuWindow& before,
                                                    const CpuWindow& now, const TickToClock& to_clock,
                                                    ProbeTable& who);
  std::map<std::string, std::uint64_t> estimated_causes(const SamplerCounts& r, const CpuWindow& before,
                                                        const CpuWindow& now,
                                                        const std::vector<SourceDelta>& deltas, double hertz);
  // `cpu`'s records for this run's match: those carried and those the engine has, taken now (its
  // losses counted).
  std::vector<PairedOutlier>& records_of(int cpu);
  // The window's interruptions of `cpu` by their takers: by cause (returned), their time in the
  // totals, the unexplained ones' durations for settle_unexplained, the most named takers in `who`.
  std::map<std::string, std::uint64_t> book(int cpu, const std::vector<Interruption>& fresh,
                                            const std::vector<std::optional<Taker>>& takers, double hertz,
                                            ProbeTable& who);
  std::vector<SamplerCounts> read_samplers(const ProbeContext& context, const std::vector<int>& sampled,
                                           std::vector<std::string>& notes) const;
  std::map<int, std::vector<SourceDelta>> window_deltas(const std::vector<SamplerCounts>& readings,
                                                        const InterruptSnapshot& snapshot) const;
  void export_totals(ProbeResult& result) const;
  // The window's counts below the kernel into the totals, and its frequency from `before`'s.
  static void keep_below_kernel(CpuTotals& totals, const CpuWindow& before, const CpuWindow& now);
  // What can explain a window's gaps below the kernel: the SMIs that came while the sampler spun,
  // and whether the CPU had steal time.
  static std::pair<std::uint64_t, bool> below_kernel_window(const CpuWindow& before, const CpuWindow& now);
  // Gives the window's gaps no record explains (unexplained_ns_) to smi and hypervisor by
  // host/attribution.h's rule, into `by_cause` and the totals.
  void settle_unexplained(CpuTotals& totals, const CpuWindow& before, const CpuWindow& now,
                          std::map<std::string, std::uint64_t>& by_cause);
  // The notes and the state line of what is counted below the kernel, once the samplers are known.
  void note_below_kernel(const ProbeContext& context, ProbeResult& result) const;

  std::optional<InterruptSnapshot> previous_;
  std::optional<ClockTickPair> previous_pair_;
  std::map<int, CpuWindow> windows_;
  std::map<int, CpuTotals> totals_;
  std::unique_ptr<TraceWatch> trace_;          // the tracepoints engine over the sampled CPUs
  std::shared_ptr<SharedBpfWatch> bpf_owner_;  // the context's engine, kept alive while used
  BpfWatch* bpf_ = nullptr;
  KernelWatch* engine_ = nullptr;           // bpf_ or trace_: what pairs the sampled CPUs' interruptions
  std::uint64_t records_lost_ = 0;          // records the engine could not keep for the sampled CPUs (cumulative)
  std::map<int, std::uint64_t> lost_seen_;  // each CPU's kernel-side loss counter as last read
  CarriedRecords carried_;                  // records of interruptions not read yet
  std::string method_ = std::string(window_deltas_method);
  std::string method_reason_;
  bool tried_methods_ = false;
  bool fell_back_ = false;                     // tracepoints asked for, window deltas in use
  std::vector<std::uint64_t> unexplained_ns_;  // the current CPU's unexplained gaps (an engine's methods)
  double user_hz_ = static_cast<double>(::sysconf(_SC_CLK_TCK));  // /proc/stat's tick (USER_HZ)
};

}  // namespace jitterd
