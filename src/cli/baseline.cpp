#include "cli/baseline.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <iostream>
#include <set>
#include <thread>

#include "cli/progress.h"
#include "export/build_info.h"
#include "host/cpu_list.h"
#include "host/posture.h"
#include "host/text.h"
#include "probes/probe_registry.h"
#include "sampling/probe_context.h"

namespace jitterd {
namespace {

struct CpuCounters {
  HistogramSnapshot histogram;
  std::uint64_t sampled_ticks = 0, interruptions = 0, interrupted_ticks = 0;
};

CpuCounters read_counters(const SamplerShared& shared) {
  CpuCounters c;
  shared.histogram.snapshot(c.histogram);
  c.sampled_ticks = shared.sampled_ticks.load(std::memory_order_relaxed);
  c.interruptions = shared.interruption_count.load(std::memory_order_relaxed);
  c.interrupted_ticks = shared.interrupted_ticks.load(std::memory_order_relaxed);
  return c;
}

// One value when every CPU agrees ("performance"), else "cpu:value" pairs.
std::string governors(const Posture& posture, const std::vector<int>& cpus) {
  std::set<std::string> distinct;
  std::string listed;
  for (const CpuFreq& f : posture.cpufreq) {
    if (std::find(cpus.begin(), cpus.end(), f.cpu) == cpus.end()) continue;
    const std::string governor = f.governor.value_or("");
    distinct.insert(governor);
    listed += fmt::format("{}{}:{}", listed.empty() ? "" : " ", f.cpu, governor);
  }
  if (distinct.size() == 1) return *distinct.begin();
  return listed;
}

}  // namespace

std::vector<BaselineCpu> record_sub_windows(SamplerSet& samplers, Duration duration, double counter_hertz) {
  const double ns_per_tick = 1e9 / counter_hertz;
  const auto seconds_of = [&](std::uint64_t ticks) { return static_cast<double>(ticks) / counter_hertz; };
  std::vector<BaselineCpu> cpus(samplers.size());
  std::vector<CpuCounters> previous(samplers.size());
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    cpus[i].cpu = samplers.worker(i).settings().cpu;
    if (const SamplerShared* shared = samplers.worker(i).shared()) previous[i] = read_counters(*shared);
  }
  const auto sub_window = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(kSubWindowSeconds));
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + duration;
  // Absolute deadlines, so the sub-windows do not drift with this thread's wake-up latency.
  for (auto deadline = start + sub_window; deadline <= end + sub_window / 2; deadline += sub_window) {
    std::this_thread::sleep_until(std::min(deadline, end));
    for (std::size_t i = 0; i < samplers.size(); ++i) {
      const SamplerShared* shared = samplers.worker(i).shared();
      if (!shared) continue;
      const CpuCounters now = read_counters(*shared);
      const double seconds = seconds_of(now.sampled_ticks - previous[i].sampled_ticks);
      if (seconds > 0)
        cpus[i].sub_windows.push_back(
            sub_window_of(now.histogram.minus(previous[i].histogram), ns_per_tick, seconds,
                          now.interruptions - previous[i].interruptions,
                          seconds_of(now.interrupted_ticks - previous[i].interrupted_ticks), kTailThresholdsNs));
      previous[i] = now;
    }
    if (deadline >= end) break;
  }
  samplers.stop();
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    const SamplerWorker& worker = samplers.worker(i);
    BaselineCpu& c = cpus[i];
    c.error = worker.startup().error;
    const SamplerShared* shared = worker.shared();
    if (!shared) continue;
    const CpuCounters total = read_counters(*shared);
    c.histogram = total.histogram;
    c.samples = total.histogram.total();
    c.sampled_seconds = seconds_of(total.sampled_ticks);
    c.stolen_seconds = seconds_of(total.interrupted_ticks);
    c.interruptions = total.interruptions;
    c.floor_ns = static_cast<double>(worker.startup().floor_ticks) * ns_per_tick;
    c.threshold_ns = static_cast<double>(worker.startup().threshold_ticks) * ns_per_tick;
    c.max_ns = static_cast<double>(shared->max_gap.load(std::memory_order_relaxed)) * ns_per_tick;
  }
  return cpus;
}

