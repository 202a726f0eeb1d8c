// SPDX-License-Identifier: Apache-2.0
// The probes' figures of `jitterd compare`: each numeric cell of a probe table both runs have, shown
// before and after and tested on the samples behind it when both runs kept them (format 1.1), or
// shown "not tested" with why (a row that breaks its probe's condition, too few samples, a file
// without samples, one value per run). Internal to compare/ (comparison.cpp); pure functions.
#pragma once

#include "compare/comparison.h"
#include "compare/judging.h"
#include "report/baseline_file.h"

namespace jitterd {

// Probe tables hold one value per run (a median, a ratio): each numeric cell is shown before and
// after. A quantile whose individual samples both runs kept (format 1.1: a c2c pair or relation
// class, a kernel operation, a pacer's lateness) is tested like a gap figure: the quantile test on
// the samples, then the probe's run-to-run allowance and the practical effect. Every other cell
// is "not tested"; with a baseline older than samples, "not tested (baseline without samples)".
void compare_probe(Comparison& out, const BaselineProbe& before, const BaselineProbe& after,
                   const Judging& judging);

}  // namespace jitterd
