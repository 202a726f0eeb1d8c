// The interface every periodic probe implements, and what it returns. A probe measures something
// once per run and hands back metric samples (plain data: only daemon/ knows prometheus-cpp) and
// tables for `jitterd report`. Probes run one at a time on the scheduler's housekeeping thread;
// work that must happen on a given CPU goes through ProbeContext::run_on_cpu, which pauses that
// CPU's sampler when it has one. run() may throw: a failure is reported as data, never fatal.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/affinity.h"
#include "host/host_reader.h"
#include "measure/counter_calibration.h"
#include "measure/histogram.h"
#include "measure/sampler_loop.h"
#include "measure/tick.h"
#include "measure/tick_scale.h"

namespace jitterd {

using ProbeLabels = std::vector<std::pair<std::string, std::string>>;

enum class ProbeMetricType { gauge, counter, histogram };

struct ProbeMetric {
  std::string name;
  std::string help;
  ProbeMetricType type = ProbeMetricType::gauge;
  ProbeLabels labels;
  double value = 0;
  // Histograms only: (upper bound in seconds, cumulative count), then count and sum.
  std::vector<std::pair<double, std::uint64_t>> buckets;
  std::uint64_t count = 0;
  double sum = 0;
};

struct ProbeTable {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct ProbeResult {
  std::vector<ProbeMetric> metrics;
  std::vector<ProbeTable> tables;
  std::vector<std::string> notes;     // one line each: what the numbers mean, what was missing
  std::vector<std::string> warnings;  // one line each for the daemon's log: something changed
};

// Thrown by ProbeContext::check_cancelled when the daemon is stopping.
struct ProbeCancelled : std::runtime_error {
  ProbeCancelled() : std::runtime_error("cancelled: the daemon is stopping") {}
};

struct ProbeContext {
  HostReader host{"/sys", "/proc"};
  TickMethod method = TickMethod::steady_clock;
  CounterFrequency frequency;  // the one the samplers convert with
  std::vector<int> sampled;
  std::vector<int> housekeeping;
  // Runs `work` on `cpu` and returns when it is done (rethrowing what it threw): on that CPU's
  // sampler thread with sampling paused if the CPU is sampled, else on a temporary pinned thread.
  std::function<void(int cpu, const std::function<void()>& work)> run_on_cpu;
  // The running sampler of `cpu` (its counters and interruption ring, which any thread may read),
  // or nullptr when the CPU is not sampled or its sampler is not running. Unset outside the daemon.
  std::function<const SamplerShared*(int cpu)> sampler_of;
  // Set when the daemon stops; probes look at it between their units of work (a rate, a
  // calibration, a window), so a stop waits for at most one unit.
  std::shared_ptr<const std::atomic<bool>> cancel;
  void check_cancelled() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw ProbeCancelled();
  }
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string_view name() const = 0;
  virtual std::chrono::nanoseconds interval() const = 0;
  virtual ProbeResult run(ProbeContext& context) = 0;
};

// One run of a probe as the scheduler and `jitterd report` record it.
struct ProbeStatus {
  explicit ProbeStatus(std::string probe_name = "") : name(std::move(probe_name)) {}
  std::string name;
  bool ran = false;
  bool success = false;
  double duration_seconds = 0;
  double last_run_unix_seconds = 0;
  std::string error;
  ProbeResult result;  // of the last successful run
};

// Runs `probe` once on the calling thread and records how it went; what it throws becomes the
// status's error.
ProbeStatus run_probe(Probe& probe, ProbeContext& context);

// Helpers for probe implementations.
ProbeMetric gauge(std::string name, std::string help, ProbeLabels labels, double value);
// A histogram in seconds from a snapshot in `scale` units, with the given upper bounds.
ProbeMetric histogram_seconds(std::string name, std::string help, ProbeLabels labels,
                              const HistogramSnapshot& snapshot, const TickScale& scale,
                              const std::vector<double>& bounds, double sum_seconds);
std::string format_number(double value, int decimals);

}  // namespace jitterd
