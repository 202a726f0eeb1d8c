// SPDX-License-Identifier: Apache-2.0
#include "cli/baseline.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <iostream>
#include <thread>

#include "cli/progress.h"
#include "export/build_info.h"
#include "host/cpu_list.h"
#include "host/posture.h"
#include "probes/probe_registry.h"
#include "sampling/probe_context.h"
#include "sampling/sampling_start.h"

namespace jitterd {

std::vector<BaselineCpu> record_sub_windows(SamplerSet& samplers, Duration duration, double counter_hertz,
                                            ApplicationRecording* application) {
  const double ns_per_tick = 1e9 / counter_hertz;
  std::vector<BaselineCpu> cpus(samplers.size());
  std::vector<GapCountsTicks> previous(samplers.size());
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    cpus[i].cpu = samplers.worker(i).settings().cpu;
    if (const SamplerShared* shared = samplers.worker(i).shared()) previous[i] = read_counts(*shared);
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
      const GapCountsTicks now = read_counts(*shared);
      add_sub_window(cpus[i], now.minus(previous[i]), counter_hertz);
      previous[i] = now;
    }
    if (application) application->read();
    if (deadline >= end) break;
  }
  samplers.stop();
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    const SamplerWorker& worker = samplers.worker(i);
    BaselineCpu& c = cpus[i];
    c.error = worker.startup().error;
    const SamplerShared* shared = worker.shared();
    if (!shared) continue;
    set_totals(c, read_counts(*shared), counter_hertz);
    set_limits(c, worker.startup().floor_ticks, worker.startup().threshold_ticks, counter_hertz);
    c.max_ns = static_cast<double>(shared->max_gap.load(std::memory_order_relaxed)) * ns_per_tick;
  }
  return cpus;
}

BaselineRecording baseline_recording(const SamplingPlan& plan, const HostReader& host,
                                     const CounterFrequency& frequency, double duration_seconds) {
  BaselineRecording r;
  r.created_unix_seconds = static_cast<double>(std::time(nullptr));
  r.jitterd_version = this_build().version;
  r.machine = machine_facts(host, read_posture(host), plan.selection.sampled);
  r.tick_method = std::string(to_string(plan.method));
  r.counter_hertz = frequency.hertz;
  r.counter_source = frequency.source;
  r.duration_seconds = duration_seconds;
  r.cpus = plan.selection.sampled;
  const SamplerConfig& s = plan.config.sampler;
  r.configuration = {
      {"housekeeping_cpus", format_cpu_list(plan.selection.housekeeping)},
      {"interruption_threshold", s.interruption_threshold
                                     ? format_duration(*s.interruption_threshold)
                                     : fmt::format("auto (floor x {})", s.threshold_floor_multiple)},
      {"duty_cycle", "continuous"},
      {"realtime_priority", std::to_string(s.realtime_priority)},
      {"duration", fmt::format("{}s", duration_seconds)},
  };
  return r;
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
  const CounterFrequency frequency = housekeeping_counter_frequency(plan);
  const double seconds = std::chrono::duration<double>(cl.report_duration).count();
  std::vector<BaselineCpu> cpus;
  std::vector<BaselineWatched> watched;
  std::vector<BaselineLoop> loops;
  BaselineRecording recording = baseline_recording(plan, host, frequency, seconds);
  {
    // Before the samplers start: loading the watch's BPF program is not inside a sub-window.
    ApplicationRecording application(plan.config.probes, plan.selection.watched, host);
    const std::shared_ptr<SamplerSet> samplers = start_samplers(plan, frequency, host);
    progress.step(fmt::format("sampling cpus {}", format_cpu_list(plan.selection.sampled)), cl.report_duration);
    cpus = record_sub_windows(*samplers, cl.report_duration, frequency.hertz, &application);
    watched = application.watched();
    loops = application.loops();
    const BaselineFields fields = application.configuration();
    recording.configuration.insert(recording.configuration.end(), fields.begin(), fields.end());
    const std::vector<std::string> warnings = application.take_warnings();
    if (!warnings.empty()) progress.clear();
    for (const std::string& warning : warnings) spdlog::warn("{}", warning);
  }
  // Probes after the samplers stop, so they neither disturb the gaps nor are disturbed by them.
  ProbeContext context = make_probe_context(plan, host, frequency);
  std::vector<BaselineProbe> probes;
  for (std::size_t i = 0; i < cl.baseline_probes.size(); ++i) {
    const std::string& name = cl.baseline_probes[i];
    progress.step(fmt::format("probe {} ({}/{})", name, i + 1, cl.baseline_probes.size()));
    std::unique_ptr<Probe> probe = make_probe(name, plan.config.probes);
    probes.push_back(baseline_probe(run_probe(*probe, context)));
    if (!probes.back().success) {
      progress.clear();
      spdlog::warn("probe {} failed: {}", name, probes.back().error);
    }
  }
  progress.step("writing the baseline");
  Baseline baseline = record_baseline(recording, std::move(cpus), std::move(probes));
  baseline.watched = std::move(watched);
  baseline.loops = std::move(loops);
  write_baseline(baseline, cl.output_path);
  progress.clear();
  std::vector<int> watched_cpus;
  for (const BaselineWatched& w : baseline.watched) watched_cpus.push_back(w.cpu);
  std::cerr << fmt::format(
      "jitterd: baseline of {}{}{} ({:.1f} s, probes: {}) written to {}\n",
      plan.selection.sampled.empty() ? "no sampled cpu" : "cpus " + format_cpu_list(plan.selection.sampled),
      watched_cpus.empty() ? "" : fmt::format(", watched cpus {}", format_cpu_list(watched_cpus)),
      baseline.loops.empty() ? "" : fmt::format(", {} loop(s)", baseline.loops.size()), seconds,
      cl.baseline_probes.empty() ? "none" : fmt::format("{}", fmt::join(cl.baseline_probes, ",")),
      cl.output_path == kStandardOutputPath ? "standard output" : cl.output_path);
  return 0;
}

}  // namespace jitterd
