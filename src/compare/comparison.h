// SPDX-License-Identifier: Apache-2.0
// The comparison of two baselines, whatever their source (files, Prometheus history): first what
// changed (fingerprint and configuration), then what it did, per CPU and figure, each with a
// verdict from compare/change_tests.h, and its text, CSV and JSON formats. Baselines that cannot
// be compared (another machine, another tick source or frequency, other sub-windows, durations
// more than 2x apart, no CPU in common) are refused with a BaselineError (65) naming both files;
// CPUs sampled in only one of them are left out and listed. Pure functions; the verb is cli/compare.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/allowances.h"
#include "compare/change_tests.h"
#include "report/baseline_file.h"

namespace jitterd {

struct FigureComparison {
  std::string scope;   // "cpu 1", "probe kernel_cost"
  std::string figure;  // "p99_ns", "gaps >= 10us per s", ...
  double before = 0, after = 0;
  double change = 0;  // relative: (after - before) / before
  std::string
      test;  // "mann-whitney (16 vs 16 sub-windows)", "rate+rank (dispersion 1.8)", "none (one value per run)"
  double p_value = 1;  // the within-run test's (sub-windows or counts), as `test` names it
  std::string verdict;
  // The run-to-run test's (compare/change_tests.h run_to_run_p): a verdict needs both below alpha.
  // None for a figure not tested.
  std::optional<double> run_to_run_p;
  // The run-to-run allowance (cv) it was judged against (compare/allowances.h). None when not tested.
  std::optional<double> allowance;
  // The smallest ratio after/before the allowance can call (change_tests.h smallest_called_ratio):
  // a change inside x1/needs..x needs is no verdict, whatever its p. None when not tested.
  std::optional<double> needs;
};

// A probe quantile q is tested only when each run has at least this many samples on each side of
// it (n * min(q, 1 - q)): with fewer, even two runs with no value in common cannot reach p < 0.001.
inline constexpr double kProbeSamplesPerSide = 10;

struct Comparison {
  std::string before_path, after_path;
  std::vector<std::vector<std::string>> changed;  // what changed: field, before, after
  std::vector<std::string> notes;                 // CPUs left out, probes only on one side
  std::vector<FigureComparison> figures;
};

// True when the baseline's fingerprint says it ran under a hypervisor (field "hypervisor", from
// the x86 cpuinfo flag: "yes"); older baselines, without the field, say no.
bool ran_under_hypervisor(const Baseline& baseline);

// Throws BaselineError (65) when the two cannot be compared. Each figure is judged against its
// allowance (compare/allowances.h): the guest's when either baseline ran under a hypervisor (a note
// says so), `allowances` (--allowance) over both. criteria.run_to_run_cv is not read.
Comparison compare_baselines(const Baseline& before, const std::string& before_path, const Baseline& after,
                             const std::string& after_path, const ChangeCriteria& criteria = {},
                             const std::vector<AllowanceSetting>& allowances = {});

// The class of a verdict on a page: "better", "worse", "same" (no significant change) or "" (not
// tested, anything else); the page's stylesheet (report/html.cpp) colours them.
std::string_view verdict_html_class(std::string_view verdict);
// A verdict as a table cell carrying its class, so that report/html.h shows it coloured.
Cell verdict_cell(const std::string& verdict);

ProbeTable changed_table(const Comparison& comparison);
ProbeTable figures_table(const Comparison& comparison);

// A summary line first (worse, better, unchanged, not tested; the worst finding), then the table:
// 120 columns at most (per scope a heading; figure, before, after, change, verdict, needs), or with `wide` every
// column of figures_table (the tests, p-values and allowances).
std::string format_comparison_table(const Comparison& comparison, bool wide = false);
std::string format_comparison_csv(const Comparison& comparison);
std::string format_comparison_json(const Comparison& comparison);

}  // namespace jitterd
