// SPDX-License-Identifier: Apache-2.0
// Decides which CPUs get a sampler and which are left for housekeeping (HTTP, main, scheduler,
// logging), from the config's `cpus:` setting, the machine's topology and this process's allowed
// CPUs (sched_getaffinity at start-up). Rule 1 of the design, "the daemon must not measure
// itself", is enforced here: at least one allowed CPU always stays out of the sampled set.
// A pure function with no syscalls, called by the daemon's main thread at start-up and reload;
// safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "host/topology.h"

namespace jitterd {

// From the config: `cpus: auto` (automatic) or an explicit list of CPU numbers.
struct CpuRequest {
  bool automatic = true;
  std::vector<int> list;
  // auto only: sample every thread of a core (true) or, as isolation guides recommend, one thread
  // per core with its SMT siblings left idle (false: neither sampled nor used for housekeeping).
  bool all_threads_per_core = false;
  // `watch.cpus`: none (no watch: section), auto (the isolated CPUs left unsampled) or a list.
  // Watched CPUs run the application: never sampled, never used for housekeeping.
  enum class Watch { none, automatic, listed };
  Watch watch = Watch::none;
  std::vector<int> watch_list;
  // CPUs isolated at run time (cgroup v2 isolated partitions, the kubelet's exclusive CPUs:
  // host/isolation_sources.h runtime_isolated_cpus): the application's. Never chosen by `cpus:
  // auto`, never housekeeping; `watch.cpus: auto` watches them.
  std::vector<int> runtime_isolated;
};

struct CpuSelection {
  std::vector<int> sampled;        // sorted, unique; empty only when the list asked for none
  std::vector<int> housekeeping;   // sorted, unique, never empty, disjoint from sampled and watched
  std::vector<std::string> notes;  // one line each, explaining the choice
  std::vector<int> watched;        // sorted, unique, disjoint from sampled; may hold offline CPUs
};

// Either a selection, or every reason there is none (one per unusable CPU where that applies).
struct CpuSelectionResult {
  std::optional<CpuSelection> selection;
  std::vector<std::string> errors;        // about `cpus` (the sampled CPUs) or the whole selection
  std::vector<std::string> watch_errors;  // about the listed watched CPUs (`watch.cpus`)
};

// auto: the online isolated CPUs if any, else every allowed online CPU except the lowest one and
// its SMT siblings (just the lowest one if that would leave nothing); then, unless
// all_threads_per_core, only the lowest of those CPUs on each core, its siblings left idle. Explicit: every listed CPU
// must exist, be online, and be allowed or isolated. Isolated CPUs count as usable though
// isolcpus= keeps them out of the default affinity, since pinning to them is still permitted.
// Housekeeping is always (allowed ∩ online) minus sampled, minus watched, minus the siblings left
// idle. An explicit empty list samples nothing (a daemon that only watches). Listed watched CPUs
// must exist and are kept out of an automatic choice; a listed CPU both sampled and watched is an
// error. Watch auto takes the isolated CPUs (online or not; isolcpus= and run-time isolated
// alike) that are not sampled.
CpuSelectionResult select_cpus(const CpuRequest& request, const Topology& topology,
                               const std::vector<int>& allowed_affinity);

}  // namespace jitterd
