// SPDX-License-Identifier: Apache-2.0
// The statistics of `jitterd fleet`: does one cohort of hosts (those with one value of a
// fingerprint field, e.g. a kernel) differ from the reference cohort over the same time range?
// The host is the unit: each host gives one value per figure (the caller reduces its CPUs to the
// worst and the median CPU), never its CPUs' or its gaps' pooled samples, which would count one
// host's noise as many hosts' evidence (pseudoreplication, Hurlbert 1984).
//  - The test: Wilcoxon-Mann-Whitney across hosts, stratified by hardware (van Elteren 1960: per
//    stratum the rank sum of the cohort's hosts among that stratum's hosts, weighted by
//    1/(N_s + 1) and summed), so that hosts are ranked only against hosts of the same CPU model; a
//    stratum holding hosts of one side only carries no comparison and is left out. Normal
//    approximation with the tie correction (quantiles are exported bucket bounds, so ties are
//    common) and a continuity correction of half a rank in the largest stratum; with one stratum
//    this is the plain Mann-Whitney test with its usual corrections.
//  - The shift: Hodges-Lehmann, the median of the differences cohort - reference over the pairs
//    of hosts within a stratum, with its confidence interval by the normal approximation of the
//    rank statistic's distribution (the order statistics of those differences, Lehmann 1975).
//  - The verdict: the p-value adjusted across every figure and cohort of a report (Holm 1979,
//    family-wise; or Benjamini-Hochberg 1995, false discovery rate) below alpha, at least
//    min_hosts comparable hosts on each side ("too few hosts" otherwise, never a verdict), and a
//    shift of at least the figure's run-to-run allowance (compare/allowances.h cv) times the
//    reference cohort's median: a move the figure makes between two runs of one unchanged host is
//    no evidence of a change, however many hosts show it.
//  - The A/A rate: the reference cohort split in two at random (within each stratum), many
//    times, and the same battery run on the halves: how often it gives a verdict where there is
//    nothing to find, on the user's own data.
// Pure functions, deterministic (the random splits come from a seeded std::mt19937_64 with a
// Fisher-Yates shuffle of our own), safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

// One stratum's values (e.g. one CPU model): the reference cohort's hosts and the other's.
struct Stratum {
  std::vector<double> reference, other;
};

struct RankTest {
  double p = 1;               // two-sided
  double shift = 0;           // Hodges-Lehmann: other - reference, in the figure's unit
  double low = 0, high = 0;   // its confidence interval
  std::size_t reference = 0;  // hosts in strata that hold both sides
  std::size_t other = 0;
};

// Strata without both sides are left out. p 1, shift 0 when no stratum holds both sides.
RankTest stratified_rank_test(const std::vector<Stratum>& strata, double confidence = 0.95);

// Adjusted p-values in the input's order (each at most 1): Holm's step-down (family-wise error)
// or Benjamini-Hochberg's step-up (false discovery rate).
enum class Adjustment { holm, benjamini_hochberg };
std::string_view to_string(Adjustment adjustment);
std::vector<double> adjusted_p_values(const std::vector<double>& p_values, Adjustment adjustment);

struct FleetCriteria {
  double alpha = 0.05;  // after adjustment, across the report's figures and cohorts
  std::size_t min_hosts = 5;
  double confidence = 0.95;
  Adjustment adjustment = Adjustment::holm;
};

// A figure as the test sees it: its name and its run-to-run allowance (the effect-size floor).
struct FigureSpec {
  std::string name;  // "p99_ns (worst CPU)"
  double cv = 0.2;
  // Added before taking logs in the drift bound, so that a zero (no stolen time, no gap over a
  // threshold) has a finite log: the figure's resolution (0 for quantiles, always > 0).
  double resolution = 0;
};

// A host's values, one per FigureSpec (NaN: no value for that figure; left out of its test).
struct HostValues {
  std::string host;
  std::string stratum;  // the hardware it is ranked within (CPU model)
  std::vector<double> values;
};

enum class Finding { worse, better, no_change, too_few_hosts };
std::string_view to_string(Finding finding);

struct CohortFigure {
  std::string figure;
  RankTest test;
  double reference_median = 0, other_median = 0;  // over the comparable hosts; NaN when none
  double floor = 0;                               // cv x reference median: the smallest shift called
  double adjusted_p = 1;
  Finding finding = Finding::no_change;
};

// One cohort against the reference, every figure; unadjusted (finding no_change or too_few_hosts).
std::vector<CohortFigure> compare_cohort(const std::vector<FigureSpec>& figures,
                                         const std::vector<HostValues>& reference,
                                         const std::vector<HostValues>& other, const FleetCriteria& criteria);

// Adjusts every comparison's p-value over the whole family (too-few-hosts rows are not tests and
// stay out) and sets each finding. Larger is worse for every figure.
void judge_family(std::vector<CohortFigure*> family, const FleetCriteria& criteria);

// The share of `splits` random halvings of `reference` (within each stratum) for which the
// battery above finds anything; `seed` fixes the splits.
struct AaRate {
  std::size_t splits = 0, with_verdict = 0;
  // Splits in which at least one figure could be tested (each half min_hosts comparable hosts):
  // 0 means the rate was not measured, not that it is 0.
  std::size_t judged = 0;
  double rate() const { return splits == 0 ? 0 : static_cast<double>(with_verdict) / static_cast<double>(splits); }
};
AaRate aa_false_alarm_rate(const std::vector<FigureSpec>& figures, const std::vector<HostValues>& reference,
                           const FleetCriteria& criteria, std::size_t splits, std::uint64_t seed);

// Median of the values that are not NaN; NaN when none.
double median_of(std::vector<double> values);

}  // namespace jitterd
