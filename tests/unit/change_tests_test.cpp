// SPDX-License-Identifier: Apache-2.0
// The statistics of compare on plain numbers: the rank test and the rate test find a real shift,
// stay quiet on samples of one distribution, and the verdict needs a practical effect as well.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "compare/change_tests.h"

using namespace jitterd;

TEST_CASE("mann_whitney_p: a clear shift is significant, identical samples are not") {
  const std::vector<double> low{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::vector<double> high;
  for (double v : low) high.push_back(v + 20);
  CHECK(mann_whitney_p(low, high) < 1e-5);
  CHECK(mann_whitney_p(low, low) > 0.9);
  CHECK(mann_whitney_p({5, 5, 5}, {5, 5, 5}) == 1);  // every value tied
  CHECK(mann_whitney_p({1}, {2, 3}) == 1);           // too few values
}

TEST_CASE("mann_whitney_p: false alarms on one distribution stay at the nominal level") {
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> gap(5, 0.5);
  int below_1_percent = 0;
  constexpr int kRepetitions = 2000;
  for (int r = 0; r < kRepetitions; ++r) {
    std::vector<double> a(16), b(16);
    for (double& v : a) v = gap(random);
    for (double& v : b) v = gap(random);
    if (mann_whitney_p(a, b) < 0.01) ++below_1_percent;
  }
  CHECK(below_1_percent < kRepetitions * 0.02);  // nominal 1%; the continuity correction keeps it lower
}

TEST_CASE("rate_ratio_p: doubled rate is found, dispersion widens the test") {
  CHECK(rate_ratio_p(100, 10, 200, 10, 1) < 1e-6);
  CHECK(rate_ratio_p(100, 10, 105, 10, 1) > 0.5);
  CHECK(rate_ratio_p(100, 10, 200, 20, 1) > 0.9);  // same rate over twice the time
  CHECK(rate_ratio_p(0, 10, 0, 10, 1) == 1);
  CHECK(rate_ratio_p(0, 10, 30, 10, 1) < 0.01);  // none before, many after
  CHECK(rate_ratio_p(100, 10, 140, 10, 1) < rate_ratio_p(100, 10, 140, 10, 4));
}

TEST_CASE("count_dispersion: Poisson-like counts near 1, bursty counts above") {
  CHECK(count_dispersion({10, 10, 10}, {10, 10, 10}) == 1);  // never below 1
  CHECK(count_dispersion({0, 40, 0, 40}, {0, 40, 0, 40}) > 10);
}

TEST_CASE("count_dispersion: each run's spread against its own mean") {
  // A quiet run (about 2 a sub-window) and a busy one spread by bursts (mean 1,400): the pooled
  // variance over the pooled mean made this 385 (the busy run's variance over a mean half its
  // own); each against its own mean, it is the runs' own dispersions (1 and 2,700) averaged: 193.
  const std::vector<double> quiet{2, 1, 3, 2, 2, 3, 1, 2};
  const std::vector<double> busy{400, 2400, 900, 1900, 1400, 600, 2200, 1400};
  const double dispersion = count_dispersion(quiet, busy);
  CHECK(dispersion == Approx(2702.0 / 14));
  CHECK(count_dispersion(quiet, quiet) == 1);
}

namespace {

// Per-sub-window counts with mean `mean` and variance `dispersion` x mean (negative binomial;
// Poisson at 1): the bursty counts of gaps above a threshold.
std::vector<double> bursty_counts(std::mt19937_64& random, double mean, double dispersion, int windows) {
  std::vector<double> counts;
  if (dispersion <= 1) {
    std::poisson_distribution<int> poisson(mean);
    for (int i = 0; i < windows; ++i) counts.push_back(poisson(random));
    return counts;
  }
  const double p = 1 / dispersion;
  std::negative_binomial_distribution<int> draw(std::max(1, static_cast<int>(std::lround(mean * p / (1 - p)))), p);
  for (int i = 0; i < windows; ++i) counts.push_back(draw(random));
  return counts;
}

}  // namespace

TEST_CASE("tail_count_test: a rise from 4 to 2,800 a second is found however the busy run spreads") {
  // compare --prometheus of a poll loop read "no significant change" here (p 0.008): one
  // dispersion, 498, for both runs widened the quiet run's error by the busy run's spread.
  std::mt19937_64 random(7);
  const std::vector<double> seconds(16, 0.5);
  int found = 0;
  for (int r = 0; r < 200; ++r) {
    const std::vector<double> before = bursty_counts(random, 2.05, 1, 16);
    const std::vector<double> after = bursty_counts(random, 1404.8, 498, 16);
    if (tail_count_test(before, seconds, after, seconds).p < 0.001) ++found;
  }
  CHECK(found == 200);
}

TEST_CASE("tail_count_test: false alarms on one rate stay at the nominal level") {
  // Runs of one machine: sparse, Poisson-like and bursty tails, 16 sub-windows a run as a 16 s
  // baseline has; at p < 0.001, about 2 alarms in 2,000 comparisons are nominal.
  std::mt19937_64 random(11);
  const std::vector<double> seconds(16, 0.5);
  for (const auto& [mean, dispersion] :
       std::vector<std::pair<double, double>>{{0.5, 1}, {2, 1}, {4, 3}, {10, 20}, {50, 100}, {200, 500}}) {
    int alarms = 0;
    for (int r = 0; r < 2000; ++r) {
      const std::vector<double> before = bursty_counts(random, mean, dispersion, 16);
      const std::vector<double> after = bursty_counts(random, mean, dispersion, 16);
      if (tail_count_test(before, seconds, after, seconds).p < 0.001) ++alarms;
    }
    INFO("mean " << mean << " a sub-window, dispersion " << dispersion);
    CHECK(alarms <= 6);
  }
  const TailCountTest one_side = tail_count_test({}, {}, {1, 2}, {0.5, 0.5});
  CHECK(one_side.p == 1);
  CHECK(one_side.before_rate == 0);  // no seconds: no rate
  CHECK(one_side.after_rate == 3);   // 3 over 1 s, the figure compare shows
}

TEST_CASE("judge: needs both significance and a practical effect; larger is worse") {
  const ChangeCriteria criteria;  // alpha 0.001, 10%
  CHECK(judge(100, 300, 1e-6, criteria) == Verdict::worse);
  CHECK(judge(100, 30, 1e-6, criteria) == Verdict::better);
  CHECK(judge(100, 150, 1e-9, criteria) == Verdict::no_change);  // within run-to-run noise (cv 0.2)
  CHECK(judge(100, 150, 1e-9, {0.001, 0.1, 0.05}) == Verdict::worse);
  CHECK(judge(100, 105, 1e-9, criteria) == Verdict::no_change);  // significant but tiny
  CHECK(judge(100, 200, 0.01, criteria) == Verdict::no_change);  // large but not significant
  CHECK(judge(0, 10, 1e-9, criteria) == Verdict::worse);
  CHECK(relative_change(0, 0) == 0);
  CHECK(run_to_run_p(100, 100, 0.2) == 1);
  CHECK(run_to_run_p(100, 120, 0.2) > 0.5);
  CHECK(run_to_run_p(100, 400, 0.2) < 1e-6);
  CHECK(to_string(Verdict::no_change) == "no significant change");
}

TEST_CASE("quantile_test_p: a shifted median or tail is found, one distribution is not") {
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> cost(std::log(150.0), 0.1);
  const auto sample = [&](double scale, int n) {
    GroupedSample s;
    for (int i = 0; i < n; ++i) s.push_back({std::round(cost(random) * scale), 1});
    return s;
  };
  CHECK(quantile_test_p(sample(1, 100), sample(1.5, 100), 0.5) < 1e-9);
  CHECK(quantile_test_p(sample(1.5, 100), sample(1, 100), 0.5) < 1e-9);
  // At q = 0.99 only the top 1% of the pooled sample is counted: 20 of 2000 values, all from the
  // slower side, which still puts p well below compare's alpha of 0.001.
  CHECK(quantile_test_p(sample(1, 1000), sample(1.5, 1000), 0.99) < 1e-4);
  // Twenty a side (fork_wait) still separates a clear shift.
  CHECK(quantile_test_p(sample(1, 20), sample(2, 20), 0.5) < 1e-6);
  // Grouped values: every value the same, or one side empty, is no evidence.
  CHECK(quantile_test_p({{20, 1000}}, {{20, 1000}}, 0.5) == 1);
  CHECK(quantile_test_p({}, {{20, 1000}}, 0.5) == 1);
  // Tied counter readings moving by one tick are found.
  CHECK(quantile_test_p({{20, 900}, {21, 100}}, {{21, 900}, {22, 100}}, 0.5) < 1e-9);
  CHECK(quantile_test_p({{21, 900}, {22, 100}}, {{20, 900}, {21, 100}}, 0.5) < 1e-9);
}

TEST_CASE("quantile_test_p: false alarms on one distribution stay at or below the nominal level") {
  std::mt19937_64 random(12);
  std::lognormal_distribution<double> value(5, 0.5);
  for (const double q : {0.5, 0.9, 0.99}) {
    int below_1_percent = 0;
    constexpr int kRepetitions = 1000;
    for (int r = 0; r < kRepetitions; ++r) {
      GroupedSample a, b;
      // As compare tests them: at least 10 samples a side of the quantile.
      const int n = q == 0.99 ? 1000 : 200;
      for (int i = 0; i < n; ++i) a.push_back({std::round(value(random)), 1});
      for (int i = 0; i < n; ++i) b.push_back({std::round(value(random)), 1});
      if (quantile_test_p(a, b, q) < 0.01) ++below_1_percent;
    }
    INFO("q " << q << ": " << below_1_percent << " of " << kRepetitions << " below 0.01");
    CHECK(below_1_percent < kRepetitions * 0.02);
  }
}

TEST_CASE("quantile_test_p: a quantile inside a run of tied values still splits the samples") {
  // Counter readings: the top 5.5% tied at one value; every value tripled in the other run. The
  // pooled p99 lies inside the tied run, so only counting the ties as "above" splits the samples.
  const GroupedSample before{{78, 945}, {104, 55}}, after{{234, 945}, {312, 55}};
  CHECK(quantile_test_p(before, after, 0.99) < 1e-6);
  CHECK(quantile_test_p(after, before, 0.99) < 1e-6);
  CHECK(quantile_test_p(before, before, 0.99) == 1);
  // A histogram: most sends in one huge bucket before, few after.
  const GroupedSample late{{20, 100}, {11'811'160'063, 4900}}, prompt{{20, 4900}, {5'000'000, 100}};
  CHECK(quantile_test_p(late, prompt, 0.99) < 1e-6);
}
