// SPDX-License-Identifier: Apache-2.0
// The HTML form of `jitterd compare` (--format html): one self-contained page (report/html.h)
// that shows what changed (fingerprint and configuration) first, then per CPU the gap
// distributions before and after as one exceedance plot with the threshold marked and the figures
// with their verdicts, the c2c matrices before, after and their difference as heatmaps, kernel
// costs and pacing side by side; made of a baseline page's pieces (report/baseline_html.h). Pure
// functions, safe from any thread.
#pragma once

#include <string>

#include "compare/comparison.h"
#include "report/baseline_file.h"

namespace jitterd {

std::string comparison_html(const Comparison& comparison, const Baseline& before, const Baseline& after);

}  // namespace jitterd
