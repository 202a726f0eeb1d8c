// SPDX-License-Identifier: Apache-2.0
#include "host/isolation_sources.h"

#include <algorithm>
#include <map>

#include "host/cpu_list.h"
#include "host/topology.h"

namespace jitterd {

IsolationSources read_isolation_sources(const HostReader& host) {
  return {read_cpuset_partitions(host.cgroupfs_root().string()),
          read_kubelet_cpu_state(host.kubelet_root().string())};
}

std::vector<std::string> isolation_problems(const IsolationSources& sources) {
  std::vector<std::string> lines = sources.cgroup.problems;
  if (!sources.kubelet.problem.empty())
    lines.push_back(sources.kubelet.problem + "; the kubelet's exclusive CPUs are unknown");
  return lines;
}

std::string_view to_string(IsolationMechanism mechanism) {
  switch (mechanism) {
    case IsolationMechanism::isolcpus:
      return "isolcpus";
    case IsolationMechanism::cpuset:
      return "cpuset";
    case IsolationMechanism::kubelet:
      return "kubelet";
  }
  return "isolcpus";
}

namespace {

std::string kubelet_owner(const KubeletCpuEntry& entry) {
  return entry.pod.empty() ? "container " + entry.container : "pod " + entry.pod + " container " + entry.container;
}

}  // namespace

// Each CPU once per mechanism, the first that names it kept: the kernel's partitions and the
// kubelet's entries are disjoint, and files that say otherwise must not multiply the output.
std::vector<IsolatedCpu> isolated_by(const std::vector<int>& boot_isolated, const IsolationSources& sources) {
  std::vector<IsolatedCpu> out;
  for (int cpu : boot_isolated) out.push_back({cpu, IsolationMechanism::isolcpus, ""});
  std::vector<int> in_partitions;
  for (const CpusetPartition& p : sources.cgroup.partitions) {
    if (p.state.kind != PartitionKind::isolated || !p.state.valid) continue;
    for (int cpu : cpus_minus(p.cpus, in_partitions)) out.push_back({cpu, IsolationMechanism::cpuset, p.path});
    in_partitions = cpus_union(in_partitions, p.cpus);
  }
  // Listed by the root but in no partition the walk read (one beyond its bounds, or unreadable).
  if (sources.cgroup.isolated)
    for (int cpu : cpus_minus(*sources.cgroup.isolated, in_partitions))
      out.push_back({cpu, IsolationMechanism::cpuset, "cpuset.cpus.isolated"});
  std::vector<int> given;
  if (sources.kubelet.state)
    for (const KubeletCpuEntry& entry : sources.kubelet.state->entries) {
      for (int cpu : cpus_minus(entry.cpus, given))
        out.push_back({cpu, IsolationMechanism::kubelet, kubelet_owner(entry)});
      given = cpus_union(given, entry.cpus);
    }
  std::stable_sort(out.begin(), out.end(), [](const IsolatedCpu& a, const IsolatedCpu& b) {
    return a.cpu != b.cpu ? a.cpu < b.cpu : a.mechanism < b.mechanism;
  });
  return out;
}

std::vector<int> runtime_isolated_cpus(const IsolationSources& sources) {
  std::vector<int> cpus = isolated_partition_cpus(sources.cgroup);
  if (sources.cgroup.isolated) cpus = cpus_union(cpus, *sources.cgroup.isolated);
  if (sources.kubelet.state) cpus = cpus_union(cpus, kubelet_exclusive_cpus(*sources.kubelet.state));
  return cpus;
}

std::vector<int> auto_watch_cpus(const HostReader& host, const std::vector<int>& sampled,
                                 std::vector<std::string>* problems) {
  std::vector<std::string> discarded;
  std::vector<std::string>& lines = problems != nullptr ? *problems : discarded;
  const auto cpus_of = [&](const char* file) {
    return read_cpu_list(host, std::string(kSysCpuDir) + "/" + file, "", lines).value_or(std::vector<int>{});
  };
  const IsolationSources sources = read_isolation_sources(host);
  for (std::string& line : isolation_problems(sources)) lines.push_back(std::move(line));
  const std::vector<int> isolated = cpus_union(cpus_of("isolated"), runtime_isolated_cpus(sources));
  return cpus_minus(cpus_intersection(isolated, cpus_of("possible")), sorted_cpus(sampled));
}

std::string isolation_summary(const std::vector<int>& boot_isolated, const IsolationSources& sources) {
  std::string out;
  const auto add = [&](const std::string& what, const std::vector<int>& cpus) {
    if (!cpus.empty()) out += (out.empty() ? "" : "; ") + what + " " + format_cpu_list(cpus);
  };
  add("isolcpus", boot_isolated);
  std::map<std::string, std::vector<int>> by_partition;
  for (const IsolatedCpu& c : isolated_by({}, sources))
    if (c.mechanism == IsolationMechanism::cpuset) by_partition[c.by].push_back(c.cpu);
  for (const auto& [path, cpus] : by_partition) add("cpuset " + path, cpus);
  if (sources.kubelet.state) add("kubelet", kubelet_exclusive_cpus(*sources.kubelet.state));
  return out.empty() ? "none" : out;
}

}  // namespace jitterd
