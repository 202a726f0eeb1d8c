// SPDX-License-Identifier: Apache-2.0
// The gap families of one measured CPU, whatever measures it: a sampled CPU's (jitterd_sampler_,
// export/sampler_families.h) and a loop's (jitterd_loop_, probes/loops_probe.h) come from this one
// builder over one reading, so which families there are, their units, the window's quantiles and
// when each is present cannot differ between the two; only the names and help texts do. Pure
// functions; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/cpu_figures.h"
#include "measure/gap_counts.h"
#include "measure/tick_scale.h"
#include "probes/probe.h"

namespace jitterd {

// The families, in the order /metrics shows them.
enum class GapFamily : std::size_t {
  gaps,              // histogram of every gap since the start, in seconds
  interruptions,     // gaps at or above the threshold since the start
  stolen,            // their total duration
  sampled,           // the sum of all gaps
  window_quantiles,  // summary: the rolling window's p50 .. p99.99, count and sum since the start
  window_max,        // the window's exact largest gap (only with a window)
  floor,             // the warm-up's smallest gap (only once known)
  threshold,         // the interruption threshold (only once known)
};
inline constexpr std::size_t kGapFamilies = 8;

struct GapFamilyText {
  std::string name, help;
  ProbeMetricType type = ProbeMetricType::gauge;
};
using GapFamilyTexts = std::array<GapFamilyText, kGapFamilies>;

// The samplers' names and help texts (jitterd_sampler_*) and the loops' (jitterd_loop_*).
const GapFamilyTexts& sampler_gap_families();
const GapFamilyTexts& loop_gap_families();

// One measured CPU as its families show it: its counters since the start in its own ticks, its
// rolling window's figures (null or not valid: no quantiles, no max yet), and its floor and
// threshold in ticks (none: not known yet, no floor or threshold sample).
struct GapReading {
  const GapCountsTicks& counts;
  TickScale scale;
  const CpuFigures* window = nullptr;
  struct Limits {
    std::uint64_t floor_ticks = 0, threshold_ticks = 0;
  };
  std::optional<Limits> limits;
};

struct GapMetric {
  GapFamily family;
  ProbeMetric metric;
};

// The samples of `reading` without names or labels (the scrape's samplers name each family once,
// not each sample), in the families' order, each typed as its family.
std::vector<GapMetric> gap_samples(const GapReading& reading);

// The samples of `reading`, labelled `labels`, named and described by `texts`, in the families'
// order: the histogram at measure/gap_bounds.h's bounds, the interruptions, stolen and sampled
// time, the window's summary (always; quantiles only with a valid window), its max, the floor and
// threshold.
std::vector<GapMetric> gap_metrics(const GapFamilyTexts& texts, const ProbeLabels& labels,
                                   const GapReading& reading);

}  // namespace jitterd
