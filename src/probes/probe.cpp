// SPDX-License-Identifier: Apache-2.0
#include "probes/probe.h"

#include <algorithm>
#include <chrono>

#include "measure/clock_ns.h"
#include "probes/probe_registry.h"

namespace jitterd {

std::vector<std::pair<std::uint64_t, std::uint64_t>> grouped_values(std::vector<std::uint64_t> values) {
  std::sort(values.begin(), values.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> grouped;
  for (std::uint64_t v : values) {
    if (grouped.empty() || grouped.back().first != v)
      grouped.emplace_back(v, 1);
    else
      ++grouped.back().second;
  }
  return grouped;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> grouped_values(const HistogramSnapshot& histogram) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> grouped;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i)
    if (histogram.counts[i] != 0) grouped.emplace_back(histogram_bucket_highest(i), histogram.counts[i]);
  return grouped;
}

ProbeMetric gauge(std::string name, std::string help, ProbeLabels labels, double value) {
  ProbeMetric m;
  m.name = std::move(name);
  m.help = std::move(help);
  m.labels = std::move(labels);
  m.value = value;
  return m;
}

ProbeMetric counter(std::string name, std::string help, ProbeLabels labels, double value) {
  ProbeMetric m = gauge(std::move(name), std::move(help), std::move(labels), value);
  m.type = ProbeMetricType::counter;
  return m;
}

ProbeMetric histogram_seconds(std::string name, std::string help, ProbeLabels labels,
                              const HistogramSnapshot& snapshot, const TickScale& scale,
                              const std::vector<double>& bounds, double sum_seconds) {
  ProbeMetric m = gauge(std::move(name), std::move(help), std::move(labels), 0);
  m.type = ProbeMetricType::histogram;
  const auto counts = coarse_cumulative_counts(snapshot, scale, bounds);
  for (std::size_t b = 0; b < bounds.size(); ++b) m.buckets.emplace_back(bounds[b], counts[b]);
  m.count = snapshot.total();
  m.sum = sum_seconds;
  return m;
}

ProbeMetric summary_metric(std::string name, std::string help, ProbeLabels labels,
                           std::vector<std::pair<double, double>> quantiles, std::uint64_t count, double sum) {
  ProbeMetric m = gauge(std::move(name), std::move(help), std::move(labels), 0);
  m.type = ProbeMetricType::summary;
  m.quantiles = std::move(quantiles);
  m.count = count;
  m.sum = sum;
  return m;
}

ProbeStatus run_probe(Probe& probe, ProbeContext& context) {
  ProbeStatus status{std::string(probe.name())};
  status.ran = true;
  status.last_run_unix_seconds = unix_seconds();
  const auto start = std::chrono::steady_clock::now();
  try {
    status.result = probe.run(context);
    shape_tables(status.name, status.result.tables);
    status.success = true;
  } catch (const std::exception& e) {
    status.error = e.what();
  }
  status.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return status;
}

ProbeStatuses share_statuses(std::vector<ProbeStatus> statuses) {
  ProbeStatuses out;
  out.reserve(statuses.size());
  for (ProbeStatus& status : statuses) out.push_back(std::make_shared<const ProbeStatus>(std::move(status)));
  return out;
}

}  // namespace jitterd
