// SPDX-License-Identifier: Apache-2.0
// How `jitterd compare` judges one figure and the gap figures of one CPU: the within-run test
// (compare/change_tests.h), then the figure's run-to-run allowance (compare/allowances.h). Internal
// to compare/ (comparison.cpp and probe_rows.cpp); pure functions.
#pragma once

#include <string>
#include <vector>

#include "compare/allowances.h"
#include "compare/change_tests.h"
#include "compare/comparison.h"
#include "report/baseline_file.h"

namespace jitterd {

// How figures are judged in one comparison: the criteria, whether either run was in a guest, and
// the --allowance settings.
struct Judging {
  ChangeCriteria criteria;
  bool guest = false;
  std::vector<AllowanceSetting> settings;
};

// A figure judged against its allowance (compare/allowances.h `allowance`), or shown "not tested"
// with the reason the allowance gives (the within-run test's name and p are then not shown).
FigureComparison judged(const Judging& judging, const std::string& allowance, std::string scope,
                        std::string figure, double before, double after, std::string test, double p);
// A figure shown, not tested: `test` says why (its p is 1), `verdict` what stands for a verdict
// ("not tested (...)"); it has no run-to-run p, allowance or needs.
FigureComparison untested_figure(std::string scope, std::string figure, double before, double after,
                                 std::string test, std::string verdict);

// Whose gaps are compared: a sampled CPU's ("cpu 1", counted in the file's counter) or an
// application loop's ("loop rx0", in the loop's own counter, which may differ between the files).
struct GapScope {
  std::string scope;
  double before_hertz = 0, after_hertz = 0;  // the histograms' counters
  std::string allowances = "gaps";           // the allowance group: "gaps" (a sampled CPU) or "loop"
};

// The percentiles, interruptions and stolen share: the whole run's figure is shown, the sub-windows
// are tested. Tail rates above fixed thresholds by the rate test; the max by the highest of them.
// Judged against the allowances of scope.allowances (gaps.* or loop.*).
void compare_gaps(Comparison& out, const GapScope& scope, const Baseline& before_run, const BaselineCpu& before,
                  const Baseline& after_run, const BaselineCpu& after, const Judging& judging);

// compare_gaps for a sampled CPU: scope "cpu N", the files' counter.
void compare_cpu(Comparison& out, const Baseline& before_run, const BaselineCpu& before, const Baseline& after_run,
                 const BaselineCpu& after, const Judging& judging);

// A watched CPU measured by the same method in both (scope "watched cpu N"): interruptions and
// preemptions per second and the stolen share, the whole run's figure shown and the sub-windows
// tested as compare_gaps does; the tail rates by the rate test where both files know every
// sub-window's count (otherwise a note says why not); the longest as max_ns is judged. Judged
// against the watch.* allowances.
void compare_watched(Comparison& out, const Baseline& before_run, const BaselineWatched& before,
                     const Baseline& after_run, const BaselineWatched& after, const Judging& judging);

}  // namespace jitterd
