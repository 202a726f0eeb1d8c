// SPDX-License-Identifier: Apache-2.0
// The statistics of jitterd fleet on constructed fleets of known truth: the stratified rank test
// and the Hodges-Lehmann shift, Holm and Benjamini-Hochberg, the minimum of hosts, the effect-size
// floor, the A/A rate, the calibration over 100 seeds of fleets with no effect (a fixed-seed
// std::mt19937_64, so it cannot flake), and the drifted hosts by median and MAD per class.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "compare/change_tests.h"
#include "fleet/drift.h"
#include "fleet/fleet_statistics.h"
#include "fleet/pair_differences.h"

using namespace jitterd;

TEST_CASE("stratified_rank_test: one stratum is Mann-Whitney, with the Hodges-Lehmann shift") {
  std::vector<double> reference, shifted;
  for (int i = 1; i <= 12; ++i) reference.push_back(i * 1.5), shifted.push_back(i * 1.5 + 9);
  const RankTest t = stratified_rank_test({{reference, shifted}});
  CHECK(t.p == Approx(mann_whitney_p(reference, shifted)).epsilon(1e-12));
  CHECK(t.p < 0.01);
  CHECK(t.shift == Approx(9));
  CHECK(t.low < 9);
  CHECK(t.high > 9);
  CHECK(t.low > 0);  // the interval excludes no shift
  CHECK(t.reference == 12);
  CHECK(t.other == 12);
  const RankTest same = stratified_rank_test({{reference, reference}});
  CHECK(same.p > 0.9);
  CHECK(same.shift == 0);
  CHECK(stratified_rank_test({{{5, 5, 5}, {5, 5, 5}}}).p == 1);  // every value tied
}

TEST_CASE("stratified_rank_test: hosts are ranked against their own hardware only") {
  // Model A is slow and mostly in the reference, model B fast and mostly in the other cohort:
  // pooled, the hardware looks like an effect; within each model there is none.
  std::mt19937_64 random(7);
  std::normal_distribution<double> noise(0, 1);
  Stratum a, b;
  for (int i = 0; i < 30; ++i) a.reference.push_back(100 + noise(random));
  for (int i = 0; i < 5; ++i) a.other.push_back(100 + noise(random));
  for (int i = 0; i < 5; ++i) b.reference.push_back(10 + noise(random));
  for (int i = 0; i < 30; ++i) b.other.push_back(10 + noise(random));
  Stratum pooled;
  for (const Stratum* s : {&a, &b}) {
    pooled.reference.insert(pooled.reference.end(), s->reference.begin(), s->reference.end());
    pooled.other.insert(pooled.other.end(), s->other.begin(), s->other.end());
  }
  CHECK(stratified_rank_test({pooled}).p < 1e-6);
  const RankTest stratified = stratified_rank_test({a, b});
  CHECK(stratified.p > 0.05);
  CHECK(std::fabs(stratified.shift) < 1.5);  // the differences within a model, not across
  // A model that only one side has carries no comparison and is left out.
  const RankTest one_sided = stratified_rank_test({a, {{1, 2, 3}, {}}});
  CHECK(one_sided.reference == 30);
}

TEST_CASE("adjusted_p_values: Holm and Benjamini-Hochberg by hand") {
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const std::vector<double> holm = adjusted_p_values(p, Adjustment::holm);
  CHECK(holm[0] == Approx(0.03));
  CHECK(holm[1] == Approx(0.06));
  CHECK(holm[2] == Approx(0.06));
  CHECK(holm[3] == Approx(0.02));
  const std::vector<double> bh = adjusted_p_values(p, Adjustment::benjamini_hochberg);
  CHECK(bh[0] == Approx(0.02));
  CHECK(bh[1] == Approx(0.04));
  CHECK(bh[2] == Approx(0.04));
  CHECK(bh[3] == Approx(0.02));
  CHECK(adjusted_p_values({0.9, 0.8}, Adjustment::holm)[0] == 1);
  CHECK(adjusted_p_values({}, Adjustment::holm).empty());
}

