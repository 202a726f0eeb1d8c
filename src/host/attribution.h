// SPDX-License-Identifier: Apache-2.0
// Explains one window of one CPU's interruptions (gaps above the threshold) by the interrupt and
// softirq counts that CPU took in the same window. It is an estimate from counts, not a trace:
// the kernel counts events, not which gap each one caused, and stock kernels lack the
// osnoise/timerlat tracers that would tell. The rule:
//
// - Every hard-IRQ event (a numbered IRQ, or a named row such as LOC, RES, CAL, TLB, NMI) is a
//   potential interruption, and one event causes at most one interruption.
// - Softirqs normally run on the tail of a hard IRQ (or in ksoftirqd, which is a thread and
//   shows as preemption), so they add no interruptions of their own; their counts are reported
//   as activity coincident with the window, with no interruptions attributed.
// - The window's interruptions are shared among the hard-IRQ causes in proportion to their
//   events, by the largest remainder method so the shares are whole and sum exactly. With fewer
//   interruptions than events no cause can get more than its events; with more, each cause gets
//   all its events and the rest is `unexplained`: host preemption of a VM, SMIs, a task
//   preempting the sampler, or an interrupt from a row the kernel does not count.
// - Stolen time is shared the same way, in proportion to the interruptions given to each cause,
//   i.e. as if every interruption of the window lasted the window's mean.
//
// Events far above interruptions mean most events were shorter than the threshold, not that the
// attribution is wrong. Pure functions over plain values: safe from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "host/interrupt_counts.h"

namespace jitterd {

// The name of this estimate where a method is named (jitterd_attribution_method_info,
// jitterd_loop_attribution_method_info).
inline constexpr std::string_view window_deltas_method = "window_deltas";

// The cause categories, in the order Attribution::causes lists them. Interruptions go only to
// hard-IRQ events, so the softirq_* causes never get any; "timer" gathers both the timer
// interrupts and the TIMER/HRTIMER softirqs they raise.
inline constexpr std::array<std::string_view, 9> cause_names = {"timer",       "ipi_resched", "ipi_call",
                                                                "tlb",         "device_irq",  "other_irq",
                                                                "softirq_net", "softirq_rcu", "softirq_other"};

// What cause_of returns for rows that do not count interrupt arrivals of their own: x86 MCP
// (machine check polls, run from the timer), RTR (APIC ICR read retries), PMI (perf interrupts,
// delivered as NMIs and already counted in NMI), ERR/MIS/Err (global error counters). They are
// still listed among the top sources but are neither events nor causes.
inline constexpr std::string_view not_an_interrupt = "not_an_interrupt";

// The category of one counter row. `kind` is "irq" or "softirq" (SourceDelta::kind); `source`
// and `name` are InterruptRow's. Named rows are recognised by their description where the
// architecture numbers them (arm64 and riscv "IPI0: ... Rescheduling interrupts") and by their
// x86 code otherwise. Numbered IRQs are device_irq, except the per-CPU timers ("arch_timer" on
// arm64, "timer" for x86 IRQ 0), which are timer.
std::string_view cause_of(std::string_view kind, std::string_view source, std::string_view name);

struct CauseShare {
  std::string_view cause;           // an entry of cause_names
  std::uint64_t irq_events = 0;     // the summed hard-IRQ deltas of its sources in the window
  std::uint64_t softirqs = 0;       // the summed softirq deltas, coincident activity
  std::uint64_t interruptions = 0;  // estimated from irq_events, at most irq_events
  std::uint64_t stolen_ns = 0;      // estimated

