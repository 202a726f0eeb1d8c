// SPDX-License-Identifier: Apache-2.0
// The HTML forms of `jitterd report` and `jitterd compare` (--format html): one self-contained
// page (report/html.h) per run. A comparison shows what changed (fingerprint and configuration)
// first, then per CPU the gap distributions before and after as one exceedance plot with the
// threshold marked and the figures with their verdicts, the c2c matrices before, after and their
// difference as heatmaps, kernel costs and pacing side by side. A report shows the same sections
// for one baseline. Pure functions, safe from any thread.
#pragma once

#include <string>

#include "compare/comparison.h"
#include "report/baseline_file.h"

namespace jitterd {

// `what` heads the page ("report gaps", "report c2c").
std::string baseline_html(const Baseline& baseline, const std::string& what);

std::string comparison_html(const Comparison& comparison, const Baseline& before, const Baseline& after);

}  // namespace jitterd
