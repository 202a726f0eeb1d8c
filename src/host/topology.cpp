// SPDX-License-Identifier: Apache-2.0
#include "host/topology.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "host/cpu_list.h"
#include "host/text.h"

namespace jitterd {
namespace {

std::string cpu_file(std::string_view name) { return std::string(kSysCpuDir) + "/" + std::string(name); }

std::string topology_dir(int cpu) { return cpu_file("cpu" + std::to_string(cpu) + "/topology"); }

// The cpuN directories (not cpufreq, cpuidle), for when the kernel's own lists are missing.
std::vector<int> cpu_directories(const HostReader& host) {
  return numbered_entries(host.list_sys(kSysCpuDir), "cpu");
}

// The cpuN directories (a listing of 1,000 entries on a large machine) only when `possible` is
// missing or unparsable.
std::vector<int> read_possible(const HostReader& host, std::vector<std::string>& problems) {
  const std::string relative = cpu_file("possible");
  if (const std::optional<std::string> text = host.read_sys(relative)) {
    if (std::optional<std::vector<int>> cpus = parse_cpu_list(*text, nullptr)) return std::move(*cpus);
  }
  const std::vector<int> dirs = cpu_directories(host);
  return read_cpu_list(host, relative, "using the cpuN directories: " + describe_cpu_list(dirs), problems)
      .value_or(dirs);
}

std::vector<int> read_online(const HostReader& host, const Topology& topo, std::vector<std::string>& problems) {
  std::vector<int> fallback = cpus_minus(topo.possible, topo.offline);
  std::string how = "using possible minus offline: ";
  if (fallback.empty()) {
    fallback = cpus_minus(cpu_directories(host), topo.offline);
    how = "using the cpuN directories minus offline: ";
  }
  return read_cpu_list(host, cpu_file("online"), how + describe_cpu_list(fallback), problems).value_or(fallback);
}

// One integer file of a CPU's topology directory, or `fallback` with a problem line.
int read_topology_int(const HostReader& host, const Directory& topology, int cpu, const char* name, int fallback,
                      FileBuffer& buffer, std::vector<std::string>& problems) {
  const auto path = [&] { return host.sys_path(topology_dir(cpu) + "/" + name).string(); };
  const auto assumed = [&] { return "; assuming " + std::to_string(fallback); };
  const std::optional<std::string_view> text = topology.read_stripped(name, buffer);
  if (!text) {
    problems.push_back(path() + ": missing" + assumed());
    return fallback;
  }
  const std::optional<int> value = parse_number<int>(*text);
  if (!value) {
    problems.push_back(path() + ": not an integer: \"" + std::string(*text) + "\"" + assumed());
    return fallback;
  }
  return *value;
}

// The topology directory is opened once (openat from the cpu directory) and its files read into
// one stack buffer: a 1,024-CPU machine has 3,072 of them.
CpuTopology read_cpu(const HostReader& host, const Directory& cpus, int cpu, FileBuffer& buffer,
                     std::vector<std::string>& problems) {
  CpuTopology entry{cpu, cpu, 0, {cpu}};
  const Directory topology(cpus, "cpu" + std::to_string(cpu) + "/topology");
  if (!topology.open()) {
    problems.push_back(host.sys_path(topology_dir(cpu)).string() + ": missing; assuming cpu " +
                       std::to_string(cpu) + " is a core of its own in package 0");
    return entry;
  }
  entry.core_id = read_topology_int(host, topology, cpu, "core_id", cpu, buffer, problems);
  entry.package_id = read_topology_int(host, topology, cpu, "physical_package_id", 0, buffer, problems);
  const auto fallback = [&] { return "assuming cpu " + std::to_string(cpu) + " has no SMT siblings"; };
  const auto path = [&] { return host.sys_path(topology_dir(cpu) + "/thread_siblings_list").string(); };
  const std::optional<std::string_view> siblings = topology.read_stripped("thread_siblings_list", buffer);
  if (!siblings) {
    problems.push_back(path() + ": missing; " + fallback());
    return entry;
  }
  std::string error;
  if (std::optional<std::vector<int>> cpus_listed = parse_cpu_list(*siblings, &error))
    entry.thread_siblings = std::move(*cpus_listed);
  else
    problems.push_back(path() + ": " + error + "; " + fallback());
  return entry;
}

}  // namespace

std::optional<std::vector<int>> read_cpu_list(const HostReader& host, const std::string& relative,
                                              std::string_view fallback, std::vector<std::string>& problems) {
  std::string error = "missing";
  const std::optional<std::string> text = host.read_sys(relative);
  std::optional<std::vector<int>> cpus = text ? parse_cpu_list(*text, &error) : std::nullopt;
  if (!cpus)
    problems.push_back(host.sys_path(relative).string() + ": " + error + (fallback.empty() ? "" : "; ") +
                       std::string(fallback));
  return cpus;
}

// nohz_full is absent on kernels built without CONFIG_NO_HZ_FULL, and some kernels print
// "(null)" when nohz_full= was not given; both simply mean no tickless CPUs.
std::vector<int> read_nohz_full(const HostReader& host, std::vector<std::string>& problems) {
  const std::string relative = cpu_file("nohz_full");
  const std::optional<std::string> text = host.read_sys(relative);
  if (!text) {
    problems.push_back(host.sys_path(relative).string() +
                       ": missing, as on kernels built without CONFIG_NO_HZ_FULL; "
                       "treating the nohz_full set as empty");
    return {};
  }
  if (*text == "(null)") return {};
  return read_cpu_list(host, relative, "treating the nohz_full set as empty", problems)
      .value_or(std::vector<int>{});
}

const CpuTopology* Topology::find(int cpu) const {
  const auto it = std::lower_bound(cpus.begin(), cpus.end(), cpu,
                                   [](const CpuTopology& entry, int c) { return entry.cpu < c; });
  return it != cpus.end() && it->cpu == cpu ? &*it : nullptr;
}

std::vector<int> Topology::siblings_of(int cpu) const {
  const CpuTopology* entry = find(cpu);
  return entry != nullptr ? entry->thread_siblings : std::vector<int>{};
}

Topology read_topology(const HostReader& host) {
  Topology topo;
  auto& problems = topo.problems;
  topo.possible = read_possible(host, problems);
  topo.present = read_cpu_list(host, cpu_file("present"), "treating every possible CPU as present", problems)
                     .value_or(topo.possible);
  topo.offline = read_cpu_list(host, cpu_file("offline"), "treating the offline set as empty", problems)
                     .value_or(std::vector<int>{});
  topo.online = read_online(host, topo, problems);
  const std::optional<std::vector<int>> isolated =
      read_cpu_list(host, cpu_file("isolated"), "treating the isolated set as empty", problems);
  topo.isolated = isolated.value_or(std::vector<int>{});
  topo.isolated_known = isolated.has_value();
  topo.nohz_full = read_nohz_full(host, problems);
  topo.nohz_full_supported = host.read_sys(cpu_file("nohz_full")).has_value();
  const Directory cpus = host.sys_dir(kSysCpuDir);
  FileBuffer buffer;
  for (int cpu : topo.online) topo.cpus.push_back(read_cpu(host, cpus, cpu, buffer, problems));
  return topo;
}

}  // namespace jitterd
