// SPDX-License-Identifier: Apache-2.0
#include "fleet/pair_differences.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace jitterd {

void PairDifferences::add(std::vector<double> reference, std::vector<double> other) {
  if (reference.empty() || other.empty()) return;
  std::sort(other.begin(), other.end());
  std::sort(reference.begin(), reference.end(), std::greater<>());
  pairs_ += other.size() * reference.size();
  blocks_.push_back({std::move(other), std::move(reference)});
}

namespace {

// One row of one stratum's matrix and the columns [lo, hi) that may still hold the target.
struct Row {
  double other;
  const std::vector<double>* reference;
  std::size_t lo, hi;
  double at(std::size_t j) const { return other - (*reference)[j]; }
};

// The columns of `row` whose difference is below `pivot` (or at most `pivot`): a prefix, since a
// row never falls; every column left of lo is below any remaining candidate, every column from hi
// on above, so the answer lies in [lo, hi].
std::size_t columns_below(const Row& row, double pivot, bool inclusive) {
  std::size_t low = row.lo, high = row.hi;
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    const double d = row.at(mid);
    if (d < pivot || (inclusive && d == pivot))
      low = mid + 1;
    else
      high = mid;
  }
  return low;
}

// Candidates left: few enough to collect and select directly.
constexpr std::size_t kDirect = 4096;
constexpr std::size_t kSample = 256;

}  // namespace

double PairDifferences::kth(std::size_t k) const {
  std::vector<Row> rows;
  for (const Block& b : blocks_)
    for (const double o : b.other) rows.push_back({o, &b.reference, 0, b.reference.size()});
  std::mt19937_64 random(k + 1);
  std::size_t below = 0;  // differences left of every row's lo: all smaller than the target
  std::vector<std::size_t> ends(rows.size());
  std::vector<double> sample;
  for (;;) {
    std::size_t remaining = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) ends[i] = remaining += rows[i].hi - rows[i].lo;
    const std::size_t target = k - below;  // among the remaining
    if (remaining <= std::max(kDirect, 2 * rows.size())) {
      std::vector<double> left;
      left.reserve(remaining);
      for (const Row& r : rows)
        for (std::size_t j = r.lo; j < r.hi; ++j) left.push_back(r.at(j));
      std::nth_element(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(target), left.end());
      return left[target];
    }
    sample.clear();
    for (std::size_t s = 0; s < kSample; ++s) {
      const std::size_t u = random() % remaining;
      const std::size_t i = static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), u) - ends.begin());
      sample.push_back(rows[i].at(rows[i].hi - (ends[i] - u)));
    }
    std::sort(sample.begin(), sample.end());
    // Two pivots a few sample standard deviations either side of the target's expected place.
    const double place = static_cast<double>(target) / static_cast<double>(remaining) * kSample;
    const double spread = 2 * std::sqrt(static_cast<double>(kSample));
    const auto pick = [&](double at) {
      return sample[static_cast<std::size_t>(std::clamp(at, 0.0, static_cast<double>(kSample - 1)))];
    };
    const double a = pick(place - spread), b = pick(place + spread);
    std::size_t under_a = 0, upto_b = 0;
    std::vector<std::size_t> cut_a(rows.size()), cut_b(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      under_a += cut_a[i] = columns_below(rows[i], a, false);
      upto_b += cut_b[i] = columns_below(rows[i], b, true);
    }
    if (k < under_a) {  // below a
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i].hi = cut_a[i];
    } else if (k >= upto_b) {  // above b
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i].lo = cut_b[i];
      below = upto_b;
    } else if (a == b) {  // the target is a tie at the one pivot
      return a;
    } else if (under_a == below && upto_b - below == remaining) {
      // Nothing left out (the remaining candidates are all a or b): a's ties decide.
      std::size_t upto_a = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) upto_a += cut_a[i] = columns_below(rows[i], a, true);
      if (k < upto_a) return a;
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i].lo = cut_a[i];
      below = upto_a;
    } else {  // between a and b, both included
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i].lo = cut_a[i], rows[i].hi = cut_b[i];
      below = under_a;
    }
  }
}

}  // namespace jitterd