Baseline baseline_header(const SamplingPlan& plan, const HostReader& host, const CounterFrequency& frequency,
                         double duration_seconds) {
  Baseline b;
  b.created = utc_text(static_cast<double>(std::time(nullptr)));
  b.jitterd_version = this_build().version;
  const Posture posture = read_posture(host);
  b.fingerprint = fingerprint_fields(posture.fingerprint);
  b.fingerprint.emplace_back("hostname", std::string(trim(host.read_proc("sys/kernel/hostname").value_or(""))));
  b.fingerprint.emplace_back("governor", governors(posture, plan.selection.sampled));
  b.fingerprint.emplace_back("clocksource", posture.clocksource ? posture.clocksource->current : "");
  b.tick_method = std::string(to_string(plan.method));
  b.counter_hertz = frequency.hertz;
  b.duration_seconds = duration_seconds;
  b.sub_window_seconds = kSubWindowSeconds;
  const SamplerConfig& s = plan.config.sampler;
  b.configuration = {
      {"cpus", format_cpu_list(plan.selection.sampled)},
      {"housekeeping_cpus", format_cpu_list(plan.selection.housekeeping)},
      {"tick_method", b.tick_method},
      {"counter_source", frequency.source},
      {"interruption_threshold", s.interruption_threshold
                                     ? format_duration(*s.interruption_threshold)
                                     : fmt::format("auto (floor x {})", s.threshold_floor_multiple)},
      {"duty_cycle", "continuous"},
      {"realtime_priority", std::to_string(s.realtime_priority)},
      {"duration", fmt::format("{}s", duration_seconds)},
      {"sub_window", fmt::format("{}s", kSubWindowSeconds)},
  };
  return b;
}

BaselineProbe baseline_probe(const ProbeStatus& status) {
  return {status.name,         status.success,        status.error, status.result.tables,
          status.result.notes, status.result.samples, true};
}

int run_baseline(const CommandLine& cl) {
  check_baseline_target(cl.output_path);  // before measuring, not after
  const HostReader host = host_reader(cl);
  SamplingPlan plan = make_sampling_plan(load_config(config_source(cl)), host, current_affinity());
  for (const auto& p : plan.machine_problems) spdlog::warn("{}", p);
  plan.config.sampler.duty_cycle = DutyCycleMode::continuous;  // a baseline sees every gap
  restrict_current_thread(plan.selection.housekeeping);
  Progress progress;  // after the restriction: its thread stays on the housekeeping CPUs
  progress.step("calibrating the counter");
  const CounterFrequency frequency = counter_frequency(plan.method, std::chrono::milliseconds(250));
  const double seconds = std::chrono::duration<double>(cl.report_duration).count();
  Baseline baseline = baseline_header(plan, host, frequency, seconds);
  {
    SamplerSet samplers(sampler_settings(plan, TickScale(frequency.hertz)));
    samplers.start();
    progress.step(fmt::format("sampling cpus {}", format_cpu_list(plan.selection.sampled)), cl.report_duration);
    baseline.cpus = record_sub_windows(samplers, cl.report_duration, frequency.hertz);
  }
  // Probes after the samplers stop, so they neither disturb the gaps nor are disturbed by them.
  ProbeContext context = make_probe_context(plan, host, frequency);
  for (std::size_t i = 0; i < cl.baseline_probes.size(); ++i) {
    const std::string& name = cl.baseline_probes[i];
    progress.step(fmt::format("probe {} ({}/{})", name, i + 1, cl.baseline_probes.size()));
    std::unique_ptr<Probe> probe = make_probe(name, plan.config.probes);
    baseline.probes.push_back(baseline_probe(run_probe(*probe, context)));
    if (!baseline.probes.back().success) {
      progress.clear();
      spdlog::warn("probe {} failed: {}", name, baseline.probes.back().error);
    }
  }
  progress.step("writing the baseline");
  write_baseline(baseline, cl.output_path);
  progress.clear();
  std::cerr << fmt::format(
      "jitterd: baseline of cpus {} ({:.1f} s, probes: {}) written to {}\n",
      format_cpu_list(plan.selection.sampled), seconds,
      cl.baseline_probes.empty() ? "none" : fmt::format("{}", fmt::join(cl.baseline_probes, ",")),
      cl.output_path == kStandardOutputPath ? "standard output" : cl.output_path);
  return 0;
}

}  // namespace jitterd