  bool operator==(const CauseShare&) const = default;
};

struct Attribution {
  std::vector<CauseShare> causes;  // one per cause_names entry, in that order
  std::uint64_t unexplained = 0;   // interruptions beyond the hard-IRQ events
  std::uint64_t unexplained_stolen_ns = 0;
  std::uint64_t coincident_events = 0;  // hard-IRQ events of the window
  std::uint64_t softirq_events = 0;     // softirqs of the window, for context
  // Every source with a delta, largest first (ties: kind, then source), to name a spike's
  // culprits; callers show as many as they like.
  std::vector<SourceDelta> top_sources;
};

// Attributes a window's `interruptions` and their `stolen_ns` to the causes of `deltas` (one
// CPU's per_cpu_deltas for the same window). The causes' interruptions plus unexplained equal
// `interruptions`; their stolen_ns plus unexplained_stolen_ns equal `stolen_ns` (all of it
// unexplained when the window had no interruptions).
Attribution attribute_interruptions(std::uint64_t interruptions, std::uint64_t stolen_ns,
                                    const std::vector<SourceDelta>& deltas);

// The share of `cause` in `attribution`; all zero, with an empty cause, for a name not in
// cause_names.
CauseShare share_of(const Attribution& attribution, std::string_view cause);

// Below the kernel. A gap no kernel event explains is the firmware's or the hypervisor's: where
// the msr PMU counts a CPU's System Management Interrupts, each SMI of the window explains at most
// one of its unexplained gaps (`smi`), the longest first, since an SMI takes tens to hundreds of
// microseconds; where the guest accounts steal time (/proc/stat, in USER_HZ ticks), a window with
// steal in it gives its remaining unexplained gaps to `hypervisor`. Steal's resolution is a tick
// (10 ms at USER_HZ 100), so this is a window's judgement, not a gap's.
inline constexpr std::string_view smi_cause = "smi";
inline constexpr std::string_view hypervisor_cause = "hypervisor";
// What is left: a gap nothing below or in the kernel explains.
inline constexpr std::string_view unexplained_cause = "unexplained";

struct BelowKernel {
  std::uint64_t smi = 0, hypervisor = 0, unexplained = 0;           // gaps
  std::uint64_t smi_ns = 0, hypervisor_ns = 0, unexplained_ns = 0;  // their time
  bool operator==(const BelowKernel&) const = default;
};

// The unexplained gaps of a window, each by its length (`gaps_ns`), given to smi and hypervisor
// by the rule above: `smis` the window's SMI count, `steal` whether it had steal time.
BelowKernel split_below_kernel(std::vector<std::uint64_t> gaps_ns, std::uint64_t smis, bool steal);

// The same where only the count and the summed time of the unexplained gaps are known (window
// deltas): the time is shared in proportion to the gaps, as attribute_interruptions shares it.
BelowKernel split_below_kernel(std::uint64_t gaps, std::uint64_t gaps_ns, std::uint64_t smis, bool steal);

// One cause's part of a window estimated from counts.
struct EstimatedShare {
  std::string_view cause;  // an entry of cause_names, smi_cause, hypervisor_cause or unexplained_cause
  std::uint64_t interruptions = 0, stolen_ns = 0;
  bool operator==(const EstimatedShare&) const = default;
};

// The window-deltas estimate whole, as a sampled CPU's window and a loop's run both take it:
// `interruptions` and their `stolen_ns` shared among `deltas` (attribute_interruptions), then the
// unexplained rest given below the kernel (split_below_kernel: `smis` the SMIs that can have made
// a gap, `steal` whether the window had steal time). One share per cause_names entry in that
// order, then smi, hypervisor and unexplained; the shares sum to the inputs exactly.
std::vector<EstimatedShare> estimate_window(std::uint64_t interruptions, std::uint64_t stolen_ns,
                                            const std::vector<SourceDelta>& deltas, std::uint64_t smis,
                                            bool steal);

// Splits `total` into whole parts proportional to `weights` by the largest remainder method
// (ties go to the larger weight, then the earlier index); the parts sum to `total` exactly.
// All weights zero gives all parts zero, the total going nowhere. Exposed for tests.
std::vector<std::uint64_t> split_proportionally(std::uint64_t total, const std::vector<std::uint64_t>& weights);

}  // namespace jitterd
