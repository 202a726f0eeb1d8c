// SPDX-License-Identifier: Apache-2.0
#include "compare/change_tests.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "compare/rank_statistics.h"

namespace jitterd {
namespace {

double mean_of(const std::vector<double>& values) {
  return values.empty() ? 0
                        : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// Sum of squared deviations from the sample's own mean.
double squared_deviations(const std::vector<double>& values, double mean) {
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return sum;
}

}  // namespace

double mann_whitney_p(const std::vector<double>& before, const std::vector<double>& after) {
  const std::size_t n1 = before.size(), n2 = after.size();
  if (n1 < 2 || n2 < 2) return 1;
  const RankSum ranks = rank_sum(before, after);
  const double variance = ranks.variance();
  if (variance <= 0) return 1;                                                // every value the same
  const double centred = std::fabs(ranks.rank_sum - ranks.expected()) - 0.5;  // continuity correction
  return centred <= 0 ? 1.0 : two_sided_normal_p(centred / std::sqrt(variance));
}

double count_dispersion(const std::vector<double>& before_counts, const std::vector<double>& after_counts) {
  // Pearson's statistic over its degrees of freedom, each run's counts against that run's own
  // mean (quasi-Poisson): a busy run's spread is measured against its own mean, not against a mean
  // between the two runs, which the pooled variance over the pooled mean used (and so doubled it
  // when one run's rate was hundreds of times the other's).
  const auto pearson = [](const std::vector<double>& counts) {
    const double mean = mean_of(counts);
    return mean > 0 ? squared_deviations(counts, mean) / mean : 0.0;
  };
  const double df = static_cast<double>(before_counts.size() + after_counts.size()) - 2;
  if (df <= 0) return 1;
  return std::max(1.0, (pearson(before_counts) + pearson(after_counts)) / df);
}

double rate_ratio_p(std::uint64_t before_count, double before_seconds, std::uint64_t after_count,
                    double after_seconds, double dispersion) {
  if (before_count == 0 && after_count == 0) return 1;
  if (before_seconds <= 0 || after_seconds <= 0) return 1;
  // Half a count added to each side keeps the log finite when one side saw none.
  const double a = static_cast<double>(before_count) + 0.5, b = static_cast<double>(after_count) + 0.5;
  const double log_ratio = std::log((b / after_seconds) / (a / before_seconds));
  const double standard_error = std::sqrt(std::max(1.0, dispersion) * (1 / a + 1 / b));
  return two_sided_normal_p(log_ratio / standard_error);
}

TailCountTest tail_count_test(const std::vector<double>& before_counts, const std::vector<double>& before_seconds,
                              const std::vector<double>& after_counts, const std::vector<double>& after_seconds) {
  const auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  const double before_count = sum(before_counts), before_time = sum(before_seconds);
  const double after_count = sum(after_counts), after_time = sum(after_seconds);
  TailCountTest test;
  test.before_rate = before_time > 0 ? before_count / before_time : 0.0;
  test.after_rate = after_time > 0 ? after_count / after_time : 0.0;
  if (before_counts.empty() || after_counts.empty()) return test;
  const auto rates = [](const std::vector<double>& counts, const std::vector<double>& seconds) {
    std::vector<double> out;
    for (std::size_t i = 0; i < counts.size() && i < seconds.size(); ++i)
      out.push_back(seconds[i] > 0 ? counts[i] / seconds[i] : 0.0);
    return out;
  };
  test.dispersion = count_dispersion(before_counts, after_counts);
  const double rate_p = rate_ratio_p(static_cast<std::uint64_t>(before_count), before_time,
                                     static_cast<std::uint64_t>(after_count), after_time, test.dispersion);
  const double rank_p = mann_whitney_p(rates(before_counts, before_seconds), rates(after_counts, after_seconds));
  test.p = std::min(1.0, 2 * std::min(rate_p, rank_p));
  return test;
}

namespace {

// One direction of quantile_test_p: v is `reference`'s q-quantile (nearest rank); the share of
// `other` above v against the share of `reference` above it (by construction near 1 - q), with
// the variance of both: other's binomial share, and v's own sampling error, which moves the
// fraction of the distribution above v by q (1 - q) / n_reference.
double quantile_exceedance_p(const GroupedSample& reference, const GroupedSample& other, double q) {
  GroupedSample sorted = reference;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t n1 = 0, n2 = 0;
  for (const auto& [value, count] : sorted) n1 += count;
  for (const auto& [value, count] : other) n2 += count;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n1))));
  double v = sorted.back().first;
  std::uint64_t seen = 0;
  for (const auto& [value, count] : sorted) {
    seen += count;
    if (seen >= rank) {
      v = value;
      break;
    }
  }
  // Values tied with v count below it, unless counting them above brings the reference's share
  // above nearer 1 - q (a bucket or a counter value shared by many samples).
  const auto shares = [&](bool inclusive) {
    std::uint64_t above1 = 0, above2 = 0;
    for (const auto& [value, count] : sorted)
      if (value > v || (inclusive && value == v)) above1 += count;
    for (const auto& [value, count] : other)
      if (value > v || (inclusive && value == v)) above2 += count;
    return std::pair{static_cast<double>(above1) / static_cast<double>(n1),
                     static_cast<double>(above2) / static_cast<double>(n2)};
  };
  auto [reference_share, other_share] = shares(false);
  const auto [inclusive_reference, inclusive_other] = shares(true);
  if (std::fabs(inclusive_reference - (1 - q)) < std::fabs(reference_share - (1 - q)))
    reference_share = inclusive_reference, other_share = inclusive_other;
  const double a = static_cast<double>(n1), b = static_cast<double>(n2);
  const double difference = std::fabs(other_share - reference_share) - 0.5 * (1 / a + 1 / b);
  if (difference <= 0) return 1;
  return two_sided_normal_p(difference / std::sqrt(q * (1 - q) * (1 / a + 1 / b)));
}

