// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <set>

#include "measure/gap_bounds.h"
#include "probes/gap_metrics.h"

using namespace jitterd;

namespace {

// 1 GHz: a tick is a nanosecond. 990 gaps of 100 ns, 10 of 50 us (the interruptions).
GapCountsTicks gap_counts_of_a_cpu() {
  GapCountsTicks c;
  c.gaps.counts[histogram_bucket_index(100)] = 990;
  c.gaps.counts[histogram_bucket_index(50'000)] = 10;
  c.sampled_ticks = 990 * 100 + 10 * 50'000;
  c.interruptions = 10;
  c.interrupted_ticks = 10 * 50'000;
  return c;
}

std::vector<GapFamily> families_of(const std::vector<GapMetric>& metrics) {
  std::vector<GapFamily> out;
  for (const GapMetric& m : metrics) out.push_back(m.family);
  return out;
}

}  // namespace

TEST_CASE("a sampled CPU's and a loop's gap families are one builder's: the same samples under their own names") {
  const GapCountsTicks counts = gap_counts_of_a_cpu();
  const TickScale scale(1e9);
  CpuFigures window = cpu_figures(counts, 50'000, scale);
  const GapReading reading{counts, scale, &window, GapReading::Limits{90, 1000}};
  const std::vector<GapMetric> sampler = gap_metrics(sampler_gap_families(), {{"cpu", "3"}}, reading);
  const std::vector<GapMetric> loop = gap_metrics(loop_gap_families(), {{"loop", "rx"}, {"cpu", "3"}}, reading);

  REQUIRE(families_of(sampler) == std::vector<GapFamily>{GapFamily::gaps, GapFamily::interruptions,
                                                         GapFamily::stolen, GapFamily::sampled,
                                                         GapFamily::window_quantiles, GapFamily::window_max,
                                                         GapFamily::floor, GapFamily::threshold});
  REQUIRE(families_of(loop) == families_of(sampler));
  for (std::size_t i = 0; i < sampler.size(); ++i) {
    const ProbeMetric& s = sampler[i].metric;
    const ProbeMetric& l = loop[i].metric;
    CHECK(s.name.starts_with("jitterd_sampler_"));
    CHECK(l.name.starts_with("jitterd_loop_"));
    CHECK(s.type == l.type);
    CHECK(s.type == sampler_gap_families()[i].type);  // a sample typed as its family
    CHECK(s.value == l.value);
    CHECK(s.buckets == l.buckets);
    CHECK(s.quantiles == l.quantiles);
    CHECK(s.count == l.count);
    CHECK(s.sum == l.sum);
    CHECK(l.labels == ProbeLabels{{"loop", "rx"}, {"cpu", "3"}});
  }
  // The figures, in seconds.
  const auto value = [&](GapFamily f) { return sampler[static_cast<std::size_t>(f)].metric; };
  CHECK(value(GapFamily::gaps).count == 1000);
  CHECK(value(GapFamily::gaps).buckets.size() == gap_bounds_seconds().size());
  CHECK(value(GapFamily::gaps).sum == Approx(599e-6));
  CHECK(value(GapFamily::interruptions).value == 10);
  CHECK(value(GapFamily::stolen).value == Approx(500e-6));
  CHECK(value(GapFamily::sampled).value == Approx(599e-6));
  CHECK(value(GapFamily::window_quantiles).quantiles.size() == 4);
  CHECK(value(GapFamily::window_quantiles).count == 1000);
  CHECK(value(GapFamily::window_max).value == Approx(50e-6));
  CHECK(value(GapFamily::floor).value == Approx(90e-9));
  CHECK(value(GapFamily::threshold).value == Approx(1e-6));
}

TEST_CASE("gap families: no window yet, no quantiles and no max; no limits yet, no floor and no threshold") {
  const GapCountsTicks counts = gap_counts_of_a_cpu();
  const CpuFigures not_yet;  // valid false
  for (const CpuFigures* window : {static_cast<const CpuFigures*>(nullptr), &not_yet}) {
    const std::vector<GapMetric> loop =
        gap_metrics(loop_gap_families(), {}, GapReading{counts, TickScale(1e9), window, std::nullopt});
    REQUIRE(families_of(loop) == std::vector<GapFamily>{GapFamily::gaps, GapFamily::interruptions,
                                                        GapFamily::stolen, GapFamily::sampled,
                                                        GapFamily::window_quantiles});
    // The summary is there, cumulative, without quantiles.
    CHECK(loop.back().metric.quantiles.empty());
    CHECK(loop.back().metric.count == 1000);
  }
}

TEST_CASE("gap families: each subject names every family once, typed as its kind") {
  for (const GapFamilyTexts* texts : {&sampler_gap_families(), &loop_gap_families()}) {
    std::set<std::string> names;
    for (const GapFamilyText& t : *texts) {
      CHECK(names.insert(t.name).second);
      CHECK(!t.help.empty());
      CHECK(t.name.ends_with("_total") == (t.type == ProbeMetricType::counter));
    }
  }
}
