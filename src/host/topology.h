// SPDX-License-Identifier: Apache-2.0
// What the kernel says about the machine's CPUs: which exist, are online, are isolated
// (isolcpus=) or run tickless (nohz_full=), and how online CPUs share cores and packages. Read
// once through a HostReader at start-up and on reload; CPU selection, c2c pair labelling and the
// posture report use it. read_topology never fails: whatever is missing or unparsable gets a
// fallback and one line in `problems`. The structs are plain values: build on one thread, then
// share read-only with any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

struct CpuTopology {
  int cpu = 0;
  int core_id = 0;
  int package_id = 0;
  std::vector<int> thread_siblings;  // CPUs sharing this core, this one included, sorted
};

struct Topology {
  std::vector<int> possible, present, online, offline, isolated, nohz_full;  // sorted, unique
  bool isolated_known = true;         // false when the isolated file was unreadable (isolated is then empty)
  bool nohz_full_supported = true;    // false when the nohz_full file is missing: no CONFIG_NO_HZ_FULL
  std::vector<CpuTopology> cpus;      // online CPUs only, sorted by cpu
  std::vector<std::string> problems;  // one human line per missing or unparsable file

  // The entry for an online CPU, or nullptr.
  const CpuTopology* find(int cpu) const;
  // The CPUs sharing a core with `cpu`, itself included; empty if `cpu` is not online.
  std::vector<int> siblings_of(int cpu) const;
};

// The cpu-list file `relative` (sysfs), or std::nullopt with one line in `problems` saying why
// ("<path>: missing", "<path>: bad cpu list ...") and, when given, what is assumed instead
// (`fallback`, e.g. "treating the isolated set as empty", after a "; ").
std::optional<std::vector<int>> read_cpu_list(const HostReader& host, const std::string& relative,
                                              std::string_view fallback, std::vector<std::string>& problems);

// The kernel's nohz_full set: empty, with a problem line, where the file is missing (a kernel built
// without CONFIG_NO_HZ_FULL), and empty where it reads "(null)" (no nohz_full= given).
std::vector<int> read_nohz_full(const HostReader& host, std::vector<std::string>& problems);

// Reads devices/system/cpu/{possible,present,online,offline,isolated,nohz_full} and, for each
// online CPU, cpuN/topology/{core_id,physical_package_id,thread_siblings_list}.
Topology read_topology(const HostReader& host);

}  // namespace jitterd