namespace {

// A fleet of hosts whose figures are lognormal around a per-model level; `effect` multiplies the
// first figure of the other cohort.
std::vector<HostValues> fleet(std::mt19937_64& random, std::size_t hosts, std::size_t figures, double effect,
                              const std::string& prefix) {
  std::normal_distribution<double> noise(0, 0.3);
  std::vector<HostValues> out;
  for (std::size_t h = 0; h < hosts; ++h) {
    HostValues v{prefix + std::to_string(h), h % 3 == 0 ? "model-a" : "model-b", {}};
    const double level = v.stratum == "model-a" ? 20000 : 8000;
    for (std::size_t f = 0; f < figures; ++f)
      v.values.push_back(level * std::exp(noise(random)) * (f == 0 ? effect : 1));
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<FigureSpec> specs(std::size_t n, double cv) {
  std::vector<FigureSpec> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back({"figure" + std::to_string(i), cv, 0});
  return out;
}

Finding judged(const std::vector<FigureSpec>& figures, const std::vector<HostValues>& reference,
               const std::vector<HostValues>& other, std::size_t figure, const FleetCriteria& criteria = {}) {
  std::vector<CohortFigure> family = compare_cohort(figures, reference, other, criteria);
  std::vector<CohortFigure*> pointers;
  for (CohortFigure& c : family) pointers.push_back(&c);
  judge_family(pointers, criteria);
  return family[figure].finding;
}

}  // namespace

TEST_CASE("compare_cohort: a real effect is found with its direction, the others are not") {
  std::mt19937_64 random(11);
  const std::vector<HostValues> reference = fleet(random, 100, 4, 1, "ref-");
  const std::vector<FigureSpec> figures = specs(4, 0.2);
  const std::vector<HostValues> worse = fleet(random, 100, 4, 2, "new-");
  const std::vector<HostValues> better = fleet(random, 100, 4, 0.5, "new-");
  CHECK(judged(figures, reference, worse, 0) == Finding::worse);
  CHECK(judged(figures, reference, better, 0) == Finding::better);
  for (std::size_t f = 1; f < 4; ++f) CHECK(judged(figures, reference, worse, f) == Finding::no_change);
}

TEST_CASE("compare_cohort: a shift inside the run-to-run allowance is never a verdict") {
  std::mt19937_64 random(12);
  const std::vector<HostValues> reference = fleet(random, 200, 1, 1, "ref-");
  const std::vector<HostValues> other = fleet(random, 200, 1, 1.3, "new-");  // significant, but only 30%
  CHECK(judged(specs(1, 0.05), reference, other, 0) == Finding::worse);
  CHECK(judged(specs(1, 0.5), reference, other, 0) == Finding::no_change);
}

TEST_CASE("compare_cohort: below the minimum of hosts, too few hosts, never a verdict") {
  std::mt19937_64 random(13);
  const std::vector<HostValues> reference = fleet(random, 50, 1, 1, "ref-");
  const std::vector<HostValues> four = fleet(random, 4, 1, 100, "new-");
  CHECK(judged(specs(1, 0.2), reference, four, 0) == Finding::too_few_hosts);
  FleetCriteria three;
  three.min_hosts = 3;
  CHECK(judged(specs(1, 0.2), reference, four, 0, three) == Finding::worse);
}

TEST_CASE("calibration: over 100 seeds of fleets with no effect, verdicts at or below alpha") {
  // 200 hosts on two cohorts, three hardware models, 8 figures; the floor nearly off (cv 0.01),
  // so that the rank test and the adjustment alone must hold the rate.
  const std::vector<FigureSpec> figures = specs(8, 0.01);
  for (const Adjustment adjustment : {Adjustment::holm, Adjustment::benjamini_hochberg}) {
    FleetCriteria criteria;
    criteria.adjustment = adjustment;
    int reports_with_verdict = 0, single_tests_below_alpha = 0, single_tests = 0;
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
      std::mt19937_64 random(seed);
      const std::vector<HostValues> reference = fleet(random, 100, 8, 1, "ref-");
      const std::vector<HostValues> other = fleet(random, 100, 8, 1, "new-");
      std::vector<CohortFigure> family = compare_cohort(figures, reference, other, criteria);
      std::vector<CohortFigure*> pointers;
      for (CohortFigure& c : family) {
        pointers.push_back(&c);
        ++single_tests;
        if (c.test.p < criteria.alpha) ++single_tests_below_alpha;
      }
      judge_family(pointers, criteria);
      for (const CohortFigure& c : family)
        if (c.finding == Finding::worse || c.finding == Finding::better) {
          ++reports_with_verdict;
          break;
        }
    }
    INFO(to_string(adjustment) << ": " << reports_with_verdict << " reports of 100 with a verdict, "
                               << single_tests_below_alpha << " of " << single_tests << " tests below alpha");
    CHECK(reports_with_verdict <= 5);                             // alpha 0.05 per report
    CHECK(single_tests_below_alpha <= 0.05 * single_tests + 10);  // the unadjusted test itself
    CHECK(single_tests_below_alpha >= 10);                        // and not so conservative it never fires
  }
}

TEST_CASE("aa_false_alarm_rate: a reference of one distribution splits without verdicts") {
  std::mt19937_64 random(21);
  const std::vector<HostValues> reference = fleet(random, 120, 6, 1, "ref-");
  const AaRate rate = aa_false_alarm_rate(specs(6, 0.01), reference, {}, 200, 99);
  CHECK(rate.splits == 200);
  CHECK(rate.rate() <= 0.05);
  const AaRate again = aa_false_alarm_rate(specs(6, 0.01), reference, {}, 200, 99);
  CHECK(again.with_verdict == rate.with_verdict);  // the seed fixes the splits
  // With the floor at the allowance (cv 0.2) nothing in a homogeneous cohort is ever called.
  CHECK(aa_false_alarm_rate(specs(6, 0.2), reference, {}, 50, 5).with_verdict == 0);
}

namespace {

std::vector<ClassedHost> classed(std::mt19937_64& random, std::size_t hosts, const std::string& model) {
  std::normal_distribution<double> noise(0, 0.1);
  std::vector<ClassedHost> out;
  for (std::size_t h = 0; h < hosts; ++h) {
    ClassedHost c;
    c.values = {model + "-host-" + std::to_string(h), model, {5000 * std::exp(noise(random)), 0.0}};
    c.class_key = "cpu_model=" + model;
    c.fingerprint = {{"cpu_model", model}, {"bios_version", "1.2"}, {"kernel", h % 2 ? "6.1" : "6.6"}};
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

TEST_CASE("find_drifted_hosts: the planted hosts and no other, with the fields that differ") {
  std::mt19937_64 random(31);
  std::vector<ClassedHost> hosts = classed(random, 40, "a");
  const std::vector<ClassedHost> b = classed(random, 4, "b");  // too small to judge
  hosts.insert(hosts.end(), b.begin(), b.end());
  hosts[7].values.values[0] *= 12;
  hosts[7].fingerprint["bios_version"] = "0.9";
  hosts[20].values.values[1] = 0.5;   // a rate where the class has none
  hosts[41].values.values[0] *= 100;  // in the class too small to judge
  const std::vector<FigureSpec> figures{{"p99_ns", 0.2, 0}, {"gaps_over_1ms_per_s", 0.2, 1.0 / 3600}};
  const DriftResult result = find_drifted_hosts(figures, hosts, {});
  REQUIRE(result.hosts.size() == 2);
  CHECK(result.hosts[0].host == "a-host-20");
  CHECK(result.hosts[0].figures[0].figure == "gaps_over_1ms_per_s");
  CHECK(result.hosts[0].differing_fields.empty());  // kernel is split 50/50: no majority
  CHECK(result.hosts[1].host == "a-host-7");
  CHECK(result.hosts[1].figures[0].ratio == Approx(12).epsilon(0.3));
  CHECK(result.hosts[1].differing_fields == std::vector<std::string>{"bios_version"});
  REQUIRE(result.classes.size() == 2);
  CHECK(result.classes[1].judged == false);
}

TEST_CASE("find_drifted_hosts: a class in one bucket is not split by a host one bucket away") {
  std::vector<ClassedHost> hosts;
  for (int h = 0; h < 20; ++h)
    hosts.push_back({{"host-" + std::to_string(h), "", {h == 3 ? 20000.0 : 10000.0}}, "cpu_model=a", {}});
  CHECK(find_drifted_hosts({{"p99_ns", 0.2, 0}}, hosts, {}).hosts.empty());  // MAD 0, the floor cv holds
  hosts[3].values.values[0] = 1e6;
  CHECK(find_drifted_hosts({{"p99_ns", 0.2, 0}}, hosts, {}).hosts.size() == 1);
}

namespace {

// The straightforward Hodges-Lehmann: every difference formed, each order statistic by a full sort.
RankTest reference_shift(const std::vector<Stratum>& strata, double confidence) {
  std::vector<double> d;
  double variance = 0;
  for (const Stratum& s : strata) {
    if (s.reference.empty() || s.other.empty()) continue;
    for (double o : s.other)
      for (double r : s.reference) d.push_back(o - r);
    const double m = static_cast<double>(s.other.size()), k = static_cast<double>(s.reference.size());
    variance += m * k * (m + k + 1) / 12.0;
  }
  RankTest out;
  if (d.empty()) return out;
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size();
  out.shift = n % 2 == 1 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
  const double z = 1.959963984540054;  // two-sided 95%
  REQUIRE(confidence == 0.95);
  const double c = std::floor(static_cast<double>(n) / 2 - z * std::sqrt(variance));
  const auto index = static_cast<std::size_t>(std::clamp(c, 0.0, static_cast<double>(n - 1)));
  out.low = d[index];
  out.high = d[n - 1 - index];
  return out;
}

}  // namespace

TEST_CASE("PairDifferences: every order statistic as sorting every difference gives it, ties included") {
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 40; ++trial) {
    PairDifferences fast;
    std::vector<double> all;
    const int strata = 1 + static_cast<int>(random() % 3);
    for (int s = 0; s < strata; ++s) {
      // Continuous values, or a few exported bucket bounds (ties everywhere), as fleet sees them.
      const bool buckets = random() % 2 == 0;
      std::vector<double> reference(random() % 120), other(random() % 90);
      for (auto* side : {&reference, &other})
        for (double& v : *side)
          v = buckets ? std::pow(10.0, static_cast<double>(random() % 4)) * 2.5
                      : std::ldexp(static_cast<double>(random() % 100000), -7) - 300;
      for (double o : other)
        for (double r : reference) all.push_back(o - r);
      fast.add(reference, other);
    }
    REQUIRE(fast.size() == all.size());
    std::sort(all.begin(), all.end());
    for (std::size_t k = 0; k < all.size(); k += 1 + all.size() / 97) CHECK(fast.kth(k) == all[k]);
    if (!all.empty()) CHECK(fast.kth(all.size() - 1) == all.back());
  }
}

TEST_CASE("stratified_rank_test: the shift and its interval equal the straightforward computation's") {
  std::mt19937_64 random(5);
  std::lognormal_distribution<double> value(8, 1);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Stratum> strata(1 + random() % 3);
    for (Stratum& s : strata) {
      s.reference.resize(random() % 400);
      s.other.resize(random() % 300);
      for (double& v : s.reference) v = std::round(value(random));
      for (double& v : s.other) v = std::round(value(random) * 1.1);
    }
    const RankTest fast = stratified_rank_test(strata);
    const RankTest slow = reference_shift(strata, 0.95);
    CHECK(fast.shift == slow.shift);
    CHECK(fast.low == slow.low);
    CHECK(fast.high == slow.high);
  }
}

TEST_CASE("find_drifted_hosts: differing fields are the class majority's, however many hosts drifted") {
  // Half the class drifted would be no drift by median; a third far off, each with its fields.
  std::vector<ClassedHost> hosts;
  for (int h = 0; h < 30; ++h) {
    const bool off = h % 10 == 3;
    std::map<std::string, std::string> fingerprint{{"kernel", h % 4 == 0 ? "6.6" : "6.1"},
                                                   {"bios_version", off ? "0.9" : "1.4"}};
    if (h % 5 != 0 && h != 13) fingerprint["microcode"] = "0xb";  // most have it: a host without it differs
    hosts.push_back({{"host-" + std::to_string(100 + h), "", {off ? 5e6 : 1e4 + h}}, "cpu_model=a", fingerprint});
  }
  const DriftResult result = find_drifted_hosts({{"p99_ns", 0.2, 0}}, hosts, {});
  REQUIRE(result.hosts.size() == 3);
  CHECK(result.hosts[0].host == "host-103");
  CHECK(result.hosts[0].differing_fields == std::vector<std::string>{"bios_version"});
  CHECK(result.hosts[1].host == "host-113");
  CHECK(result.hosts[1].differing_fields == std::vector<std::string>{"bios_version", "microcode"});
  CHECK(result.hosts[0].figures[0].class_median == Approx(1.0e4 + 15).epsilon(0.01));
}
