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

// The percentiles, interruptions and stolen share: the whole run's figure is shown, the sub-windows
// are tested. Tail rates above fixed thresholds by the rate test; the max by the highest of them.
void compare_cpu(Comparison& out, const Baseline& before_run, const BaselineCpu& before, const Baseline& after_run,
                 const BaselineCpu& after, const Judging& judging);

}  // namespace jitterd
