// SPDX-License-Identifier: Apache-2.0
// The statistics behind `jitterd compare`: is the "after" run different from the "before" run by
// more than run-to-run noise, and by enough to matter? Two tests, both two-sided:
//  - Mann-Whitney U on per-sub-window values (a quantile, an interruption rate, a stolen share):
//    each run is a sample of sub-windows, so the test sees how much a figure varies within a run
//    and makes no assumption about its distribution. Normal approximation with tie and continuity
//    corrections (quantiles are bucket edges, so ties are common).
//  - A rate test for counts of gaps above a fixed threshold (the tail, where a single max is one
//    draw of an extreme and cannot be compared): the log rate ratio against its standard error,
//    inflated by the overdispersion seen between sub-windows (quasi-Poisson), because interruptions
//    come in bursts and a plain Poisson test would call ordinary burstiness a change.
//  - A quantile test for the probes' figures (a c2c pair's median latency, an operation's median
//    cost, a pacer's p99 lateness), which are quantiles of one run's individual samples. Three
//    splits, each a z-test of the shares of both runs' samples above a value v: v the pooled
//    q-quantile (Mood's median test generalised to q: finds small shifts), and v each run's own
//    q-quantile, whose variance adds the quantile's sampling error, q (1 - q) (1/n1 + 1/n2)
//    (finds large shifts, where the pooled quantile falls among one run's outliers); three times
//    the smallest p (Bonferroni). It judges the quantile shown, works on grouped samples
//    (histogram buckets, tied counter values) and assumes no distribution.
// Neither test sees run-to-run variation (a machine's noise drifts between runs taken minutes
// apart), so a verdict also needs the change to stand out from an assumed run-to-run spread: the
// log ratio of the two runs' figures against N(0, 2 cv^2), cv being the relative standard
// deviation of a figure between runs of an unchanged machine.
// A verdict needs all three: a small p-value, one beyond run-to-run noise, and a practical effect (a relative change of at least
// min_effect), so a tiny but "significant" difference is no change. Pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace jitterd {

// Two-sided p-value that `before` and `after` come from the same distribution. 1 when either
// sample has fewer than 2 values or every value is the same.
double mann_whitney_p(const std::vector<double>& before, const std::vector<double>& after);

// The counts' overdispersion: Pearson's chi-square of the per-sub-window counts, each run's against
// its own mean, over its degrees of freedom (quasi-Poisson); at least 1.
double count_dispersion(const std::vector<double>& before_counts, const std::vector<double>& after_counts);

// Two-sided p-value that two event counts over their exposures (seconds) come from one rate,
// with the variance multiplied by `dispersion` (>= 1). 1 when both counts are 0.
double rate_ratio_p(std::uint64_t before_count, double before_seconds, std::uint64_t after_count,
                    double after_seconds, double dispersion);

// The tail's test: two runs' counts of gaps above a threshold, per sub-window with each
// sub-window's seconds. The rate test above (with count_dispersion) and the rank test on the
// sub-windows' rates, the smaller p-value times two (Bonferroni): the rate test finds a change in
// sparse counts, which the rank test sees as ties; the rank test finds a run whose every
// sub-window lies above the other's however widely it spreads, where one dispersion for both runs
// widens the quiet run's error by the busy run's spread. 1 when either run has no sub-window.
// Also each run's rate, its counts over its seconds (0 without seconds): the figure the test is of.
struct TailCountTest {
  double p = 1;
  double dispersion = 1;
  double before_rate = 0, after_rate = 0;
};
TailCountTest tail_count_test(const std::vector<double>& before_counts, const std::vector<double>& before_seconds,
                              const std::vector<double>& after_counts, const std::vector<double>& after_seconds);

// A sample as its distinct values, each with how often it occurs (raw values with count 1, tied
// counter readings, or a histogram's bucket edges); any order.
using GroupedSample = std::vector<std::pair<double, std::uint64_t>>;

// Two-sided p-value that the q-quantile (0 < q < 1) is the same in both samples: the smallest p
// of the three splits above, times three. Values tied with a split value count below it, unless
// counting them above brings the share above nearer 1 - q. 1 when either sample is empty.
double quantile_test_p(const GroupedSample& before, const GroupedSample& after, double q);

enum class Verdict { better, worse, no_change };
std::string_view to_string(Verdict verdict);

struct ChangeCriteria {
  double alpha = 0.001;         // per comparison; ~10 comparisons per CPU keep a CPU's false alarms under 1%
  double min_effect = 0.10;     // relative change below which nothing is called better or worse
  double run_to_run_cv = 0.20;  // relative spread of a figure between runs of an unchanged machine
};

// Two-sided p-value of the log ratio after/before under run-to-run noise alone (N(0, 2 cv^2)).
// 1 when both are 0; 0 when only one is.
double run_to_run_p(double before, double after, double cv);

// (after - before) / before; +inf when before is 0 and after is not, 0 when both are 0.
double relative_change(double before, double after);

// The smallest ratio after/before (> 1) that `criteria` can call worse, its inverse better: beyond
// run-to-run noise at alpha (|log ratio| > z(alpha) sqrt(2) cv) and at least min_effect; with the
// defaults (alpha 0.001, cv 0.2) x2.54. What a row "needs" for a verdict, however small its p.
double smallest_called_ratio(const ChangeCriteria& criteria);

// Larger is worse for every figure compare judges (gaps, rates, shares, costs). `p_value` is the
// within-run test's; the run-to-run test is applied here.
Verdict judge(double before, double after, double p_value, const ChangeCriteria& criteria);

}  // namespace jitterd
