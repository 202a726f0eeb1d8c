// SPDX-License-Identifier: Apache-2.0
#include "probes/gap_metrics.h"

#include "measure/gap_bounds.h"
#include "measure/histogram.h"

namespace jitterd {

namespace {

constexpr ProbeMetricType kTypes[kGapFamilies] = {
    ProbeMetricType::histogram, ProbeMetricType::counter, ProbeMetricType::counter, ProbeMetricType::counter,
    ProbeMetricType::summary,   ProbeMetricType::gauge,   ProbeMetricType::gauge,   ProbeMetricType::gauge};

// Each family's name and help, in GapFamily's order, typed.
GapFamilyTexts texts_of(const std::array<std::pair<const char*, const char*>, kGapFamilies>& names_helps) {
  GapFamilyTexts out;
  for (std::size_t f = 0; f < kGapFamilies; ++f) out[f] = {names_helps[f].first, names_helps[f].second, kTypes[f]};
  return out;
}

}  // namespace

const GapFamilyTexts& sampler_gap_families() {
  static const GapFamilyTexts texts = texts_of({{
      {"jitterd_sampler_gap_seconds", "Gaps between consecutive counter reads of the sampler loop."},
      {"jitterd_sampler_interruptions_total", "Gaps at or above the interruption threshold."},
      {"jitterd_sampler_stolen_seconds_total",
       "Total duration of the gaps at or above the interruption threshold."},
      {"jitterd_sampler_sampled_seconds_total",
       "Time spent sampling (sum of all gaps; excludes burst pauses and probe pauses)."},
      {"jitterd_sampler_window_gap_seconds",
       "Gap quantiles over the rolling window (upper edge of the histogram bucket, at most the window max); sum "
       "and count are cumulative."},
      {"jitterd_sampler_window_max_gap_seconds", "Exact largest gap over the rolling window."},
      {"jitterd_sampler_loop_floor_seconds",
       "Smallest gap seen in the warm-up window: the resolution floor of the loop."},
      {"jitterd_sampler_interruption_threshold_seconds", "Gap at or above which a gap counts as an interruption."},
  }});
  return texts;
}

const GapFamilyTexts& loop_gap_families() {
  static const GapFamilyTexts texts = texts_of({{
      {"jitterd_loop_gap_seconds", "Gaps between consecutive iterations of the application's loop."},
      {"jitterd_loop_interruptions_total", "Loop gaps at or above the interruption threshold."},
      {"jitterd_loop_stolen_seconds_total",
       "Total duration of the loop's gaps at or above the interruption threshold."},
      {"jitterd_loop_sampled_seconds_total", "Time the loop recorded (sum of its gaps, as published)."},
      {"jitterd_loop_window_gap_seconds",
       "Loop gap quantiles over the rolling window (upper edge of the histogram bucket, at most the window max); "
       "sum and count are cumulative."},
      {"jitterd_loop_window_max_gap_seconds", "Exact largest loop gap over the rolling window."},
      {"jitterd_loop_floor_seconds",
       "Smallest gap of the loop's warm-up (its first 4096 gaps): its resolution floor."},
      {"jitterd_loop_interruption_threshold_seconds",
       "Loop gap at or above which a gap counts as an interruption."},
  }});
  return texts;
}

std::vector<GapMetric> gap_samples(const GapReading& reading) {
  std::vector<GapMetric> out;
  out.reserve(kGapFamilies);  // one sample a family at most: the pointers add() returns stay valid
  const auto add = [&](GapFamily f, ProbeMetricType type, double value) {
    ProbeMetric m;
    m.type = type;
    m.value = value;
    out.push_back({f, std::move(m)});
    return &out.back().metric;
  };
  const GapCountsTicks& c = reading.counts;
  const double sampled_seconds = reading.scale.to_seconds(c.sampled_ticks);
  const std::uint64_t total = c.gaps.total();
  ProbeMetric* gaps = add(GapFamily::gaps, ProbeMetricType::histogram, 0);
  const std::vector<double>& bounds = gap_bounds_seconds();
  const std::vector<std::uint64_t> counts = coarse_cumulative_counts(c.gaps, reading.scale, bounds);
  gaps->buckets.reserve(bounds.size());
  for (std::size_t b = 0; b < bounds.size(); ++b) gaps->buckets.emplace_back(bounds[b], counts[b]);
  gaps->count = total;
  gaps->sum = sampled_seconds;
  add(GapFamily::interruptions, ProbeMetricType::counter, static_cast<double>(c.interruptions));
  add(GapFamily::stolen, ProbeMetricType::counter, reading.scale.to_seconds(c.interrupted_ticks));
  add(GapFamily::sampled, ProbeMetricType::counter, sampled_seconds);
  ProbeMetric* summary = add(GapFamily::window_quantiles, ProbeMetricType::summary, 0);
  summary->count = total;
  summary->sum = sampled_seconds;
  const CpuFigures* w = reading.window;
  if (w != nullptr && w->valid) {
    summary->quantiles = {{0.5, ns_to_seconds(w->p50_ns)},
                          {0.99, ns_to_seconds(w->p99_ns)},
                          {0.999, ns_to_seconds(w->p999_ns)},
                          {0.9999, ns_to_seconds(w->p9999_ns)}};
    add(GapFamily::window_max, ProbeMetricType::gauge, ns_to_seconds(w->max_ns));
  }
  if (reading.limits) {
    add(GapFamily::floor, ProbeMetricType::gauge, reading.scale.to_seconds(reading.limits->floor_ticks));
    add(GapFamily::threshold, ProbeMetricType::gauge, reading.scale.to_seconds(reading.limits->threshold_ticks));
  }
  return out;
}

std::vector<GapMetric> gap_metrics(const GapFamilyTexts& texts, const ProbeLabels& labels,
                                   const GapReading& reading) {
  std::vector<GapMetric> out = gap_samples(reading);
  for (GapMetric& g : out) {
    const GapFamilyText& t = texts[static_cast<std::size_t>(g.family)];
    g.metric.name = t.name;
    g.metric.help = t.help;
    g.metric.labels = labels;
  }
  return out;
}

}  // namespace jitterd
