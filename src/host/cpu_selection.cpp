// SPDX-License-Identifier: Apache-2.0
#include "host/cpu_selection.h"

#include "host/cpu_list.h"

namespace jitterd {
namespace {

using Cpus = std::vector<int>;

// The sets every rule below is stated in, all sorted.
struct Machine {
  Cpus online;
  Cpus affinity;  // allowed_affinity as given
  Cpus allowed;   // affinity ∩ online: where housekeeping threads can run
  Cpus isolated;  // isolated ∩ online: may be sampled even outside the affinity
  Cpus watched;   // listed in watch.cpus: taken out of allowed and isolated, for messages
  Cpus kept_out;  // watched and isolated at run time: taken out of allowed and isolated
};

Machine describe_machine(const Topology& topo, const Cpus& allowed_affinity) {
  Machine m;
  m.online = sorted_cpus(topo.online);
  m.affinity = sorted_cpus(allowed_affinity);
  m.allowed = cpus_intersection(m.affinity, m.online);
  m.isolated = cpus_intersection(sorted_cpus(topo.isolated), m.online);
  return m;
}

CpuSelectionResult fail(std::string error) { return CpuSelectionResult{std::nullopt, {std::move(error)}, {}}; }

CpuSelectionResult no_housekeeping(const Cpus& sampled, const Machine& m) {
  return fail("no CPU left for housekeeping: sampled " + describe_cpu_list(sampled) +
              " covers every allowed CPU (" + describe_cpu_list(m.allowed) + "); leave at least one out");
}

// Notes that hold whichever mode chose `sampled`, then the result.
CpuSelectionResult succeed(Cpus sampled, Cpus housekeeping, std::vector<std::string> notes, const Topology& topo,
                           const Machine& m) {
  const Cpus outside = cpus_minus(cpus_intersection(sampled, m.isolated), m.affinity);
  if (!outside.empty()) {
    notes.push_back("cpus: isolated CPUs outside this process's allowed CPUs (" + describe_cpu_list(m.affinity) +
                    "): " + describe_cpu_list(outside) +
                    "; isolcpus= keeps them out of the default affinity, but pinning to "
                    "them is still permitted, so they are sampled");
  }
  Cpus shared;
  for (int cpu : sampled) {
    if (!cpus_intersection(sorted_cpus(topo.siblings_of(cpu)), housekeeping).empty()) {
      shared.push_back(cpu);
    }
  }
  if (!shared.empty()) {
    notes.push_back("cpus: sampled CPUs sharing a core with housekeeping (SMT siblings): " +
                    describe_cpu_list(shared) + "; expect the daemon's own activity in their numbers");
  }
  return CpuSelectionResult{
      CpuSelection{std::move(sampled), std::move(housekeeping), std::move(notes), {}}, {}, {}};
}

// One thread per core: a spinning sampler's sibling thread shares its core's pipeline and caches,
// so isolation guides leave it idle. Keeps the lowest candidate of each core; the others are the
// idle siblings, which housekeeping must not use either.
struct CoreChoice {
  Cpus sampled, idle_siblings;
};

CoreChoice one_thread_per_core(const Cpus& candidates, const Topology& topo) {
  CoreChoice choice;
  for (int cpu : candidates) {
    const Cpus siblings = cpus_intersection(sorted_cpus(topo.siblings_of(cpu)), candidates);
    const bool lowest_of_its_core = siblings.empty() || siblings.front() == cpu;
    (lowest_of_its_core ? choice.sampled : choice.idle_siblings).push_back(cpu);
  }
  return choice;
}

// Applies cpus_per_core to an automatic choice; notes the idle siblings.
void keep_one_thread_per_core(bool all_threads, const Topology& topo, Cpus& sampled, Cpus& housekeeping,
                              std::vector<std::string>& notes) {
  if (all_threads) return;
  const CoreChoice choice = one_thread_per_core(sampled, topo);
  if (choice.idle_siblings.empty()) return;
  sampled = choice.sampled;
  housekeeping = cpus_minus(housekeeping, choice.idle_siblings);
  notes.push_back("cpus: auto: one thread per core; SMT siblings left idle, neither sampled nor housekeeping: " +
                  describe_cpu_list(choice.idle_siblings) + " (cpus_per_core: all samples them too)");
}

CpuSelectionResult auto_isolated(const Topology& topo, const Machine& m, bool all_threads) {
  std::vector<std::string> notes;
  const Cpus offline_isolated = cpus_minus(sorted_cpus(topo.isolated), m.online);
  if (!offline_isolated.empty()) {
    notes.push_back("cpus: auto: isolated but offline, not sampled: " + describe_cpu_list(offline_isolated));
  }
  Cpus sampled = m.isolated;
  Cpus housekeeping = cpus_minus(m.allowed, sampled);
  if (housekeeping.empty() && !m.allowed.empty()) {
    // isolcpus= covers everything this process may run on; one CPU must still host the daemon.
    housekeeping = {m.allowed.front()};
    sampled = cpus_minus(sampled, housekeeping);
    notes.push_back("cpus: auto: the isolated CPUs (" + describe_cpu_list(m.isolated) +
                    ") cover every allowed CPU; keeping " + describe_cpu_list(housekeeping) + " for housekeeping");
  }
  if (housekeeping.empty()) return no_housekeeping(sampled, m);
  std::vector<std::string> thread_notes;
  keep_one_thread_per_core(all_threads, topo, sampled, housekeeping, thread_notes);
  notes.push_back("cpus: auto: sampling the isolated CPUs " + describe_cpu_list(sampled) + ", housekeeping on " +
                  describe_cpu_list(housekeeping));
  notes.insert(notes.end(), thread_notes.begin(), thread_notes.end());
  return succeed(std::move(sampled), std::move(housekeeping), std::move(notes), topo, m);
}

CpuSelectionResult auto_without_isolated(const Topology& topo, const Machine& m, bool all_threads) {
  std::vector<std::string> notes;
  const int first = m.allowed.front();
  // The daemon's own threads keep the whole core, so no sampler shares it with them.
  const Cpus siblings = cpus_intersection(sorted_cpus(topo.siblings_of(first)), m.allowed);
  Cpus housekeeping = cpus_union({first}, siblings);
  Cpus sampled = cpus_minus(m.allowed, housekeeping);
  std::string where = describe_cpu_list(housekeeping);
  if (sampled.empty()) {
    housekeeping = {first};
    sampled = cpus_minus(m.allowed, housekeeping);
    where = describe_cpu_list(housekeeping) + " (one core only: no sibling-free CPU to sample)";
  } else if (housekeeping.size() > 1) {
    where += " (cpu " + std::to_string(first) + " and its SMT siblings)";
  }
  std::vector<std::string> thread_notes;
  keep_one_thread_per_core(all_threads, topo, sampled, housekeeping, thread_notes);
  notes.push_back("cpus: auto: no isolated CPUs; sampling " + describe_cpu_list(sampled) + ", housekeeping on " +
                  where);
  notes.insert(notes.end(), thread_notes.begin(), thread_notes.end());
  const Cpus not_allowed = cpus_minus(cpus_minus(m.online, m.allowed), m.kept_out);
  if (!not_allowed.empty()) {
    notes.push_back("cpus: auto: online CPUs outside this process's allowed CPUs (" +
                    describe_cpu_list(m.affinity) + "), not sampled: " + describe_cpu_list(not_allowed));
  }
  return succeed(std::move(sampled), std::move(housekeeping), std::move(notes), topo, m);
}

CpuSelectionResult select_auto(const Topology& topo, const Machine& m, bool all_threads) {
  if (cpus_union(m.allowed, m.isolated).size() < 2) {
    return fail(
        "at least two usable CPUs are needed: one to sample and one for "
        "housekeeping; online: " +
        describe_cpu_list(m.online) + ", allowed: " + describe_cpu_list(m.affinity) +
        (m.watched.empty() ? std::string() : ", watched (never sampled): " + describe_cpu_list(m.watched)) +
        "; to sample none (a daemon that only watches the application's CPUs), set cpus: [] (or --cpus none)");
  }
  return m.isolated.empty() ? auto_without_isolated(topo, m, all_threads) : auto_isolated(topo, m, all_threads);
}

// Why `cpu` cannot be sampled, or "" if it can.
// Why `cpu` is no CPU of this machine, or "" if it is one.
std::string why_missing(int cpu, const Topology& topo, const Machine& m) {
  if (!has_cpu(sorted_cpus(topo.possible), cpu) && !has_cpu(m.online, cpu)) {
    return "does not exist (possible: " + describe_cpu_list(sorted_cpus(topo.possible)) + ")";
  }
  return {};
}

std::string why_unusable(int cpu, const Topology& topo, const Machine& m) {
  if (std::string why = why_missing(cpu, topo, m); !why.empty()) return why;
  if (!has_cpu(m.online, cpu)) return "not online (online: " + describe_cpu_list(m.online) + ")";
  if (!has_cpu(m.affinity, cpu) && !has_cpu(m.isolated, cpu)) {
    return "not in this process's allowed CPUs (allowed: " + describe_cpu_list(m.affinity) + ")";
  }
  return {};
}

CpuSelectionResult select_listed(const Cpus& listed, const Topology& topo, const Machine& m) {
  if (listed.empty()) {
    if (m.allowed.empty()) return fail("no CPU for housekeeping: none of this process's allowed CPUs is online");
    return succeed({}, m.allowed, {"cpus: [] samples no CPU; housekeeping on " + describe_cpu_list(m.allowed)},
                   topo, m);
  }
  CpuSelectionResult result;
  for (int cpu : listed) {
    if (std::string why = why_unusable(cpu, topo, m); !why.empty()) {
      result.errors.push_back("cpu " + std::to_string(cpu) + ": " + why);
    }
  }
  if (!result.errors.empty()) return result;
  Cpus housekeeping = cpus_minus(m.allowed, listed);
  if (housekeeping.empty()) return no_housekeeping(listed, m);
  std::vector<std::string> notes{"cpus: sampling " + describe_cpu_list(listed) + " as listed, housekeeping on " +
                                 describe_cpu_list(housekeeping)};
  return succeed(listed, std::move(housekeeping), std::move(notes), topo, m);
}

// The listed watched CPUs that cannot be watched: they do not exist, or they are also sampled.
std::vector<std::string> watch_list_errors(const CpuRequest& request, const Cpus& watched, const Topology& topo,
                                           const Machine& m) {
  std::vector<std::string> errors;
  const Cpus sampled = sorted_cpus(request.list);
  for (int cpu : watched) {
    if (std::string why = why_missing(cpu, topo, m); !why.empty())
      errors.push_back("cpu " + std::to_string(cpu) + " " + why);
    else if (!request.automatic && has_cpu(sampled, cpu))
      errors.push_back("cpu " + std::to_string(cpu) +
                       " is also in cpus: a CPU is either sampled (jitterd spins there) or watched (the "
                       "application runs there), not both");
  }
  return errors;
}

// Adds the watched CPUs to a selection made without them.
void add_watched(const CpuRequest& request, const Cpus& listed, const Machine& m, const Topology& topo,
                 CpuSelection& selection) {
  if (request.watch == CpuRequest::Watch::listed) {
    selection.watched = listed;
    selection.notes.push_back("watch: watching " + describe_cpu_list(listed) + " as listed");
  } else {
    const Cpus isolated = cpus_intersection(
        cpus_union(sorted_cpus(topo.isolated), sorted_cpus(request.runtime_isolated)), sorted_cpus(topo.possible));
    selection.watched = cpus_minus(isolated, selection.sampled);
    selection.housekeeping = cpus_minus(selection.housekeeping, selection.watched);
    if (selection.watched.empty())
      selection.notes.push_back(
          isolated.empty() ? "watch: auto: no CPU is isolated, so none is watched; list the application's CPUs "
                             "in watch.cpus"
                           : "watch: auto: every isolated CPU is sampled (" + describe_cpu_list(isolated) +
                                 "); list the sampled ones in cpus: (or cpus: []) to watch the others");
    else
      selection.notes.push_back("watch: auto: watching the isolated CPUs not sampled: " +
                                describe_cpu_list(selection.watched));
  }
  const Cpus offline = cpus_minus(selection.watched, m.online);
  if (!offline.empty())
    selection.notes.push_back("watch: offline now, watched when they come online: " + describe_cpu_list(offline));
}

}  // namespace

CpuSelectionResult select_cpus(const CpuRequest& request, const Topology& topology,
                               const std::vector<int>& allowed_affinity) {
  Machine machine = describe_machine(topology, allowed_affinity);
  const Cpus watch_listed = request.watch == CpuRequest::Watch::listed ? sorted_cpus(request.watch_list) : Cpus{};
  if (std::vector<std::string> errors = watch_list_errors(request, watch_listed, topology, machine);
      !errors.empty())
    return CpuSelectionResult{std::nullopt, {}, std::move(errors)};
  // The application's CPUs are neither a candidate for sampling nor a place for housekeeping.
  const Machine full = machine;
  // Run-time isolated CPUs belong to the application as listed watched ones do.
  const Cpus runtime = sorted_cpus(request.runtime_isolated);
  const Cpus kept_out = cpus_union(watch_listed, runtime);
  machine.allowed = cpus_minus(machine.allowed, kept_out);
  machine.isolated = cpus_minus(machine.isolated, kept_out);
  machine.watched = watch_listed;
  machine.kept_out = kept_out;
  if (machine.allowed.empty() && !full.allowed.empty())  // not "none is online": the watch took them
    return fail("no CPU left for housekeeping: the watched CPUs " + describe_cpu_list(watch_listed) +
                " cover every allowed CPU (" + describe_cpu_list(full.allowed) + "); leave at least one out");
  CpuSelectionResult result = request.automatic ? select_auto(topology, machine, request.all_threads_per_core)
                                                : select_listed(sorted_cpus(request.list), topology, machine);
  if (result.selection && !cpus_intersection(runtime, full.allowed).empty())
    result.selection->notes.push_back(
        "cpus: isolated at run time (cpuset partitions, the kubelet's exclusive CPUs), "
        "neither sampled by auto nor used for housekeeping: " +
        describe_cpu_list(cpus_intersection(runtime, full.allowed)));
  if (!result.selection || request.watch == CpuRequest::Watch::none) return result;
  add_watched(request, watch_listed, full, topology, *result.selection);
  if (result.selection->housekeeping.empty())
    return fail("no CPU left for housekeeping: the watched CPUs " + describe_cpu_list(result.selection->watched) +
                " and the sampled ones cover every allowed CPU (" + describe_cpu_list(full.allowed) +
                "); leave at least one out");
  return result;
}

}  // namespace jitterd
