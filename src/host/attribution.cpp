// SPDX-License-Identifier: Apache-2.0
#include "host/attribution.h"
#include "host/softirqs.h"
#include "host/text.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace jitterd {
namespace {

// Products of a count and a weight can pass 2^64; the quotient cannot exceed the count.
__extension__ typedef unsigned __int128 wide;

struct NamedRow {
  std::string_view source;
  std::string_view cause;
};

// x86 arch_show_interrupts() codes. Architectures that number their IPIs ("IPI0") are matched
// by description in by_description() instead.
constexpr NamedRow x86_rows[] = {
    {"LOC", "timer"},          {"RES", "ipi_resched"},    {"CAL", "ipi_call"}, {"TLB", "tlb"},
    {"MCP", not_an_interrupt},  // polls from the timer, not an interrupt
    {"RTR", not_an_interrupt},  // retries of an APIC register read
    {"PMI", not_an_interrupt},  // perf interrupts arrive as NMIs, already counted in NMI
    {"ERR", not_an_interrupt},  // global error counters, one number for all CPUs
    {"MIS", not_an_interrupt}, {"Err", not_an_interrupt},  // arm64's
};

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string_view by_description(std::string_view name) {
  if (name.substr(0, 12) == "Rescheduling") return "ipi_resched";
  if (contains(name, "unction call")) return "ipi_call";  // also arm's "Single function call"
  if (contains(name, "TLB shootdown")) return "tlb";
  if (name == "Local timer interrupts" || name == "Timer broadcast interrupts") return "timer";
  return "other_irq";
}

std::size_t cause_index(std::string_view cause) {
  return static_cast<std::size_t>(std::find(cause_names.begin(), cause_names.end(), cause) - cause_names.begin());
}

}  // namespace

std::string_view cause_of(std::string_view kind, std::string_view source, std::string_view name) {
  if (kind == "softirq") {
#define JD_SOFTIRQ_CAUSE(vector, cause) \
  if (source == #vector) return #cause;
    JD_SOFTIRQS(JD_SOFTIRQ_CAUSE)
#undef JD_SOFTIRQ_CAUSE
    return "softirq_other";
  }
  if (all_digits(source)) {
    // The per-CPU tick on arm64 and riscv is a numbered IRQ; x86 IRQ 0 is the legacy timer.
    if (name == "arch_timer" || name == "riscv-timer" || name == "timer") return "timer";
    return "device_irq";
  }
  for (const NamedRow& row : x86_rows)
    if (row.source == source) return row.cause;
  return by_description(name);
}

std::vector<std::uint64_t> split_proportionally(std::uint64_t total, const std::vector<std::uint64_t>& weights) {
  std::vector<std::uint64_t> parts(weights.size(), 0);
  const wide sum = std::accumulate(weights.begin(), weights.end(), wide{0});
  if (sum == 0) return parts;
  std::vector<wide> remainders(weights.size());
  std::uint64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const wide product = wide{total} * weights[i];
    parts[i] = static_cast<std::uint64_t>(product / sum);
    remainders[i] = product % sum;
    given += parts[i];
  }
  // Fewer than weights.size() units are left, one for each of the largest remainders.
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (remainders[a] != remainders[b]) return remainders[a] > remainders[b];
    if (weights[a] != weights[b]) return weights[a] > weights[b];
    return a < b;
  });
  for (std::size_t k = 0; given < total; ++k, ++given) ++parts[order[k]];
  return parts;
}

