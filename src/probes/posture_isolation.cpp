// SPDX-License-Identifier: Apache-2.0
#include "probes/posture_isolation.h"

#include "host/cpu_list.h"

namespace jitterd {

namespace {

std::vector<int> boot_isolated(const Posture& p) { return p.isolated_known ? p.isolated : std::vector<int>{}; }

// The rows of CPUs this machine has (online or offline): a file naming CPU 8191 on an 8-CPU
// machine adds no series.
std::vector<IsolatedCpu> machine_isolated_by(const Posture& p) {
  const std::vector<int> present = cpus_union(p.online, p.offline);
  std::vector<IsolatedCpu> rows = isolated_by(boot_isolated(p), p.runtime_isolation);
  if (!present.empty()) std::erase_if(rows, [&](const IsolatedCpu& c) { return !has_cpu(present, c.cpu); });
  return rows;
}

}  // namespace

void add_isolation_metrics(const Posture& p, std::vector<ProbeMetric>& out) {
  for (const IsolatedCpu& c : machine_isolated_by(p))
    out.push_back(gauge(
        "jitterd_posture_cpu_isolated_by_info",
        "1 per isolated CPU and mechanism (isolcpus, cpuset, kubelet), labelled with what isolates "
        "it (the partition's path, the pod and container).",
        {{"cpu", std::to_string(c.cpu)}, {"mechanism", std::string(to_string(c.mechanism))}, {"by", c.by}}, 1));
  for (const CpusetPartition& partition : p.runtime_isolation.cgroup.partitions)
    out.push_back(gauge("jitterd_posture_cpuset_partition_valid",
                        "1 for a valid cgroup v2 cpuset partition, 0 for one the kernel marks invalid.",
                        {{"partition", partition.path}, {"kind", std::string(to_string(partition.state.kind))}},
                        partition.state.valid ? 1 : 0));
}

ProbeTable isolation_table(const Posture& p) {
  ProbeTable table{"isolated cpus by mechanism", {"cpu", "mechanism", "by"}, {}};
  for (const IsolatedCpu& c : machine_isolated_by(p))
    table.rows.push_back({c.cpu, std::string(to_string(c.mechanism)), c.by.empty() ? "boot parameters" : c.by});
  return table;
}

std::vector<std::string> isolation_notes(const Posture& p) {
  std::vector<std::string> notes;
  const CpusetPartitions& cgroup = p.runtime_isolation.cgroup;
  if (!cgroup.available)
    notes.push_back("cpuset partitions: not read: " + cgroup.absent_why);
  else
    notes.push_back("cpuset partitions: " + std::to_string(cgroup.partitions.size()) + " under " + cgroup.root +
                    " (" + std::to_string(cgroup.cgroups_seen) + " cgroups with cpuset read)" +
                    (cgroup.isolated ? "; cpuset.cpus.isolated " + describe_cpu_list(*cgroup.isolated) : ""));
  const KubeletReading& kubelet = p.runtime_isolation.kubelet;
  if (kubelet.path.empty())
    notes.push_back("kubelet CPU manager: not read (--path.kubelet \"\")");
  else if (!kubelet.state)
    notes.push_back("kubelet CPU manager: " + (kubelet.problem.empty() ? "no " + kubelet.path : kubelet.problem));
  else
    notes.push_back("kubelet CPU manager: policy " + kubelet.state->policy + ", shared pool " +
                    describe_cpu_list(kubelet.state->default_cpus) + ", exclusive cpus " +
                    describe_cpu_list(kubelet_exclusive_cpus(*kubelet.state)) + " (" +
                    std::to_string(kubelet.state->entries.size()) +
                    (kubelet.state->entries.size() == 1 ? " container)" : " containers)"));
  return notes;
}

std::vector<int> all_isolated_cpus(const Posture& p) {
  return cpus_union(boot_isolated(p), runtime_isolated_cpus(p.runtime_isolation));
}

}  // namespace jitterd
