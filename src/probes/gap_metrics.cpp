// SPDX-License-Identifier: Apache-2.0
#include "probes/gap_metrics.h"

#include "measure/gap_bounds.h"

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
  // Unnamed and unlabelled: empty strings, no allocation per sample.
  const GapCountsTicks& c = reading.counts;
  const TickScale& scale = reading.scale;
  const double sampled_seconds = scale.to_seconds(c.sampled_ticks);
  const CpuFigures* w = reading.window != nullptr && reading.window->valid ? reading.window : nullptr;
  std::vector<std::pair<double, double>> quantiles;
  if (w != nullptr)
    quantiles = {{0.5, ns_to_seconds(w->p50_ns)},
                 {0.99, ns_to_seconds(w->p99_ns)},
                 {0.999, ns_to_seconds(w->p999_ns)},
                 {0.9999, ns_to_seconds(w->p9999_ns)}};
  std::vector<GapMetric> out;
  out.reserve(kGapFamilies);
  out.push_back(
      {GapFamily::gaps, histogram_seconds({}, {}, {}, c.gaps, scale, gap_bounds_seconds(), sampled_seconds)});
  out.push_back({GapFamily::interruptions, counter({}, {}, {}, static_cast<double>(c.interruptions))});
  out.push_back({GapFamily::stolen, counter({}, {}, {}, scale.to_seconds(c.interrupted_ticks))});
  out.push_back({GapFamily::sampled, counter({}, {}, {}, sampled_seconds)});
  out.push_back({GapFamily::window_quantiles,
                 summary_metric({}, {}, {}, std::move(quantiles), c.gaps.total(), sampled_seconds)});
  if (w != nullptr) out.push_back({GapFamily::window_max, gauge({}, {}, {}, ns_to_seconds(w->max_ns))});
  if (reading.limits) {
    out.push_back({GapFamily::floor, gauge({}, {}, {}, scale.to_seconds(reading.limits->floor_ticks))});
    out.push_back({GapFamily::threshold, gauge({}, {}, {}, scale.to_seconds(reading.limits->threshold_ticks))});
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