// Mood's test generalised to q: the shares of both samples above the pooled sample's q-quantile.
// Most powerful when the two differ by a little; it loses a large shift at an extreme q, where
// the pooled quantile falls among one sample's outliers.
double pooled_quantile_p(const GroupedSample& before, const GroupedSample& after, std::uint64_t n1,
                         std::uint64_t n2, double q) {
  struct Pooled {
    double value;
    std::uint64_t before, after;
  };
  std::vector<Pooled> pooled;
  pooled.reserve(before.size() + after.size());
  for (const auto& [value, count] : before) pooled.push_back({value, count, 0});
  for (const auto& [value, count] : after) pooled.push_back({value, 0, count});
  std::sort(pooled.begin(), pooled.end(), [](const Pooled& a, const Pooled& b) { return a.value < b.value; });
  const std::uint64_t total = n1 + n2;
  const auto rank =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total))));
  std::uint64_t seen = 0;
  double v = pooled.back().value;
  for (const Pooled& p : pooled) {
    seen += p.before + p.after;
    if (seen >= rank) {
      v = p.value;
      break;
    }
  }
  // Values tied with v count below it, unless that leaves none above or counting them above
  // brings the pooled share above nearer 1 - q; the choice sees the pooled values only.
  const double a = static_cast<double>(n1), b = static_cast<double>(n2);
  std::uint64_t strict1 = 0, strict2 = 0, inclusive1 = 0, inclusive2 = 0;
  for (const Pooled& p : pooled) {
    if (p.value > v) strict1 += p.before, strict2 += p.after;
    if (p.value >= v) inclusive1 += p.before, inclusive2 += p.after;
  }
  const auto usable = [&](std::uint64_t above) { return above > 0 && static_cast<double>(above) < a + b; };
  const auto distance = [&](std::uint64_t above) {
    return std::fabs(static_cast<double>(above) / (a + b) - (1 - q));
  };
  std::uint64_t above1 = strict1, above2 = strict2;
  if (usable(inclusive1 + inclusive2) &&
      (!usable(strict1 + strict2) || distance(inclusive1 + inclusive2) < distance(strict1 + strict2)))
    above1 = inclusive1, above2 = inclusive2;
  if (!usable(above1 + above2)) return 1;
  const double share = static_cast<double>(above1 + above2) / (a + b);
  const double difference =
      std::fabs(static_cast<double>(above2) / b - static_cast<double>(above1) / a) - 0.5 * (1 / a + 1 / b);
  if (difference <= 0) return 1;
  return two_sided_normal_p(difference / std::sqrt(share * (1 - share) * (1 / a + 1 / b)));
}

}  // namespace

double quantile_test_p(const GroupedSample& before, const GroupedSample& after, double q) {
  std::uint64_t n1 = 0, n2 = 0;
  for (const auto& [value, count] : before) n1 += count;
  for (const auto& [value, count] : after) n2 += count;
  if (n1 == 0 || n2 == 0 || !(q > 0 && q < 1)) return 1;
  // Three tests (the pooled split, and each run's quantile as the split), so three times the
  // smallest p (Bonferroni): the pooled split finds small shifts, a run's own quantile large ones
  // (where that run is the lower one, the other lies nearly all above its quantile).
  const double smallest =
      std::min({pooled_quantile_p(before, after, n1, n2, q), quantile_exceedance_p(before, after, q),
                quantile_exceedance_p(after, before, q)});
  return std::min(1.0, 3 * smallest);
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::better:
      return "better";
    case Verdict::worse:
      return "worse";
    case Verdict::no_change:
      break;
  }
  return "no significant change";
}

double relative_change(double before, double after) {
  if (before == after) return 0;
  if (before == 0) return std::numeric_limits<double>::infinity();
  return (after - before) / before;
}

double run_to_run_p(double before, double after, double cv) {
  if (before == after) return 1;
  if (before <= 0 || after <= 0) return 0;
  if (cv <= 0) return 0;
  return two_sided_normal_p(std::log(after / before) / (std::sqrt(2.0) * cv));
}

double smallest_called_ratio(const ChangeCriteria& criteria) {
  const double noise = std::exp(two_sided_normal_z(criteria.alpha) * std::sqrt(2.0) * criteria.run_to_run_cv);
  return std::max(noise, 1 + criteria.min_effect);
}

Verdict judge(double before, double after, double p_value, const ChangeCriteria& criteria) {
  const double change = relative_change(before, after);
  if (p_value >= criteria.alpha || std::fabs(change) < criteria.min_effect) return Verdict::no_change;
  if (run_to_run_p(before, after, criteria.run_to_run_cv) >= criteria.alpha) return Verdict::no_change;
  return change > 0 ? Verdict::worse : Verdict::better;
}

}  // namespace jitterd
