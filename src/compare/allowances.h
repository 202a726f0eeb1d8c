// SPDX-License-Identifier: Apache-2.0
// The run-to-run allowances of `jitterd compare`: how far each figure it tests may move between two
// runs of an unchanged machine, declared in one table and applied the same way to every figure.
//
// A verdict needs the change to stand out from the figure's allowance cv, the relative standard
// deviation of its run-to-run spread (compare/change_tests.h run_to_run_p): the smallest change
// called is exp(3.29 * sqrt(2) * cv) at alpha 0.001 (cv 0.08: 1.45x, 0.20: 2.5x, 0.50: 10x). Each
// figure has a cv for bare metal and one for a guest, used when either baseline's fingerprint says
// it ran under a hypervisor; a figure without one there is shown "not tested" with the table's
// reason (a tail that spreads by orders of magnitude between runs has no honest test). The values
// were measured over back-to-back baselines on this project's 2-CPU KVM guest (docs/before-and-after.md); `--allowance` sets them for another machine. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

struct FigureAllowance {
  // "<group>.<figure>": the group is "gaps" (the sampled CPUs' figures) or a probe; the figure a
  // CPU figure ("p99_99_ns", "tail_rates" for every gaps_over_*_per_s and the max) or the column
  // of a probe's table that its samples back ("median_ns").
  std::string name;
  std::optional<double> cv;        // on bare metal; none: never tested (`untested` says why)
  std::optional<double> guest_cv;  // under a hypervisor; none: not tested there (`guest_untested`)
  std::string_view untested;
  std::string_view guest_untested;
};

// Every figure compare may test, one row each: the gap figures', then each probe's allowance rows
// (probes/probe_registry.cpp keeps them beside its entry), in comparison_probe_names() order. A probe column
// with samples but no row here is shown "not tested (no run-to-run allowance)".
const std::vector<FigureAllowance>& figure_allowances();

// The groups --allowance takes as a whole: gaps, then the probes with a row above.
std::vector<std::string> allowance_groups();

// One --allowance token: a group ("c2c", every figure of it) or a row's name ("kernel_cost.p99_ns").
struct AllowanceSetting {
  std::string name;
  double cv = 0;
  bool operator==(const AllowanceSetting&) const = default;
};

inline constexpr double kMaxAllowance = 2.0;  // cv 2: a change must exceed ~11,000x

// Parses "c2c=0.3,kernel_cost.p99_ns=0.5" (cv in 0..2). std::nullopt with `error` naming the bad
// token and what is allowed: an unknown name, a row never tested (no allowance makes its samples
// fit the test), a value that is not a number in range, a name given twice, an empty list.
std::optional<std::vector<AllowanceSetting>> parse_allowances(std::string_view text, std::string* error);

// The allowance that applies to a figure.
struct AppliedAllowance {
  std::optional<double> cv;  // none: not tested (`untested`)
  std::string untested;      // "not tested (in a VM the run-to-run spread of this tail is ...)"
  std::string source;        // "", "guest" or "--allowance NAME"
};

// `name` as in figure_allowances(); `guest` when either run was under a hypervisor. A setting for
// the row's name wins over one for its group, and either over the table, for bare metal and guest
// alike (so a figure not tested in a VM is tested with it); a row never tested stays untested.
AppliedAllowance allowance_for(std::string_view name, bool guest, const std::vector<AllowanceSetting>& settings);

}  // namespace jitterd
