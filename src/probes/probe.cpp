#include "probes/probe.h"

#include <chrono>
#include <cstdio>

#include "measure/clock_ns.h"

namespace jitterd {

ProbeMetric gauge(std::string name, std::string help, ProbeLabels labels, double value) {
  ProbeMetric m;
  m.name = std::move(name);
  m.help = std::move(help);
  m.labels = std::move(labels);
  m.value = value;
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

ProbeStatus run_probe(Probe& probe, ProbeContext& context) {
  ProbeStatus status{std::string(probe.name())};
  status.ran = true;
  status.last_run_unix_seconds = unix_seconds();
  const auto start = std::chrono::steady_clock::now();
  try {
    status.result = probe.run(context);
    status.success = true;
  } catch (const std::exception& e) {
    status.error = e.what();
  }
  status.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return status;
}

std::string format_number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace jitterd
