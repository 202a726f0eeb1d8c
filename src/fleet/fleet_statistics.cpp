// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "compare/rank_statistics.h"
#include "fleet/pair_differences.h"

namespace jitterd {
namespace {

bool both_sides(const Stratum& s) { return !s.reference.empty() && !s.other.empty(); }

// Hodges-Lehmann: the differences other - reference over the pairs within each stratum, selected
// without being formed (fleet/pair_differences.h).
void shift_and_interval(const std::vector<Stratum>& strata, double confidence, RankTest& out) {
  PairDifferences differences;
  double pairs_variance = 0;
  for (const Stratum& s : strata) {
    if (!both_sides(s)) continue;
    differences.add(s.reference, s.other);
    const double m = static_cast<double>(s.other.size()), k = static_cast<double>(s.reference.size());
    pairs_variance += m * k * (m + k + 1) / 12.0;
  }
  const std::size_t total = differences.size();
  if (total == 0) return;
  const auto kth = [&](std::size_t k) { return differences.kth(k); };
  out.shift = total % 2 == 1 ? kth(total / 2) : (kth(total / 2 - 1) + kth(total / 2)) / 2;
  // The interval's ends are the C-th smallest and largest differences, C from the normal
  // approximation of the rank statistic (Lehmann 1975, 2.6).
  const double c =
      std::floor(static_cast<double>(total) / 2 - two_sided_normal_z(1 - confidence) * std::sqrt(pairs_variance));
  const auto index = static_cast<std::size_t>(std::clamp(c, 0.0, static_cast<double>(total - 1)));
  out.low = kth(index);
  out.high = kth(total - 1 - index);
}

}  // namespace

RankTest stratified_rank_test(const std::vector<Stratum>& strata, double confidence) {
  RankTest out;
  double statistic = 0, expected = 0, variance = 0, largest_n = 0;
  for (const Stratum& s : strata) {
    if (!both_sides(s)) continue;
    out.reference += s.reference.size();
    out.other += s.other.size();
    const RankSum r = rank_sum(s.other, s.reference);
    const double n = r.sample + r.other;
    const double weight = 1 / (n + 1);  // van Elteren's locally most powerful weight
    statistic += weight * r.rank_sum;
    expected += weight * r.expected();
    variance += weight * weight * r.variance();
    largest_n = std::max(largest_n, n);
  }
  if (out.reference == 0) return out;
  shift_and_interval(strata, confidence, out);
  if (variance <= 0) return out;  // every value tied
  // Continuity: half a rank of the largest stratum (with one stratum, Mann-Whitney's 1/2).
  const double centred = std::fabs(statistic - expected) - 0.5 / (largest_n + 1);
  out.p = centred <= 0 ? 1.0 : two_sided_normal_p(centred / std::sqrt(variance));
  return out;
}

std::string_view to_string(Adjustment adjustment) {
  return adjustment == Adjustment::holm ? "holm" : "benjamini-hochberg";
}

std::vector<double> adjusted_p_values(const std::vector<double>& p_values, Adjustment adjustment) {
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });
  std::vector<double> adjusted(m, 1);
  if (adjustment == Adjustment::holm) {
    double running = 0;  // step-down: never below the previous
    for (std::size_t i = 0; i < m; ++i) {
      running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p_values[order[i]]));
      adjusted[order[i]] = running;
    }
  } else {
    double running = 1;  // step-up: never above the next
    for (std::size_t i = m; i-- > 0;) {
      running = std::min(running, static_cast<double>(m) / static_cast<double>(i + 1) * p_values[order[i]]);
      adjusted[order[i]] = std::min(1.0, running);
    }
  }
  return adjusted;
}

std::string_view to_string(Finding finding) {
  switch (finding) {
    case Finding::worse:
      return "worse";
    case Finding::better:
      return "better";
    case Finding::too_few_hosts:
      return "too few hosts";
    case Finding::no_change:
      break;
  }
  return "no significant change";
}

