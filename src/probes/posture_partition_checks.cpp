// SPDX-License-Identifier: Apache-2.0
// The checklist's lines about isolation made at run time (host/isolation_sources.h): cgroup v2
// cpuset partitions, valid or not, and the kubelet's exclusive CPUs, with what such isolation
// does and does not give the CPUs it covers. Documentation/admin-guide/cgroup-v2.rst: an
// `isolated` partition takes its CPUs out of the scheduler's load balancing and (6.x) out of the
// unbound workqueues; the tick (nohz_full=), RCU callback offload (rcu_nocbs=) and managed IRQs
// (isolcpus=managed_irq) are boot-time settings no partition changes.
#include <map>

#include "host/cpu_list.h"
#include "host/text.h"
#include "probes/posture_checklist.h"

namespace jitterd {
namespace {

std::string partition_file(const Posture& p, const CpusetPartition& partition) {
  return p.runtime_isolation.cgroup.root + (partition.path == "/" ? "" : partition.path) +
         "/cpuset.cpus.partition";
}

// What boot-time isolation the run-time isolated `cpus` lack, one phrase each ("" for none).
std::vector<std::string> missing_boot_isolation(const Posture& p, const std::vector<int>& cpus) {
  std::vector<std::string> missing;
  if (const std::vector<int> ticking = cpus_minus(cpus, p.nohz_full_supported ? p.nohz_full : std::vector<int>{});
      !ticking.empty())
    missing.push_back("the tick still interrupts cpus " + format_cpu_list(ticking) +
                      " (not in nohz_full=, which only the kernel command line sets)");
  std::vector<int> offloaded = param_cpus(p.isolation.rcu_nocbs).value_or(std::vector<int>{});
  offloaded = cpus_union(sorted_cpus(std::move(offloaded)), p.nohz_full);
  if (const std::vector<int> callbacks = cpus_minus(cpus, offloaded); !callbacks.empty())
    missing.push_back("RCU callbacks still run on cpus " + format_cpu_list(callbacks) +
                      " (not in rcu_nocbs= or nohz_full=)");
  std::vector<int> managed;
  for (const IrqAffinity& irq : p.irqs)
    if (irq.management != IrqManagement::unmanaged && !irq.name.empty())
      managed = cpus_union(managed, cpus_intersection(irq.cpus, cpus));
  if (!managed.empty())
    missing.push_back("kernel-managed IRQs may fire on cpus " + format_cpu_list(managed) +
                      " (only isolcpus=managed_irq at boot keeps them off)");
  if (p.workqueue_cpus)
    if (const std::vector<int> queued = cpus_intersection(*p.workqueue_cpus, cpus); !queued.empty())
      missing.push_back("unbound workqueues may run on cpus " + format_cpu_list(queued) + " (workqueue cpumask " +
                        format_cpu_list(*p.workqueue_cpus) + ")");
  return missing;
}

// The boot parameters that would add what run-time isolation lacks on `cpus`.
std::vector<std::string> boot_isolation_fix(const Posture& p, const std::vector<int>& cpus,
                                            const std::string& keeper) {
  const std::string list = format_cpu_list(cpus_union(p.nohz_full, cpus));
  return {"# kernel command line: add nohz_full=" + list + " (implies rcu_nocbs=) and isolcpus=managed_irq," +
          list +
          " to stop the tick, offload RCU callbacks and keep managed IRQs off these cpus (GRUB_CMDLINE_LINUX in "
          "/etc/default/grub, then update-grub and reboot); " +
          keeper + " keeps doing the rest"};
}

void check_partitions(Checklist& list, const Posture& p) {
  const CpusetPartitions& cgroup = p.runtime_isolation.cgroup;
  if (cgroup.partitions.empty()) return;
  std::string valid;
  bool any_invalid = false;
  for (const CpusetPartition& partition : cgroup.partitions) {
    const std::string kind(to_string(partition.state.kind));
    if (partition.state.valid) {
      valid += (valid.empty() ? "" : ", ") + partition.path + " " + kind + " " + describe_cpu_list(partition.cpus);
      continue;
    }
    any_invalid = true;
    list.add("cpuset_partition", std::nullopt, CheckStatus::fail,
             "partition " + partition.path + " is " + kind + " invalid (" +
                 (partition.state.reason.empty() ? "the kernel gives no reason" : partition.state.reason) +
                 "): its cpuset.cpus " + describe_cpu_list(partition.requested) +
                 " went back to the parent and are not isolated",
             true,
             {"# make the partition valid again as the kernel's reason says (cgroup-v2.rst, "
              "cpuset.cpus.partition: exclusive cpus, a partition parent, no tasks in the parent), then",
              "echo " + kind + " > " + partition_file(p, partition)});
  }
  if (!any_invalid)
    list.add("cpuset_partition", std::nullopt, CheckStatus::pass, "cpuset partitions valid: " + valid, true);
}

// One line per valid isolated partition and one for the kubelet's exclusive CPUs: what the run-time
// isolation gives them and what it does not.
void check_runtime_isolation(Checklist& list, const Posture& p) {
  for (const CpusetPartition& partition : p.runtime_isolation.cgroup.partitions) {
    if (partition.state.kind != PartitionKind::isolated || !partition.state.valid || partition.cpus.empty())
      continue;
    const std::vector<std::string> missing = missing_boot_isolation(p, partition.cpus);
    const std::string given = "isolated partition " + partition.path + " keeps cpus " +
                              format_cpu_list(partition.cpus) + " out of the scheduler's load balancing";
    list.add("partition_isolation", std::nullopt, missing.empty() ? CheckStatus::pass : CheckStatus::warn,
             missing.empty() ? given + ", and the boot parameters do the rest (nohz_full, rcu_nocbs, managed IRQs)"
                             : given + ", but " + joined_with(missing, "; "),
             false, boot_isolation_fix(p, partition.cpus, "the partition"));
  }
  if (!p.runtime_isolation.kubelet.state) return;
  const std::vector<int> exclusive = kubelet_exclusive_cpus(*p.runtime_isolation.kubelet.state);
  if (exclusive.empty()) return;
  // The static policy keeps other pods off; the kernel, system services and IRQs are another matter.
  std::vector<std::string> missing = missing_boot_isolation(p, exclusive);
  if (const std::vector<int> shared =
          cpus_minus(exclusive, cpus_union(p.isolated, isolated_partition_cpus(p.runtime_isolation.cgroup)));
      !shared.empty())
    missing.insert(missing.begin(), "tasks outside Kubernetes may still run on cpus " + format_cpu_list(shared) +
                                        " (neither isolcpus= nor an isolated partition)");
  const std::string given = "the kubelet's static CPU manager gives cpus " + format_cpu_list(exclusive) +
                            " to single containers, keeping other pods off";
  list.add("kubelet_cpus", std::nullopt, missing.empty() ? CheckStatus::pass : CheckStatus::warn,
           missing.empty() ? given + ", and the boot parameters do the rest"
                           : given + ", but " + joined_with(missing, "; "),
           false, boot_isolation_fix(p, exclusive, "the kubelet"));
}

}  // namespace

void check_runtime_partitions(Checklist& list, const Posture& p) {
  check_partitions(list, p);
  check_runtime_isolation(list, p);
}

}  // namespace jitterd
