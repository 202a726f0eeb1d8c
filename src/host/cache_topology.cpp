// SPDX-License-Identifier: Apache-2.0
#include "host/cache_topology.h"

#include <algorithm>
#include <map>
#include <utility>

#include "host/cpu_list.h"
#include "host/text.h"

namespace jitterd {
namespace {

constexpr std::string_view node_root = "devices/system/node";

std::optional<int> read_int(const HostReader& host, const std::string& relative, std::string_view fallback,
                            std::vector<std::string>& problems) {
  const std::string path = host.sys_path(relative).string();
  const std::optional<std::string> text = host.read_sys(relative);
  if (!text) {
    problems.push_back(path + ": missing; " + std::string(fallback));
    return std::nullopt;
  }
  const std::optional<int> value = parse_number<int>(*text);
  if (!value) {
    problems.push_back(path + ": not an integer: \"" + *text + "\"; " + std::string(fallback));
    return std::nullopt;
  }
  return value;
}

// cpu -> node from every nodeK/cpulist. Kernels built without CONFIG_NUMA have no node
// directory at all; that is one problem line, not one per CPU.
std::map<int, int> read_nodes(const HostReader& host, std::vector<std::string>& problems) {
  std::map<int, int> node_of;
  const std::string root(node_root);
  if (!host.sys_exists(root)) {
    problems.push_back(host.sys_path(root).string() +
                       ": missing, as on kernels built without CONFIG_NUMA; NUMA nodes unknown");
    return node_of;
  }
  for (const int node : numbered_entries(host.list_sys(root), "node")) {
    const std::optional<std::vector<int>> cpus = read_cpu_list(
        host, root + "/node" + std::to_string(node) + "/cpulist", "its CPUs get no NUMA node from it", problems);
    if (!cpus) continue;
    for (int cpu : *cpus) node_of.emplace(cpu, node);  // the first node listing a CPU wins
  }
  return node_of;
}

// One cpuN/cache/indexM directory, or std::nullopt for an instruction cache or a broken entry.
std::optional<CacheLevel> read_cache(const HostReader& host, const std::string& dir,
                                     std::vector<std::string>& problems) {
  constexpr std::string_view ignored = "ignoring this cache";
  const std::string type_file = dir + "/type";
  const std::optional<std::string> type = host.read_sys(type_file);
  if (!type) {
    problems.push_back(host.sys_path(type_file).string() + ": missing; " + std::string(ignored));
    return std::nullopt;
  }
  // Instruction caches hold no data the ping-pong line could share.
  if (*type == "Instruction") return std::nullopt;
  const std::optional<int> level = read_int(host, dir + "/level", ignored, problems);
  if (!level) return std::nullopt;
  std::optional<std::vector<int>> shared = read_cpu_list(host, dir + "/shared_cpu_list", ignored, problems);
  if (!shared) return std::nullopt;
  return CacheLevel{*level, *type, std::move(*shared)};
}

std::vector<CacheLevel> read_caches(const HostReader& host, int cpu, std::vector<std::string>& problems) {
  const std::string dir = std::string(kSysCpuDir) + "/cpu" + std::to_string(cpu) + "/cache";
  std::vector<CacheLevel> caches;
  if (!host.sys_exists(dir)) {
    problems.push_back(host.sys_path(dir).string() + ": missing; assuming cpu " + std::to_string(cpu) +
                       " shares no cache with other CPUs");
    return caches;
  }
  for (const int index : numbered_entries(host.list_sys(dir), "index")) {
    if (auto cache = read_cache(host, dir + "/index" + std::to_string(index), problems)) {
      caches.push_back(std::move(*cache));
    }
  }
  return caches;
}

// cluster_cpus_list appeared in Linux 5.16; its absence is normal and not a problem.
std::vector<int> read_cluster(const HostReader& host, int cpu, std::vector<std::string>& problems) {
  const std::string relative =
      std::string(kSysCpuDir) + "/cpu" + std::to_string(cpu) + "/topology/cluster_cpus_list";
  if (!host.sys_exists(relative)) return {};
  return read_cpu_list(host, relative, "ignoring the cluster", problems).value_or(std::vector<int>{});
}

// Whether `from` lists `to` in a cache whose level passes `wanted`.
template <typename Predicate>
bool shares_cache(const CpuPlacement& from, int to, Predicate wanted) {
  return std::any_of(from.caches.begin(), from.caches.end(), [&](const CacheLevel& cache) {
    return wanted(cache.level) && has_cpu(cache.shared_cpus, to);
  });
}

template <typename Predicate>
bool share_cache(const CpuPlacement& a, const CpuPlacement& b, Predicate wanted) {
  return shares_cache(a, b.cpu, wanted) || shares_cache(b, a.cpu, wanted);
}

}  // namespace

std::vector<CpuPlacement> read_placements(const HostReader& host, const Topology& topology,
                                          std::vector<std::string>* problems) {
  std::vector<std::string> discarded;
  std::vector<std::string>& lines = problems != nullptr ? *problems : discarded;
  const std::map<int, int> node_of = read_nodes(host, lines);
  std::vector<CpuPlacement> placements;
  placements.reserve(topology.cpus.size());
  for (const CpuTopology& entry : topology.cpus) {
    CpuPlacement placement;
    placement.cpu = entry.cpu;
    placement.package_id = entry.package_id;
    placement.smt_siblings = entry.thread_siblings;
    placement.cluster_cpus = read_cluster(host, entry.cpu, lines);
    placement.caches = read_caches(host, entry.cpu, lines);
    if (const auto it = node_of.find(entry.cpu); it != node_of.end()) {
      placement.numa_node = it->second;
    } else if (!node_of.empty()) {
      lines.push_back("cpu " + std::to_string(entry.cpu) + ": in no " + host.sys_path(node_root).string() +
                      "/nodeK/cpulist; NUMA node unknown");
    }
    placements.push_back(std::move(placement));
  }
  return placements;
}

std::string_view to_string(CpuRelation relation) {
  switch (relation) {
    case CpuRelation::smt_sibling:
      return "smt_sibling";
    case CpuRelation::shared_l2:
      return "shared_l2";
    case CpuRelation::shared_l3:
      return "shared_l3";
    case CpuRelation::same_package:
      return "same_package";
    case CpuRelation::cross_package:
      return "cross_package";
  }
  return "unknown";
}

CpuRelation classify_pair(const CpuPlacement& a, const CpuPlacement& b) {
  if (has_cpu(a.smt_siblings, b.cpu) || has_cpu(b.smt_siblings, a.cpu)) {
    return CpuRelation::smt_sibling;
  }
  // An L1 shared outside an SMT core would be odd, but it is at least as close as an L2.
  const auto up_to_l2 = [](int level) { return level <= 2; };
  if (has_cpu(a.cluster_cpus, b.cpu) || has_cpu(b.cluster_cpus, a.cpu) || share_cache(a, b, up_to_l2)) {
    return CpuRelation::shared_l2;
  }
  // Level 3 only: a level-4 or memory-side cache marks no CCX-like boundary.
  if (share_cache(a, b, [](int level) { return level == 3; })) return CpuRelation::shared_l3;
  return a.package_id == b.package_id ? CpuRelation::same_package : CpuRelation::cross_package;
}

}  // namespace jitterd
