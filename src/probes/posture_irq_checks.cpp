// SPDX-License-Identifier: Apache-2.0
#include "probes/posture_checklist.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>

#include "host/cpu_list.h"
#include "host/text.h"
#include "probes/posture_fixes.h"

namespace jitterd {
namespace {

// "irq 45 a, irq 46 b, irq 47 c and 2 more"; `suffix` follows each shown IRQ.
template <typename Suffix>
std::string irq_list(const std::vector<const IrqAffinity*>& irqs, Suffix suffix) {
  return first_three(irqs, [&](const IrqAffinity& irq) { return irq_label(irq) + suffix(irq); });
}

// The device IRQs of one sampled CPU, sorted by what they did and what they may do.
struct CpuIrqs {
  std::vector<const IrqAffinity*> fired;     // not exempt, fired on the CPU over the interval
  std::vector<const IrqAffinity*> may_fire;  // not exempt, not managed, allowed there, quiet or unmeasured
  std::vector<const IrqAffinity*> managed;   // not exempt, managed, allowed there, quiet or unmeasured
  std::vector<const IrqAffinity*> exempt;    // matched expect.irq_exempt
};

std::uint64_t fired_count(const std::optional<IrqFiring>& fired, int irq, int cpu) {
  if (!fired) return 0;
  const auto by_irq = fired->counts.find(irq);
  if (by_irq == fired->counts.end()) return 0;
  const auto count = by_irq->second.find(cpu);
  return count == by_irq->second.end() ? 0 : count->second;
}

CpuIrqs classify_irqs(const Posture& p, int cpu, const PostureExpectations& expect,
                      const std::optional<IrqFiring>& fired) {
  CpuIrqs out;
  // p.irqs and fired->counts are both by IRQ number: walked side by side, not looked up per IRQ
  // (this runs for every sampled CPU, a thousand IRQs each on a large machine).
  using FiredIt = std::map<int, std::map<int, std::uint64_t>>::const_iterator;
  FiredIt next_fired = fired ? fired->counts.begin() : FiredIt{};
  for (const IrqAffinity& irq : p.irqs) {
    if (irq.name.empty()) continue;  // no action: nothing to run
    const bool allowed = has_cpu(irq.cpus, cpu);
    bool did_fire = false;
    if (fired) {
      while (next_fired != fired->counts.end() && next_fired->first < irq.irq) ++next_fired;
      if (next_fired != fired->counts.end() && next_fired->first == irq.irq) {
        const auto count = next_fired->second.find(cpu);
        did_fire = count != next_fired->second.end() && count->second > 0;
      } else {
        did_fire = fired_count(fired, irq.irq, cpu) > 0;  // p.irqs out of order: look it up
      }
    }
    if (!allowed && !did_fire) continue;
    if (irq_name_matches(irq.name, expect.irq_exempt))
      out.exempt.push_back(&irq);
    else if (did_fire)
      out.fired.push_back(&irq);
    else if (irq.management != IrqManagement::unmanaged)
      out.managed.push_back(&irq);
    else
      out.may_fire.push_back(&irq);
  }
  return out;
}

}  // namespace

// May fire (affinity) and did fire (counts over the interval). Managed IRQs quiet over the interval
// pass and are named as such; exempt ones are named and not judged.
void check_device_irqs(Checklist& list, const Posture& p, const PostureExpectations& expect,
                       const std::optional<IrqFiring>& fired) {
  const bool expected = expect.no_device_irqs;
  const bool judge_affinity = !expect.device_irqs_fired_only;
  const CheckStatus bad = expected ? CheckStatus::fail : CheckStatus::warn;
  if (p.irqs.empty()) {
    list.add("device_irqs", std::nullopt, bad, "cannot check: no IRQ affinities could be read", expected,
             irq_affinities_unreadable_fix());
    return;
  }
  const std::string interval = fired ? " over the last " + decimal_text(fired->seconds, 1) + " s" : "";
  if (!judge_affinity && !fired) {
    list.add("device_irqs", std::nullopt, CheckStatus::warn,
             "cannot check yet: with no_device_irqs: fired, firing is judged between two readings of "
             "/proc/interrupts (the next run)",
             false, irqs_not_yet_measured_fix());
  }
  bool any = false;
  std::vector<std::string> managed_notes, exempt_notes;
  for (int cpu : list.sampled()) {
    const CpuIrqs irqs = classify_irqs(p, cpu, expect, fired);
    const std::string on = " (cpu " + std::to_string(cpu) + ")";
    if (!irqs.managed.empty())
      managed_notes.push_back(irq_list(irqs.managed, [&](const IrqAffinity&) { return on; }));
    if (!irqs.exempt.empty())
      exempt_notes.push_back(irq_list(irqs.exempt, [&](const IrqAffinity&) { return on; }));
    std::string reason;
    if (!irqs.fired.empty()) {
      reason = std::to_string(irqs.fired.size()) + " device IRQ(s) fired on cpu " + std::to_string(cpu) +
               interval + ": " + irq_list(irqs.fired, [&](const IrqAffinity& irq) {
                 return " (" + std::to_string(fired_count(fired, irq.irq, cpu)) + " times" +
                        (irq.management != IrqManagement::unmanaged ? ", managed" : "") + ")";
               });
    }
    if (judge_affinity && !irqs.may_fire.empty()) {
      const bool effective = std::all_of(irqs.may_fire.begin(), irqs.may_fire.end(),
                                         [](const IrqAffinity* i) { return i->effective; });
      reason += (reason.empty() ? "" : "; ") + std::to_string(irqs.may_fire.size()) +
                " device IRQ(s) may fire on cpu " + std::to_string(cpu) + ": " +
                irq_list(irqs.may_fire, [](const IrqAffinity&) { return ""; }) +
                (effective ? " (effective affinity)" : " (requested affinity; the effective one is unknown)");
    }
    if (reason.empty()) continue;
    any = true;
    list.add("device_irqs", cpu, bad, reason, expected,
             irq_fix(p, list.sampled(), cpu, irqs.fired, irqs.may_fire, judge_affinity));
  }
  std::string detail;
  if (!managed_notes.empty()) {
    const bool by_name = std::any_of(p.irqs.begin(), p.irqs.end(), [](const IrqAffinity& i) {
      return i.management == IrqManagement::managed_by_name;
    });
    detail += "; managed by the kernel" + (fired ? ", quiet" + interval : std::string(", firing not measured")) +
              " (" + (by_name ? "nvme queue-name heuristic: debugfs irq/irqs unreadable" : "debugfs flags") +
              "): " + joined(managed_notes);
  }
  if (!exempt_notes.empty()) detail += "; exempt by expect.irq_exempt: " + joined(exempt_notes);
  if (!any) {
    const std::string kind = managed_notes.empty() ? "device IRQ" : "unmanaged device IRQ";
    const std::string what = judge_affinity ? "no " + kind + " may fire on a sampled cpu"
                                            : "no device IRQ fired on a sampled cpu" + interval;
    list.add("device_irqs", std::nullopt, CheckStatus::pass, what + detail, expected);
  } else if (!detail.empty()) {
    list.add("device_irqs", std::nullopt, CheckStatus::pass, "other device IRQs of sampled cpus" + detail,
             expected);
  }
}

bool irq_name_matches(const std::string& name, const std::vector<std::string>& patterns) {
  // The whole name, then each action of a shared IRQ ("ehci_hcd:usb1, uhci_hcd:usb2").
  std::vector<std::string> names{name};
  for (std::size_t start = 0; name.find(", ") != std::string::npos && start <= name.size();) {
    const std::size_t comma = std::min(name.find(", ", start), name.size());
    names.push_back(name.substr(start, comma - start));
    start = comma + 2;
  }
  for (const std::string& pattern : patterns)
    for (const std::string& action : names)
      if (fnmatch(pattern.c_str(), action.c_str(), 0) == 0) return true;
  return false;
}

}  // namespace jitterd
