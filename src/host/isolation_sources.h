// SPDX-License-Identifier: Apache-2.0
// Every way a CPU is isolated today, side by side: the boot parameters (isolcpus=, which the
// kernel shows in devices/system/cpu/isolated), cgroup v2 cpuset partitions of type `isolated`
// (host/cpuset_partitions.h) and the kubelet static CPU manager's exclusive CPUs
// (host/kubelet_cpu_state.h). devices/system/cpu/isolated shows only the first, so posture, the
// fingerprint and `watch.cpus: auto` read all three through this. Plain values and pure functions
// (read_isolation_sources reads through a HostReader and never throws); safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "host/cpuset_partitions.h"
#include "host/host_reader.h"
#include "host/kubelet_cpu_state.h"

namespace jitterd {

struct IsolationSources {
  CpusetPartitions cgroup;
  KubeletReading kubelet;
};

// The partitions under host.cgroupfs_root() and the kubelet's state under host.kubelet_root().
IsolationSources read_isolation_sources(const HostReader& host);

// The lines of files that were there but unusable, each naming its path.
std::vector<std::string> isolation_problems(const IsolationSources& sources);

enum class IsolationMechanism { isolcpus, cpuset, kubelet };
std::string_view to_string(IsolationMechanism mechanism);  // "isolcpus", "cpuset", "kubelet"

struct IsolatedCpu {
  int cpu = 0;
  IsolationMechanism mechanism = IsolationMechanism::isolcpus;
  // What isolates it: "" for isolcpus; the partition's path ("/rt.slice"), or
  // "cpuset.cpus.isolated" for a CPU the root lists but no partition read holds; "pod <uid>
  // container <name>" (V1 files: "container <id>").
  std::string by;
  bool operator==(const IsolatedCpu&) const = default;
};

// By CPU, then mechanism in the order above: `boot_isolated` (devices/system/cpu/isolated), the
// valid isolated partitions' effective CPUs, and the kubelet's exclusive CPUs.
std::vector<IsolatedCpu> isolated_by(const std::vector<int>& boot_isolated, const IsolationSources& sources);

// The CPUs isolated at run time, which jitterd may not run on but `watch.cpus: auto` watches:
// the valid isolated partitions' CPUs (and the root's cpuset.cpus.isolated) and the kubelet's
// exclusive CPUs, sorted.
std::vector<int> runtime_isolated_cpus(const IsolationSources& sources);

// What `watch.cpus: auto` watches now: the kernel's isolated set (devices/system/cpu/isolated)
// and the run-time isolated CPUs, among the possible CPUs, less `sampled`; sorted. Read afresh
// each call (a pod rescheduled, a partition made or undone); unreadable files add lines to
// `problems` when given.
std::vector<int> auto_watch_cpus(const HostReader& host, const std::vector<int>& sampled,
                                 std::vector<std::string>* problems = nullptr);

// One line for the fingerprint, stable while the isolation is: "isolcpus 2-3; cpuset /rt.slice
// 4-5; kubelet 6-7", by mechanism (pods not named: a rescheduled pod on the same CPUs is the same
// machine); "none" when nothing is isolated.
std::string isolation_summary(const std::vector<int>& boot_isolated, const IsolationSources& sources);

}  // namespace jitterd
