// SPDX-License-Identifier: Apache-2.0
// Building prometheus-cpp families at scrape time, for the collector's parts (collector.cpp,
// sampler_families.cpp): a family, a sample in it, a family of one sample, a probe's metric as
// prometheus-cpp's. Pure; any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

#include "probes/probe.h"

namespace jitterd {

inline prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type) {
  return {std::move(name), std::move(help), type, {}};
}

// A counter or gauge sample (by the family's type) appended to `f`.
inline prometheus::ClientMetric& sample(prometheus::MetricFamily& f,
                                        std::vector<prometheus::ClientMetric::Label> labels, double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
  return f.metric.back();
}

inline void add_single(std::vector<prometheus::MetricFamily>& out, prometheus::MetricFamily f,
                       std::vector<prometheus::ClientMetric::Label> labels, double value) {
  sample(f, std::move(labels), value);
  out.push_back(std::move(f));
}

// A probe's metric type and sample as prometheus-cpp's (collector.cpp).
prometheus::MetricType to_metric_type(ProbeMetricType type);
prometheus::ClientMetric to_client_metric(const ProbeMetric& m);

}  // namespace jitterd
