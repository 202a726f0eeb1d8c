// SPDX-License-Identifier: Apache-2.0
// Where each online CPU sits relative to the others, beyond what Topology holds: the caches it
// shares (cpuN/cache/indexM), its cluster (topology/cluster_cpus_list) and its NUMA node
// (devices/system/node/nodeK/cpulist), and from these the relation of any two CPUs, which labels
// c2c latency pairs. read_placements is called once through a HostReader at start-up and on
// reload and never fails: whatever is missing or unparsable gets one line in `problems` and
// simply shares nothing. The structs are plain values and classify_pair is a pure function: build
// on one thread, then use from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"
#include "host/topology.h"

namespace jitterd {

struct CacheLevel {
  int level = 0;
  std::string type;              // "Data" or "Unified"; instruction caches are not kept
  std::vector<int> shared_cpus;  // sorted, this CPU included
};

struct CpuPlacement {
  int cpu = 0;
  int package_id = 0;
  std::vector<int> smt_siblings;   // from Topology, this CPU included, sorted
  std::vector<int> cluster_cpus;   // empty where the kernel has no cluster_cpus_list
  std::vector<CacheLevel> caches;  // in index order (smallest level first on real machines)
  std::optional<int> numa_node;    // std::nullopt without NUMA information
};

// One entry per online CPU of `topology`, in the same order. Missing or unparsable cache, cluster
// and node files each add a line naming the path to *problems (if given); a missing
// cluster_cpus_list does not, since kernels before 5.16 have none.
std::vector<CpuPlacement> read_placements(const HostReader& host, const Topology& topology,
                                          std::vector<std::string>* problems);

// Closest first. shared_l2 also covers CPUs of one cluster (a group sharing L2 or a bus on
// arm64 and some Intel parts); shared_l3 is one L3, i.e. one CCX on AMD.
enum class CpuRelation { smt_sibling, shared_l2, shared_l3, same_package, cross_package };

// "smt_sibling", "shared_l2", "shared_l3", "same_package", "cross_package": the `relation` label.
std::string_view to_string(CpuRelation relation);

// The closest relation that holds between two different CPUs. Symmetric: a sharing seen from
// either side counts, so one CPU's incomplete cache directory cannot make the answer depend on
// the order of the arguments.
CpuRelation classify_pair(const CpuPlacement& a, const CpuPlacement& b);

}  // namespace jitterd
