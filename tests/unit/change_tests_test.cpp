// The statistics of compare on plain numbers: the rank test and the rate test find a real shift,
// stay quiet on samples of one distribution, and the verdict needs a practical effect as well.
#include <catch2/catch.hpp>

#include <random>

#include "measure/change_tests.h"

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