double median_of(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<CohortFigure> compare_cohort(const std::vector<FigureSpec>& figures,
                                         const std::vector<HostValues>& reference,
                                         const std::vector<HostValues>& other, const FleetCriteria& criteria) {
  // Each host's stratum by its name's place, looked up once per host, not once per host and figure.
  std::map<std::string, std::size_t> names;
  for (const auto* side : {&reference, &other})
    for (const HostValues& h : *side) names.emplace(h.stratum, 0);
  std::size_t place = 0;
  for (auto& [name, index] : names) index = place++;
  const auto indices = [&](const std::vector<HostValues>& side) {
    std::vector<std::size_t> out;
    for (const HostValues& h : side) out.push_back(names.find(h.stratum)->second);
    return out;
  };
  const std::vector<std::size_t> reference_strata = indices(reference), other_strata = indices(other);
  std::vector<CohortFigure> out;
  for (std::size_t f = 0; f < figures.size(); ++f) {
    std::vector<Stratum> strata(names.size());  // in the names' order, as the map kept them
    for (std::size_t i = 0; i < reference.size(); ++i) {
      const HostValues& h = reference[i];
      if (f < h.values.size() && !std::isnan(h.values[f]))
        strata[reference_strata[i]].reference.push_back(h.values[f]);
    }
    for (std::size_t i = 0; i < other.size(); ++i) {
      const HostValues& h = other[i];
      if (f < h.values.size() && !std::isnan(h.values[f])) strata[other_strata[i]].other.push_back(h.values[f]);
    }
    std::vector<Stratum> list;
    std::vector<double> reference_values, other_values;
    for (Stratum& s : strata) {
      if (!both_sides(s)) continue;
      reference_values.insert(reference_values.end(), s.reference.begin(), s.reference.end());
      other_values.insert(other_values.end(), s.other.begin(), s.other.end());
      list.push_back(std::move(s));
    }
    CohortFigure c;
    c.figure = figures[f].name;
    c.test = stratified_rank_test(list, criteria.confidence);
    // NaN (no value) where no host of that side shares a hardware stratum with the other side.
    c.reference_median = median_of(reference_values);
    c.other_median = median_of(other_values);
    c.floor = figures[f].cv * std::fabs(c.reference_median);
    c.finding = c.test.reference < criteria.min_hosts || c.test.other < criteria.min_hosts ? Finding::too_few_hosts
                                                                                           : Finding::no_change;
    out.push_back(std::move(c));
  }
  return out;
}

void judge_family(std::vector<CohortFigure*> family, const FleetCriteria& criteria) {
  std::vector<CohortFigure*> tested;
  std::vector<double> p;
  for (CohortFigure* c : family)
    if (c->finding != Finding::too_few_hosts) tested.push_back(c), p.push_back(c->test.p);
  const std::vector<double> adjusted = adjusted_p_values(p, criteria.adjustment);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    CohortFigure& c = *tested[i];
    c.adjusted_p = adjusted[i];
    // The floor: a shift inside the figure's run-to-run allowance is never a verdict (a zero
    // shift never is, even against a reference median of zero).
    const bool large_enough = std::fabs(c.test.shift) >= c.floor && c.test.shift != 0;
    c.finding = c.adjusted_p < criteria.alpha && large_enough
                    ? (c.test.shift > 0 ? Finding::worse : Finding::better)
                    : Finding::no_change;
  }
}

AaRate aa_false_alarm_rate(const std::vector<FigureSpec>& figures, const std::vector<HostValues>& reference,
                           const FleetCriteria& criteria, std::size_t splits, std::uint64_t seed) {
  std::map<std::string, std::vector<const HostValues*>> by_stratum;
  for (const HostValues& h : reference) by_stratum[h.stratum].push_back(&h);
  std::mt19937_64 random(seed);
  AaRate rate;
  for (std::size_t split = 0; split < splits; ++split) {
    std::vector<HostValues> first, second;
    for (auto& [name, hosts] : by_stratum) {
      // Fisher-Yates with our own index draw: the same splits on every standard library.
      for (std::size_t i = hosts.size(); i > 1; --i) std::swap(hosts[i - 1], hosts[random() % i]);
      for (std::size_t i = 0; i < hosts.size(); ++i) (i % 2 == 0 ? first : second).push_back(*hosts[i]);
    }
    std::vector<CohortFigure> family = compare_cohort(figures, first, second, criteria);
    std::vector<CohortFigure*> pointers;
    for (CohortFigure& c : family) pointers.push_back(&c);
    judge_family(pointers, criteria);
    ++rate.splits;
    if (std::any_of(family.begin(), family.end(),
                    [](const CohortFigure& c) { return c.finding != Finding::too_few_hosts; }))
      ++rate.judged;
    if (std::any_of(family.begin(), family.end(), [](const CohortFigure& c) {
          return c.finding == Finding::worse || c.finding == Finding::better;
        }))
      ++rate.with_verdict;
  }
  return rate;
}

}  // namespace jitterd
