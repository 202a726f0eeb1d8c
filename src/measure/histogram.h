// SPDX-License-Identifier: Apache-2.0
// Log-linear histogram of gaps in ticks: exact below 16 ticks, then every power of two split into
// 16 linear sub-buckets, so no bucket is wider than 1/16 (6.25%) of its lower edge and 976
// buckets cover every 64-bit value. Written by hand rather than borrowed because the hot loop
// needs a branch-free index, one writer and no read-modify-write (HdrHistogram's C++ ports use
// atomic increments or locks).
//
// GapHistogram: exactly one thread calls record(); any thread may call snapshot() concurrently
// (relaxed loads: each bucket is exact, the set of buckets is as of "about now").
// HistogramSnapshot: a plain value, owned by one thread at a time.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jitterd {

inline constexpr unsigned kHistogramSubBits = 4;
inline constexpr std::size_t kHistogramSubBuckets = std::size_t{1} << kHistogramSubBits;
inline constexpr std::size_t kHistogramBuckets = (65 - kHistogramSubBits) * kHistogramSubBuckets;

constexpr std::size_t histogram_bucket_index(std::uint64_t value) {
  if (value < kHistogramSubBuckets) return static_cast<std::size_t>(value);
  const unsigned top = 63 - static_cast<unsigned>(std::countl_zero(value));
  const unsigned shift = top - kHistogramSubBits;
  return ((static_cast<std::size_t>(shift) + 1) << kHistogramSubBits) +
         static_cast<std::size_t>((value >> shift) - kHistogramSubBuckets);
}

// Smallest value that lands in bucket `index`.
constexpr std::uint64_t histogram_bucket_lowest(std::size_t index) {
  if (index < kHistogramSubBuckets) return index;
  const std::size_t group = index >> kHistogramSubBits;
  const std::uint64_t mantissa = kHistogramSubBuckets + (index & (kHistogramSubBuckets - 1));
  return mantissa << (group - 1);
}

// Largest value that lands in bucket `index` (inclusive).
constexpr std::uint64_t histogram_bucket_highest(std::size_t index) {
  if (index < kHistogramSubBuckets) return index;
  const std::size_t group = index >> kHistogramSubBits;
  return histogram_bucket_lowest(index) + ((std::uint64_t{1} << (group - 1)) - 1);
}

struct HistogramSnapshot {
  std::array<std::uint64_t, kHistogramBuckets> counts{};

  std::uint64_t total() const;
  bool empty() const { return total() == 0; }
  // Highest value of the bucket holding the q-quantile (rank ceil(q * total)): never below the
  // true quantile, above it by at most one bucket width. 0 when empty.
  std::uint64_t quantile(double q) const;
  // quantile(q[i]) into out[i] for each of `count` quantiles in ascending order, in one pass over
  // the buckets (the window summaries of every sampler, once a second).
  void quantiles(const double* q, std::uint64_t* out, std::size_t count) const;
  // Mean and standard deviation with each value taken at its bucket's midpoint; the deviation
  // has Sheppard's correction for the bucket widths.
  double approximate_mean() const;
  double approximate_stddev() const;
  // Values of `this` minus `older` (an earlier snapshot of the same histogram).
  HistogramSnapshot minus(const HistogramSnapshot& older) const;
  void add(const HistogramSnapshot& other);
};

class TickScale;

// Cumulative counts per upper bound (seconds), for exporting with coarser fixed bounds. A fine
// bucket counts under a bound only if its highest value is at or below the bound, so each count
// is exact or short by at most one fine bucket (values are never placed below where they were).
std::vector<std::uint64_t> coarse_cumulative_counts(const HistogramSnapshot& snapshot, const TickScale& scale,
                                                    const std::vector<double>& bounds);

class GapHistogram {
 public:
  // Single writer: a relaxed load and store compile to plain moves, no lock prefix.
  void record(std::uint64_t gap) {
    auto& bucket = counts_[histogram_bucket_index(gap)];
    bucket.store(bucket.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void snapshot(HistogramSnapshot& out) const {
    for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
      out.counts[i] = counts_[i].load(std::memory_order_relaxed);
    }
  }

 private:
  std::array<std::atomic<std::uint64_t>, kHistogramBuckets> counts_{};
};

}  // namespace jitterd
