// SPDX-License-Identifier: Apache-2.0
// The rank and normal-distribution arithmetic that compare's change tests (within a host, between
// two runs: compare/change_tests) and fleet's statistics (across hosts: fleet/fleet_statistics)
// are built from, in one place so that both rank ties and take tails the same way:
//  - the rank sum of one sample among two pooled, with midranks for ties, its mean and its
//    variance under the null hypothesis with the tie correction (Mann-Whitney, van Elteren);
//  - the two-sided tail of the standard normal distribution and its inverse.
// Pure functions, safe from any thread.
#pragma once

#include <vector>

namespace jitterd {

// Two-sided tail of the standard normal distribution: P(|Z| >= |z|).
double two_sided_normal_p(double z);

// The z >= 0 with two_sided_normal_p(z) == tail (0 < tail < 1), e.g. 1.96 for 0.05; by bisection,
// erfc being monotone.
double two_sided_normal_z(double tail);

// The rank sum of `sample` among the values of `sample` and `other` pooled (midranks for ties),
// with what the null hypothesis (both from one distribution) expects of it.
struct RankSum {
  double rank_sum = 0;
  double sample = 0, other = 0;  // the two sizes
  double tie_term = 0;           // sum over groups of tied values of t^3 - t

  double expected() const { return sample * (sample + other + 1) / 2; }
  // With the tie correction; 0 when every value is the same.
  double variance() const;
};
RankSum rank_sum(const std::vector<double>& sample, const std::vector<double>& other);

}  // namespace jitterd
