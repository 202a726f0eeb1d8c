// SPDX-License-Identifier: Apache-2.0
// The rank and normal arithmetic compare and fleet share (compare/rank_statistics.h), against
// values worked by hand and the normal table.
#include <catch2/catch.hpp>

#include "compare/rank_statistics.h"

using namespace jitterd;

TEST_CASE("the normal tails match the table and invert") {
  CHECK(two_sided_normal_p(0) == Approx(1.0));
  CHECK(two_sided_normal_p(1.959964) == Approx(0.05).epsilon(1e-5));
  CHECK(two_sided_normal_p(-2.575829) == Approx(0.01).epsilon(1e-5));
  CHECK(two_sided_normal_z(0.05) == Approx(1.959964).epsilon(1e-6));
  CHECK(two_sided_normal_z(0.001) == Approx(3.290527).epsilon(1e-6));
  for (double tail : {0.5, 0.1, 1e-6}) CHECK(two_sided_normal_p(two_sided_normal_z(tail)) == Approx(tail));
}

TEST_CASE("a rank sum gives ties their midrank and corrects the variance for them") {
  // Pooled 1 2 2 2 3: ranks 1, 3 (three times), 5.
  const RankSum r = rank_sum({1, 2, 2}, {2, 3});
  CHECK(r.rank_sum == 7);
  CHECK(r.sample == 3);
  CHECK(r.other == 2);
  CHECK(r.tie_term == 24);  // 3^3 - 3
  CHECK(r.expected() == 9);
  CHECK(r.variance() == Approx(3 * 2 / 12.0 * (6 - 24.0 / 20)));
  // The two sides' rank sums add up to n (n + 1) / 2, whichever is asked for.
  CHECK(r.rank_sum + rank_sum({2, 3}, {1, 2, 2}).rank_sum == 15);
}

TEST_CASE("a rank sum without ties has the textbook variance, and none when all values tie") {
  const RankSum r = rank_sum({1, 5, 9}, {2, 3, 4, 8});
  CHECK(r.rank_sum == 1 + 5 + 7);
  CHECK(r.tie_term == 0);
  CHECK(r.variance() == Approx(3 * 4 * 8 / 12.0));
  CHECK(rank_sum({4, 4}, {4, 4, 4}).variance() == 0);
  CHECK(rank_sum({}, {}).variance() == 0);
}
