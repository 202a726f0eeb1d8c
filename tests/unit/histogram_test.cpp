// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

#include "measure/histogram.h"

using namespace jitterd;

TEST_CASE("every bucket's edges are contiguous and map back to the bucket", "[histogram]") {
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    const auto lo = histogram_bucket_lowest(i);
    const auto hi = histogram_bucket_highest(i);
    REQUIRE(lo <= hi);
    REQUIRE(histogram_bucket_index(lo) == i);
    REQUIRE(histogram_bucket_index(hi) == i);
    if (i + 1 < kHistogramBuckets) REQUIRE(hi + 1 == histogram_bucket_lowest(i + 1));
  }
  CHECK(histogram_bucket_lowest(0) == 0);
  CHECK(histogram_bucket_highest(kHistogramBuckets - 1) == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("no bucket is wider than 1/16 of its lowest value (the 12.5% budget)", "[histogram]") {
  for (std::size_t i = kHistogramSubBuckets; i < kHistogramBuckets; ++i) {
    const long double lo = histogram_bucket_lowest(i);
    const long double width = static_cast<long double>(histogram_bucket_highest(i)) - lo + 1;
    REQUIRE(width / lo <= 1.0L / 16);
  }
}

TEST_CASE("values below 16 ticks are exact; edges land where expected", "[histogram]") {
  for (std::uint64_t v = 0; v < 16; ++v) CHECK(histogram_bucket_index(v) == v);
  CHECK(histogram_bucket_index(16) == 16);
  CHECK(histogram_bucket_index(31) == 31);
  CHECK(histogram_bucket_index(32) == 32);
  CHECK(histogram_bucket_index(33) == 32);
  CHECK(histogram_bucket_index(34) == 33);
  CHECK(histogram_bucket_index(std::numeric_limits<std::uint64_t>::max()) == kHistogramBuckets - 1);
}

TEST_CASE("quantiles never understate and overstate by at most one bucket", "[histogram]") {
  GapHistogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v);
  HistogramSnapshot s;
  h.snapshot(s);
  REQUIRE(s.total() == 100000);
  for (double q : {0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const auto truth = static_cast<std::uint64_t>(q * 100000);
    const auto got = s.quantile(q);
    CHECK(got >= truth);
    CHECK(static_cast<double>(got) <= static_cast<double>(truth) * (1 + 1.0 / 16) + 1);
  }
  CHECK(HistogramSnapshot{}.quantile(0.5) == 0);
}

TEST_CASE("approximate mean and standard deviation track the exact ones", "[histogram]") {
  GapHistogram h;
  std::mt19937_64 rng(42);
  std::normal_distribution<double> dist(1000.0, 50.0);
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const auto v = static_cast<std::uint64_t>(std::max(1.0, dist(rng)));
    h.record(v);
    sum += static_cast<double>(v);
    sum_sq += static_cast<double>(v) * static_cast<double>(v);
  }
  HistogramSnapshot s;
  h.snapshot(s);
  const double mean = sum / n;
  const double sd = std::sqrt((sum_sq - n * mean * mean) / (n - 1));
  CHECK(s.approximate_mean() == Approx(mean).epsilon(0.01));
  CHECK(s.approximate_stddev() == Approx(sd).epsilon(0.05));
}

TEST_CASE("snapshot differences and sums", "[histogram]") {
  GapHistogram h;
  HistogramSnapshot before, after;
  h.record(5);
  h.snapshot(before);
  h.record(5);
  h.record(1000);
  h.snapshot(after);
  const HistogramSnapshot delta = after.minus(before);
  CHECK(delta.total() == 2);
  CHECK(delta.counts[5] == 1);
  CHECK(delta.counts[histogram_bucket_index(1000)] == 1);
  HistogramSnapshot sum = before;
  sum.add(delta);
  CHECK(sum.counts == after.counts);
}

TEST_CASE("a reader snapshotting during writes sees monotonic counts and the exact final total",
          "[histogram][concurrency]") {
  GapHistogram h;
  constexpr std::uint64_t kWrites = 2'000'000;
  // The writer stops halfway until the reader has taken this many snapshots, so snapshots overlap
  // the writes however the two threads are scheduled (a loaded machine may not run the reader
  // before a free-running writer is done). Bounded, so a reader that never runs fails the checks
  // below instead of hanging the test.
  constexpr int kSnapshotsDuringWrites = 10;
  const auto patience = std::chrono::seconds(30);
  std::atomic<int> snapshots{0};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (std::uint64_t i = 0; i < kWrites; ++i) {
      if (i == kWrites / 2) {
        while (snapshots.load() < kSnapshotsDuringWrites && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      }
      h.record(i % 4096);
    }
    done.store(true);
  });
  HistogramSnapshot previous, current;
  bool monotonic = true;
  while (!done.load()) {
    h.snapshot(current);
    for (std::size_t i = 0; i < kHistogramBuckets; ++i)
      monotonic = monotonic && current.counts[i] >= previous.counts[i];
    previous = current;
    snapshots.fetch_add(1);
  }
  writer.join();
  h.snapshot(current);
  CHECK(monotonic);
  CHECK(snapshots.load() >= kSnapshotsDuringWrites);
  CHECK(current.total() == kWrites);
}

TEST_CASE("quantiles in one pass equal quantile() for each, empty and full histograms too", "[histogram]") {
  const double qs[] = {0, 0.25, 0.5, 0.5, 0.99, 0.999, 0.9999, 1};
  constexpr std::size_t n = sizeof qs / sizeof qs[0];
  std::uint64_t out[n];
  HistogramSnapshot empty;
  empty.quantiles(qs, out, n);
  for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == 0);
  std::mt19937_64 random(7);
  for (int round = 0; round < 50; ++round) {
    HistogramSnapshot h;
    const int used = 1 + static_cast<int>(random() % 40);
    for (int k = 0; k < used; ++k)
      h.counts[random() % kHistogramBuckets] += 1 + random() % (round % 2 ? 3 : 100000);
    h.quantiles(qs, out, n);
    for (std::size_t i = 0; i < n; ++i) {
      INFO("round " << round << ", q " << qs[i]);
      CHECK(out[i] == h.quantile(qs[i]));
    }
  }
}
