// SPDX-License-Identifier: Apache-2.0
// Which CPUs are isolated, by which mechanism (boot parameters, cgroup v2 cpuset partitions, the
// kubelet's static CPU manager; host/isolation_sources.h), as the posture probe exports it and as
// `jitterd report posture` and /status.json show it. Pure functions on a Posture; any one thread.
#pragma once

#include <string>
#include <vector>

#include "host/posture.h"
#include "probes/probe.h"

namespace jitterd {

// jitterd_posture_cpu_isolated_by_info{cpu,mechanism,by} per isolated CPU and mechanism, and
// jitterd_posture_cpuset_partition_valid{partition,kind} per partition (bounded by the reader's
// limits: at most three series per CPU, kMaxPartitions partitions).
void add_isolation_metrics(const Posture& posture, std::vector<ProbeMetric>& out);

// "isolated cpus by mechanism": cpu, mechanism, by; one row per CPU and mechanism.
ProbeTable isolation_table(const Posture& posture);

// What was read and what was not: the cgroup hierarchy (or why none), the kubelet's policy.
std::vector<std::string> isolation_notes(const Posture& posture);

// Every isolated CPU, whatever the mechanism: the kernel's isolated set and the run-time ones.
std::vector<int> all_isolated_cpus(const Posture& posture);

}  // namespace jitterd
