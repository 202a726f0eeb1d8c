// SPDX-License-Identifier: Apache-2.0
// `jitterd fleet`'s answer from the hosts read (fleet/fleet_history.h): the cohorts (the values of
// the --by field), each compared with the reference cohort per figure (fleet/fleet_statistics.h),
// the A/A rate of the reference cohort, and the drifted hosts per hardware class
// (fleet/drift.h: a class is the hosts of one cohort with the same CPU model and --class fields);
// printed as text tables, CSV (the tables one after another, a blank line
// between) and JSON. Each host figure is one value per host, twice: the host's worst sampled CPU
// and its median sampled CPU, each its own row. Each figure's effect-size floor is its run-to-run
// allowance (compare/allowances.h, the guest one when any host runs under a hypervisor).
// Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleet/drift.h"
#include "fleet/fleet_history.h"
#include "fleet/fleet_statistics.h"
#include "probes/probe.h"

namespace jitterd {

struct FleetOptions {
  FleetCriteria criteria;
  DriftCriteria drift;
  std::string reference;  // "": the largest cohort (the first by value among equals)
  std::size_t aa_splits = 100;
  std::uint64_t aa_seed = 1;
};

struct CohortRow {
  std::string value;
  std::size_t hosts = 0;
  bool reference = false;
};

struct FleetReport {
  std::string by, where, range;
  std::string reference;
  std::vector<CohortRow> cohorts;
  std::vector<std::pair<std::string, CohortFigure>> comparisons;  // cohort value, comparison
  std::size_t tests = 0;                                          // in the adjusted family
  AaRate aa;
  DriftResult drift;
  std::vector<std::string> left_out, notes;
  // What could not be judged and why (too few hosts for a cohort's tests, the A/A halves, a
  // class's drift): never to be read as "nothing found".
  std::vector<std::string> not_judged;
  FleetCriteria criteria;
  DriftCriteria drift_criteria;
  std::size_t queries = 0;
  FleetReads reads;  // how the hosts were read: at the range's ends, or in full and why
  // What the page plots: the figure rows, and each cohort's hosts with their values.
  std::vector<FigureSpec> figures;
  std::map<std::string, std::vector<HostValues>> cohort_hosts;
};

// Throws BaselineError (64) for a --reference that names no cohort.
FleetReport analyse_fleet(const FleetHistory& history, const FleetSelection& selection,
                          const FleetOptions& options);

// The tables every format prints, and the A/A line.
ProbeTable fleet_cohorts_table(const FleetReport& report);
ProbeTable fleet_comparisons_table(const FleetReport& report);
ProbeTable fleet_drift_table(const FleetReport& report);
ProbeTable fleet_classes_table(const FleetReport& report);
// Every host's values (JSON only: a column per figure row).
ProbeTable fleet_hosts_table(const FleetReport& report);
std::string fleet_aa_line(const FleetReport& report);
// The hosts read in full rather than at the range's two ends, and why (fleet/fleet_ends.h).
ProbeTable fleet_reads_table(const FleetReport& report);
// How the hosts were read: at the ends (with the scrape interval and lookback) or in full.
std::string fleet_reads_line(const FleetReport& report);

std::string fleet_text(const FleetReport& report);
std::string fleet_csv(const FleetReport& report);
std::string fleet_json(const FleetReport& report);
// One self-contained page (report/html.h): the verdicts and the A/A rate on top, then per figure
// every host as a dot on a log axis, one row per cohort, the reference's row shaded; the tables.
std::string fleet_html(const FleetReport& report);

// The host's values of its sampled CPUs' figure rows (fleet/fleet_rows.h): per CPU figure name,
// "NAME (worst CPU)" and "NAME (median CPU)".
std::vector<double> host_values(const FleetHost& host, std::size_t cpu_figures);

}  // namespace jitterd
