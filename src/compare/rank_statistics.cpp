// SPDX-License-Identifier: Apache-2.0
#include "compare/rank_statistics.h"

#include <algorithm>
#include <cmath>

namespace jitterd {

double two_sided_normal_p(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

double two_sided_normal_z(double tail) {
  double low = 0, high = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (low + high) / 2;
    (two_sided_normal_p(mid) > tail ? low : high) = mid;
  }
  return (low + high) / 2;
}

double RankSum::variance() const {
  const double n = sample + other;
  if (n < 2) return 0;
  return std::max(0.0, sample * other / 12.0 * ((n + 1) - tie_term / (n * (n - 1))));
}

RankSum rank_sum(const std::vector<double>& sample, const std::vector<double>& other) {
  struct Ranked {
    double value;
    bool in_sample;
  };
  std::vector<Ranked> all;
  all.reserve(sample.size() + other.size());
  for (double v : sample) all.push_back({v, true});
  for (double v : other) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) { return a.value < b.value; });
  RankSum out;
  out.sample = static_cast<double>(sample.size());
  out.other = static_cast<double>(other.size());
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].value == all[i].value) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const double tied = static_cast<double>(j - i);
    out.tie_term += tied * tied * tied - tied;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].in_sample) out.rank_sum += midrank;
    i = j;
  }
  return out;
}

}  // namespace jitterd