Attribution attribute_interruptions(std::uint64_t interruptions, std::uint64_t stolen_ns,
                                    const std::vector<SourceDelta>& deltas) {
  Attribution out;
  for (const std::string_view cause : cause_names) out.causes.push_back({cause, 0, 0, 0, 0});
  for (const SourceDelta& d : deltas) {
    const std::size_t index = cause_index(cause_of(d.kind, d.source, d.name));
    if (index == cause_names.size()) continue;  // not_an_interrupt
    if (d.kind == "softirq") {
      out.causes[index].softirqs += d.delta;
      out.softirq_events += d.delta;
    } else {
      out.causes[index].irq_events += d.delta;
      out.coincident_events += d.delta;
    }
  }

  std::vector<std::uint64_t> events;
  for (const CauseShare& share : out.causes) events.push_back(share.irq_events);
  if (interruptions >= out.coincident_events) {
    // Every event may have caused one interruption; what is left has no counted cause.
    for (CauseShare& share : out.causes) share.interruptions = share.irq_events;
    out.unexplained = interruptions - out.coincident_events;
  } else {
    // A proportional share of fewer interruptions than events stays below each cause's events.
    const std::vector<std::uint64_t> given = split_proportionally(interruptions, events);
    for (std::size_t i = 0; i < given.size(); ++i) out.causes[i].interruptions = given[i];
  }

  std::vector<std::uint64_t> weights;
  for (const CauseShare& share : out.causes) weights.push_back(share.interruptions);
  weights.push_back(out.unexplained);
  if (interruptions == 0) {
    out.unexplained_stolen_ns = stolen_ns;
  } else {
    const std::vector<std::uint64_t> stolen = split_proportionally(stolen_ns, weights);
    for (std::size_t i = 0; i < out.causes.size(); ++i) out.causes[i].stolen_ns = stolen[i];
    out.unexplained_stolen_ns = stolen.back();
  }

  out.top_sources = deltas;
  std::sort(out.top_sources.begin(), out.top_sources.end(), [](const SourceDelta& a, const SourceDelta& b) {
    if (a.delta != b.delta) return a.delta > b.delta;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.source < b.source;
  });
  return out;
}

BelowKernel split_below_kernel(std::vector<std::uint64_t> gaps_ns, std::uint64_t smis, bool steal) {
  std::sort(gaps_ns.begin(), gaps_ns.end(), std::greater<>());
  BelowKernel out;
  for (std::uint64_t ns : gaps_ns) {
    if (out.smi < smis) {
      ++out.smi;
      out.smi_ns += ns;
    } else if (steal) {
      ++out.hypervisor;
      out.hypervisor_ns += ns;
    } else {
      ++out.unexplained;
      out.unexplained_ns += ns;
    }
  }
  return out;
}

BelowKernel split_below_kernel(std::uint64_t gaps, std::uint64_t gaps_ns, std::uint64_t smis, bool steal) {
  BelowKernel out;
  out.smi = std::min(gaps, smis);
  out.hypervisor = steal ? gaps - out.smi : 0;
  out.unexplained = gaps - out.smi - out.hypervisor;
  const std::vector<std::uint64_t> ns = split_proportionally(gaps_ns, {out.smi, out.hypervisor, out.unexplained});
  out.smi_ns = ns[0];
  out.hypervisor_ns = ns[1];
  out.unexplained_ns = gaps == 0 ? gaps_ns : ns[2];
  return out;
}

std::vector<EstimatedShare> estimate_window(std::uint64_t interruptions, std::uint64_t stolen_ns,
                                            const std::vector<SourceDelta>& deltas, std::uint64_t smis,
                                            bool steal) {
  const Attribution a = attribute_interruptions(interruptions, stolen_ns, deltas);
  std::vector<EstimatedShare> out;
  for (const CauseShare& share : a.causes) out.push_back({share.cause, share.interruptions, share.stolen_ns});
  const BelowKernel below = split_below_kernel(a.unexplained, a.unexplained_stolen_ns, smis, steal);
  out.push_back({smi_cause, below.smi, below.smi_ns});
  out.push_back({hypervisor_cause, below.hypervisor, below.hypervisor_ns});
  out.push_back({unexplained_cause, below.unexplained, below.unexplained_ns});
  return out;
}

CauseShare share_of(const Attribution& attribution, std::string_view cause) {
  for (const CauseShare& share : attribution.causes)
    if (share.cause == cause) return share;
  return CauseShare{};
}

}  // namespace jitterd
