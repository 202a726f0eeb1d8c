#include "measure/change_tests.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace jitterd {
namespace {

// Two-sided tail of the standard normal distribution.
double two_sided_normal_p(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

double mean_of(const std::vector<double>& values) {
  return values.empty() ? 0
                        : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// Sum of squared deviations from the sample's own mean, and its degrees of freedom.
std::pair<double, double> squared_deviations(const std::vector<double>& values) {
  const double mean = mean_of(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return {sum, values.empty() ? 0.0 : static_cast<double>(values.size() - 1)};
}

}  // namespace

double mann_whitney_p(const std::vector<double>& before, const std::vector<double>& after) {
  const std::size_t n1 = before.size(), n2 = after.size();
  if (n1 < 2 || n2 < 2) return 1;
  struct Ranked {
    double value;
    bool from_before;
  };
  std::vector<Ranked> all;
  all.reserve(n1 + n2);
  for (double v : before) all.push_back({v, true});
  for (double v : after) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) { return a.value < b.value; });
  // Midranks for ties; the tie term corrects the variance.
  double rank_sum_before = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const double tied = static_cast<double>(j - i);
    tie_term += tied * tied * tied - tied;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].from_before) rank_sum_before += midrank;
    i = j;
  }
  const double a = static_cast<double>(n1), b = static_cast<double>(n2), n = a + b;
  const double u = rank_sum_before - a * (a + 1) / 2;
  const double variance = a * b / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return 1;                            // every value the same
  const double centred = std::fabs(u - a * b / 2) - 0.5;  // continuity correction
  return centred <= 0 ? 1.0 : two_sided_normal_p(centred / std::sqrt(variance));
}

double count_dispersion(const std::vector<double>& before_counts, const std::vector<double>& after_counts) {
  const auto [ss_before, df_before] = squared_deviations(before_counts);
  const auto [ss_after, df_after] = squared_deviations(after_counts);
  const double df = df_before + df_after;
  const double total = std::accumulate(before_counts.begin(), before_counts.end(), 0.0) +
                       std::accumulate(after_counts.begin(), after_counts.end(), 0.0);
  const double windows = static_cast<double>(before_counts.size() + after_counts.size());
  if (df <= 0 || total <= 0) return 1;
  const double pooled_variance = (ss_before + ss_after) / df;
  return std::max(1.0, pooled_variance / (total / windows));
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

Verdict judge(double before, double after, double p_value, const ChangeCriteria& criteria) {
  const double change = relative_change(before, after);
  if (p_value >= criteria.alpha || std::fabs(change) < criteria.min_effect) return Verdict::no_change;
  if (run_to_run_p(before, after, criteria.run_to_run_cv) >= criteria.alpha) return Verdict::no_change;
  return change > 0 ? Verdict::worse : Verdict::better;
}

}  // namespace jitterd
