// SPDX-License-Identifier: Apache-2.0
#include "measure/histogram.h"

#include <algorithm>
#include <cmath>

#include "measure/tick_scale.h"

namespace jitterd {

namespace {
double bucket_midpoint(std::size_t index) {
  return (static_cast<double>(histogram_bucket_lowest(index)) +
          static_cast<double>(histogram_bucket_highest(index))) /
         2.0;
}
}  // namespace

std::uint64_t HistogramSnapshot::total() const {
  std::uint64_t sum = 0;
  for (auto c : counts) sum += c;
  return sum;
}

void HistogramSnapshot::quantiles(const double* q, std::uint64_t* out, std::size_t count) const {
  const std::uint64_t n = total();
  std::size_t next = 0;
  if (n == 0) {
    for (; next < count; ++next) out[next] = 0;
    return;
  }
  const auto rank_of = [n](double quantile) {
    auto rank = static_cast<std::uint64_t>(std::ceil(quantile * static_cast<double>(n)));
    return std::clamp<std::uint64_t>(rank, 1, n);
  };
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kHistogramBuckets && next < count; ++i) {
    seen += counts[i];
    while (next < count && seen >= rank_of(q[next])) out[next++] = histogram_bucket_highest(i);
  }
  for (; next < count; ++next) out[next] = histogram_bucket_highest(kHistogramBuckets - 1);
}

std::uint64_t HistogramSnapshot::quantile(double q) const {
  const std::uint64_t n = total();
  if (n == 0) return 0;
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return histogram_bucket_highest(i);
  }
  return histogram_bucket_highest(kHistogramBuckets - 1);
}

double HistogramSnapshot::approximate_mean() const {
  const std::uint64_t n = total();
  if (n == 0) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    if (counts[i] != 0) sum += static_cast<double>(counts[i]) * bucket_midpoint(i);
  }
  return sum / static_cast<double>(n);
}

double HistogramSnapshot::approximate_stddev() const {
  const std::uint64_t n = total();
  if (n < 2) return 0.0;
  const double mean = approximate_mean();
  double sum_sq = 0.0;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    if (counts[i] == 0) continue;
    const double d = bucket_midpoint(i) - mean;
    sum_sq += static_cast<double>(counts[i]) * d * d;
  }
  // Sheppard's correction: spreading each value over its bucket adds width^2/12 of variance that
  // the data does not have; remove it (wide buckets would otherwise inflate sd by several %).
  double spread = 0.0;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    if (counts[i] == 0 || i < kHistogramSubBuckets) continue;  // exact buckets carry no spread
    const double width = static_cast<double>(histogram_bucket_highest(i) - histogram_bucket_lowest(i) + 1);
    spread += static_cast<double>(counts[i]) * width * width / 12.0;
  }
  const double variance = (sum_sq - spread) / static_cast<double>(n - 1);
  return variance > 0 ? std::sqrt(variance) : 0.0;
}

HistogramSnapshot HistogramSnapshot::minus(const HistogramSnapshot& older) const {
  HistogramSnapshot out;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) out.counts[i] = counts[i] - older.counts[i];
  return out;
}

void HistogramSnapshot::add(const HistogramSnapshot& other) {
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) counts[i] += other.counts[i];
}

std::vector<std::uint64_t> coarse_cumulative_counts(const HistogramSnapshot& snapshot, const TickScale& scale,
                                                    const std::vector<double>& bounds) {
  std::vector<std::uint64_t> out(bounds.size(), 0);
  std::size_t b = 0;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < kHistogramBuckets && b < bounds.size(); ++i) {
    const double highest = scale.to_seconds(histogram_bucket_highest(i));
    while (b < bounds.size() && highest > bounds[b]) out[b++] = running;
    running += snapshot.counts[i];
  }
  while (b < bounds.size()) out[b++] = running;
  return out;
}

}  // namespace jitterd
