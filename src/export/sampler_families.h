// SPDX-License-Identifier: Apache-2.0
// The samplers' part of /metrics: the tick counter's families, then per sampled CPU its gap
// histogram, window quantiles and state, a pure function of the readings one scrape took
// (export/collector.h SamplerReading). Called by the collector on a scraping thread.
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "export/collector.h"

namespace jitterd {

// jitterd_tick_info, _frequency_hertz, _frequency_uncertainty_ratio, _resolution_seconds.
void add_tick_families(std::vector<prometheus::MetricFamily>& out, const CounterFrequency& frequency,
                       TickMethod method);

// jitterd_sampler_window_seconds (when any sampler runs), then the jitterd_sampler_* families.
void add_sampler_families(std::vector<prometheus::MetricFamily>& out, const std::vector<SamplerReading>& readings);

}  // namespace jitterd
