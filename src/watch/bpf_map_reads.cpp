// SPDX-License-Identifier: Apache-2.0
#include "watch/bpf_map_reads.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace jitterd::bpf_maps {
namespace {

PairedCpuFigures* watched_cpu(PairedReading& reading, std::uint32_t cpu) {
  for (PairedCpuFigures& c : reading.cpus)
    if (c.cpu == static_cast<int>(cpu)) return &c;
  return nullptr;
}

}  // namespace

// The per-CPU figures of each source: one lookup per source copies every CPU's slot.
void read_figures(int fd, std::size_t cpus, PairedReading& reading) {
  static_assert(sizeof(jd_figures) % 8 == 0);
  std::vector<jd_figures> per_cpu(cpus);
  for (std::uint32_t source = 0; source < JD_SOURCES; ++source) {
    if (bpf_map_lookup_elem(fd, &source, per_cpu.data()) != 0) continue;
    for (PairedCpuFigures& c : reading.cpus) {
      if (c.cpu < 0 || static_cast<std::size_t>(c.cpu) >= cpus) continue;
      const jd_figures& raw = per_cpu[static_cast<std::size_t>(c.cpu)];
      SourceFigures& f = c.sources[source];
      f.count = raw.count;
      f.ns = raw.ns;
      f.max_ns = raw.max_ns;
      std::copy(std::begin(raw.buckets), std::end(raw.buckets), f.buckets.begin());
    }
  }
}

std::vector<jd_cpu_counters> all_counters(int fd, std::size_t cpus) {
  static_assert(sizeof(jd_cpu_counters) % 8 == 0);
  std::vector<jd_cpu_counters> counters(cpus);
  const std::uint32_t zero = 0;
  if (bpf_map_lookup_elem(fd, &zero, counters.data()) != 0) return {};
  return counters;
}

void read_counters(int fd, std::size_t cpus, PairedReading& reading) {
  const std::vector<jd_cpu_counters> counters = all_counters(fd, cpus);
  if (counters.empty()) return;
  for (PairedCpuFigures& c : reading.cpus) {
    if (c.cpu < 0 || static_cast<std::size_t>(c.cpu) >= cpus) continue;
    const jd_cpu_counters& raw = counters[static_cast<std::size_t>(c.cpu)];
    std::copy(std::begin(raw.tick_stop_failures), std::end(raw.tick_stop_failures), c.tick_stop_failures.begin());
    c.tick_stop_failures_unknown = raw.tick_stop_failures_unknown;
    c.outliers_lost = raw.outliers_lost;
    c.unmatched_exits = raw.unmatched_exits;
    c.too_deep = raw.too_deep;
  }
  for (const jd_cpu_counters& raw : counters) reading.ipi_senders_untracked += raw.ipi_senders_untracked;
}

void read_device_irqs(int fd, PairedReading& reading) {
  walk_hash<jd_irq_key, jd_irq_figures>(fd, [&](const jd_irq_key& key, const jd_irq_figures& raw) {
    if (PairedCpuFigures* c = watched_cpu(reading, key.cpu))
      c->device_irqs[static_cast<int>(key.irq)] = {raw.count, raw.ns, raw.max_ns};
  });
}

// Each handler's runs and time, every CPU's summed by that CPU's role.
std::vector<BpfProgramCosts> read_costs(int fd, const std::vector<std::uint32_t>& roles) {
  static_assert(sizeof(jd_program_cost) % 8 == 0);
  std::vector<BpfProgramCosts> out(JD_PROGRAMS);
  std::vector<jd_program_cost> per_cpu(roles.size());
  for (std::uint32_t program = 0; program < JD_PROGRAMS; ++program) {
    if (bpf_map_lookup_elem(fd, &program, per_cpu.data()) != 0) continue;
    for (std::size_t cpu = 0; cpu < roles.size(); ++cpu) {
      BpfProgramCosts& c = out[program];
      BpfProgramCost& by_role = roles[cpu] == JD_ROLE_WATCHED   ? c.watched
                                : roles[cpu] == JD_ROLE_SAMPLED ? c.sampled
                                                                : c.other;
      by_role.runs += per_cpu[cpu].runs;
      by_role.ns += per_cpu[cpu].ns;
    }
  }
  return out;
}

}  // namespace jitterd::bpf_maps
