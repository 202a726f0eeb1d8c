// SPDX-License-Identifier: Apache-2.0
// The kubelet's CPU manager checkpoint: any text parses or is refused with a reason saying where;
// a parsed one holds sorted CPU lists within the kernel's range and at most the bounded number of
// entries and CPUs, and its exclusive CPUs are the union of its entries'.
#include "fuzz_input.h"
#include "host/cpu_list.h"
#include "host/kubelet_cpu_state.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  std::string error;
  const std::optional<KubeletCpuState> state = parse_kubelet_cpu_state(fuzz::as_text(data, size), &error);
  if (!state) {
    fuzz::require(!error.empty());
    return 0;
  }
  fuzz::require(state->entries.size() <= kMaxKubeletEntries);
  std::size_t given = 0;
  std::vector<int> all;
  for (const KubeletCpuEntry& entry : state->entries) {
    fuzz::require(entry.cpus == sorted_cpus(entry.cpus));
    for (int cpu : entry.cpus) fuzz::require(cpu >= 0 && cpu <= max_cpu_number);
    given += entry.cpus.size();
    all = cpus_union(all, entry.cpus);
  }
  fuzz::require(given <= kMaxKubeletEntryCpus);
  fuzz::require(kubelet_exclusive_cpus(*state) == all);
  return 0;
}
