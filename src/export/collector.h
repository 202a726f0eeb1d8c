// The one prometheus-cpp Collectable of the daemon: every family is built at scrape time from the
// samplers' single-writer counters (relaxed loads) and the housekeeping window summaries, so the
// hot loop never touches a prometheus-cpp object or its mutexes.
// Thread-safety: Collect() runs on the web server's threads; the setters may be called from the
// main thread at any time (guarded by one mutex).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "export/build_info.h"
#include "host/host_reader.h"
#include "measure/counter_calibration.h"
#include "probes/probe.h"
#include "sampling/sampler_set.h"

namespace jitterd {

// Upper bounds (seconds) of the exported gap histogram: 10 ns .. 100 ms in 1-2.5-5 steps.
const std::vector<double>& gap_histogram_bounds();

class Collector : public prometheus::Collectable {
 public:
  Collector(HostReader host, BuildInfo build);

  void set_samplers(std::shared_ptr<const SamplerSet> samplers, CounterFrequency frequency, TickMethod method);
  // `statuses` gives the probes' latest runs; it is called at scrape time from the web threads.
  void set_probes(std::function<std::vector<ProbeStatus>()> statuses);
  void record_reload(bool success, double unix_seconds);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  void collect_samplers(std::vector<prometheus::MetricFamily>& out) const;
  void collect_probes(std::vector<prometheus::MetricFamily>& out) const;

  HostReader host_;
  BuildInfo build_;
  mutable std::mutex mutex_;
  std::shared_ptr<const SamplerSet> samplers_;
  std::function<std::vector<ProbeStatus>()> probe_statuses_;
  CounterFrequency frequency_;
  TickMethod method_ = TickMethod::steady_clock;
  bool last_reload_ok_ = true;
  double last_reload_success_ = 0;
};

}  // namespace jitterd
