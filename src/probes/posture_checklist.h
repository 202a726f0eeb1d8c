// SPDX-License-Identifier: Apache-2.0
// The checklist the posture checks fill, shared by the files that hold them (posture_checks.cpp:
// CPU sets, SMT, tasks, machine settings; posture_irq_checks.cpp: device IRQs). Private to
// probes/posture_*; pure, one thread at a time.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "probes/posture_checks.h"

namespace jitterd {

// The lines of one checklist, in the order they are added; a PASS line keeps no fix.
class Checklist {
 public:
  Checklist(const Posture& posture, const std::vector<int>& sampled) : posture_(posture), sampled_(sampled) {}
  void add(std::string check, std::optional<int> cpu, CheckStatus status, std::string reason, bool expectation,
           std::vector<std::string> fix = {}) {
    if (status == CheckStatus::pass) fix.clear();
    checks_.push_back({std::move(check), cpu, status, std::move(reason), expectation, std::move(fix)});
  }
  const Posture& posture() const { return posture_; }
  const std::vector<int>& sampled() const { return sampled_; }
  std::vector<PostureCheck> take() { return std::move(checks_); }

 private:
  const Posture& posture_;
  const std::vector<int>& sampled_;
  std::vector<PostureCheck> checks_;
};

// "a, b, c and 2 more": the first three of `items` (pointers) as `text` writes each, then how many
// more; how the checklist's reasons name IRQs and tasks.
template <typename Item, typename Text>
std::string first_three(const std::vector<const Item*>& items, Text text) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(items.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + text(*items[i]);
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

// device_irqs: may fire (affinity) and did fire (counts over the interval), per sampled CPU.
void check_device_irqs(Checklist& list, const Posture& p, const PostureExpectations& expect,
                       const std::optional<IrqFiring>& fired);

// cpuset_partition (an invalid partition FAILs, naming it and the kernel's reason; exported like an
// expectation), partition_isolation and kubelet_cpus (what run-time isolation gives its CPUs and
// what only boot parameters would): posture_partition_checks.cpp.
void check_runtime_partitions(Checklist& list, const Posture& p);

}  // namespace jitterd
