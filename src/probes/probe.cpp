#include "probes/probe.h"

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

namespace jitterd {

ProbeMetric gauge(std::string name, std::string help, ProbeLabels labels, double value) {
  ProbeMetric m;
  m.name = std::move(name);
  m.help = std::move(help);
  m.labels = std::move(labels);
  m.value = value;
  return m;
}

ProbeMetric histogram_seconds(std::string name, std::string help, ProbeLabels labels, const HistogramSnapshot& snapshot,
                              const TickScale& scale, const std::vector<double>& bounds, double sum_seconds) {
  ProbeMetric m = gauge(std::move(name), std::move(help), std::move(labels), 0);
  m.type = ProbeMetricType::histogram;
  const auto counts = coarse_cumulative_counts(snapshot, scale, bounds);
  for (std::size_t b = 0; b < bounds.size(); ++b) m.buckets.emplace_back(bounds[b], counts[b]);
  m.count = snapshot.total();
  m.sum = sum_seconds;
  return m;
}

void run_on_cpus(const std::vector<int>& cpus, const std::function<void()>& work) {
  std::exception_ptr failure;
  std::thread thread([&] {
    try {
      cpu_set_t set;
      CPU_ZERO(&set);
      std::string names;
      for (int cpu : cpus) {
        CPU_SET(cpu, &set);
        names += (names.empty() ? "" : ",") + std::to_string(cpu);
      }
      if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        throw std::runtime_error("cannot pin a probe thread to cpu " + names + ": " + std::strerror(errno));
      }
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  thread.join();
  if (failure) std::rethrow_exception(failure);
}

std::string format_number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace jitterd
