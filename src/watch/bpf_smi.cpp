// SPDX-License-Identifier: Apache-2.0
#include "watch/bpf_smi.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "watch_smi_shared.h"

namespace jitterd {

bool BpfMsrCounters::give(int cpu, const CpuCounter& counter, int events_fd, std::string& why_not) {
  const auto key = static_cast<std::uint32_t>(cpu);
  const auto fd = static_cast<std::uint32_t>(counter.fd());
  if (bpf_map_update_elem(events_fd, &key, &fd, BPF_ANY) == 0) return true;
  if (why_not.empty())
    why_not =
        "could not give cpu " + std::to_string(cpu) + "'s counter to the BPF program: " + std::strerror(errno);
  return false;
}

void BpfMsrCounters::open(const MsrPmu& pmu, const std::vector<int>& cpus, const MsrEventArrays& arrays) {
  for (int cpu : cpus) {
    if (pmu.smi) {
      std::string why;
      CpuCounter smi = CpuCounter::open(*pmu.smi, cpu, &why);
      if (!smi.is_open() && why_not_.empty()) why_not_ = why;
      if (smi.is_open() && give(cpu, smi, arrays.smi_fd, why_not_)) smi_.emplace(cpu, std::move(smi));
    }
    if (!pmu.has_frequency()) continue;
    // Both are opened before either is given to the program.
    std::string why;
    CycleCounters counters = open_cycle_counters(*pmu.aperf, *pmu.mperf, cpu, &why);
    if (!counters.is_open()) {
      if (frequency_why_not_.empty()) frequency_why_not_ = why;
      continue;
    }
    if (!give(cpu, counters.actual, arrays.aperf_fd, frequency_why_not_)) continue;
    if (!give(cpu, counters.reference, arrays.mperf_fd, frequency_why_not_)) {
      const auto key = static_cast<std::uint32_t>(cpu);
      bpf_map_delete_elem(arrays.aperf_fd, &key);  // its tick would read it for nothing
      continue;
    }
    cycles_.emplace(cpu, std::move(counters));
  }
}

std::map<int, CycleCounts> BpfMsrCounters::read_cycles(int states_fd, std::size_t possible_cpus) const {
  std::map<int, CycleCounts> out;
  if (cycles_.empty()) return out;
  std::vector<jd_smi_state> states(possible_cpus);
  const std::uint32_t zero = 0;
  if (bpf_map_lookup_elem(states_fd, &zero, states.data()) != 0) return out;
  for (const auto& [cpu, counters] : cycles_) {
    if (static_cast<std::size_t>(cpu) >= possible_cpus) continue;
    const jd_smi_state& s = states[static_cast<std::size_t>(cpu)];
    if (s.cycle_reads == 0) continue;
    const jd_cycle_pair& pair = s.cycles[s.cycle_reads % 2];
    out.emplace(cpu, CycleCounts{pair.actual, pair.reference});
  }
  return out;
}

std::map<int, SmiReading> BpfMsrCounters::read_smis(int states_fd, std::size_t possible_cpus) {
  std::map<int, SmiReading> out;
  if (smi_.empty()) return out;
  // A per-CPU map's lookup copies every CPU's slot (each rounded up to 8 bytes) on this CPU.
  static_assert(sizeof(jd_smi_state) % 8 == 0);
  std::vector<jd_smi_state> states(possible_cpus);
  const std::uint32_t zero = 0;
  if (bpf_map_lookup_elem(states_fd, &zero, states.data()) != 0) return out;
  for (const auto& [cpu, counter] : smi_) {
    if (static_cast<std::size_t>(cpu) >= possible_cpus) continue;
    const jd_smi_state& s = states[static_cast<std::size_t>(cpu)];
    SmiReading r;
    r.count = s.count;
    r.reads = s.reads;
    std::uint64_t& seen = written_[cpu];
    std::deque<SmiWindow>& kept = kept_[cpu];
    const std::uint64_t fresh = s.windows_written - std::min(seen, s.windows_written);
    const std::uint64_t readable = std::min<std::uint64_t>(fresh, JD_SMI_WINDOWS);
    for (std::uint64_t w = s.windows_written - readable; w < s.windows_written; ++w) {
      const jd_smi_window& window = s.windows[w % JD_SMI_WINDOWS];
      kept.push_back({window.from_ns, window.to_ns, window.smis});
    }
    while (kept.size() > kKeptSmiWindows) kept.pop_front();
    seen = s.windows_written;
    r.windows.assign(kept.begin(), kept.end());
    out.emplace(cpu, std::move(r));
  }
  return out;
}

}  // namespace jitterd
