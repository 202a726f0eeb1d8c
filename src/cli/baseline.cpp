// SPDX-License-Identifier: Apache-2.0
#include "cli/baseline.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "cli/progress.h"
#include "export/build_info.h"
#include "host/cpu_list.h"
#include "host/posture.h"
#include "probes/probe_registry.h"
#include "sampling/probe_context.h"
#include "sampling/sampling_start.h"

namespace jitterd {

namespace {

// The watched CPUs and loops of `jitterd baseline`, read by the probes that read them in the
// daemon (ProbeFacts::recording_settings: the watch and the loops) in one probe context made before
// the samplers start and kept while they run: its one BPF engine loads before the first sub-window
// (not inside one) and serves them all. Each probe runs once before the samplers (the readings the
// first sub-window counts from) and once at each sub-window's end, on this (housekeeping) thread;
// their history, less what was read before the samplers started, is the file's watched[] and
// loops[] (report/baseline_recorder.h add_application_windows, as the daemon's download records it).
class ApplicationProbes {
 public:
  ApplicationProbes(const SamplingPlan& plan, const HostReader& host, const CounterFrequency& frequency,
                    Duration run)
      : context_(make_probe_context(plan, host, frequency)),
        probes_(make_recording_probes(plan.config.probes, run)),
        runs_(probes_.size()),
        watched_(!plan.selection.watched.empty()),
        loops_directory_(plan.config.probes.loops.enabled ? plan.config.probes.loops.directory : "") {
    read();
    for (Run& r : runs_) r.before_samplers = r.history ? r.history->watch.size() : 0;
  }

  // One reading of each probe.
  void read() {
    for (std::size_t i = 0; i < probes_.size(); ++i) {
      Run& r = runs_[i];
      ProbeStatus status = run_probe(*probes_[i], context_);
      if (!status.success) {
        if (status.error != r.error)
          warnings_.push_back(fmt::format("probe {}: failed: {}", status.name, status.error));
        r.error = status.error;
        continue;
      }
      r.error.clear();
      if (status.result.application_windows) r.history = status.result.application_windows;
      for (std::string& warning : status.result.warnings) warnings_.push_back(std::move(warning));
      for (const auto& [subject, state] : status.result.states) {
        auto [last, added] = r.states.try_emplace(subject, state);
        if (!added && last->second == state) continue;
        last->second = state;
        if (state.warning) warnings_.push_back(fmt::format("probe {}: {}: {}", status.name, subject, state.line));
      }
    }
  }

  // The watched CPUs and loops read since the samplers started, into `baseline`; the configuration
  // fields that say how: "watch_method" (and why), "watch_outlier_threshold", "loops_directory".
  void record(Baseline& baseline, BaselineFields& configuration) {
    for (const Run& r : runs_) {
      if (!r.history) continue;
      ApplicationWindows history = *r.history;
      history.watch.erase(
          history.watch.begin(),
          history.watch.begin() + static_cast<std::ptrdiff_t>(std::min(r.before_samplers, history.watch.size())));
      add_application_windows(baseline, history, warnings_);
      if (history.watch_method.empty() || !watched_) continue;
      configuration.emplace_back("watch_method",
                                 fmt::format("{} ({})", history.watch_method, history.watch_reason));
      if (watch_method_pairs(history.watch_method))
        configuration.emplace_back("watch_outlier_threshold",
                                   fmt::format("{}ns", std::llround(history.outlier_threshold_ns)));
    }
    if (!loops_directory_.empty()) configuration.emplace_back("loops_directory", loops_directory_);
  }

  // One line each, for the log: a probe that failed, a warning state, a loop named twice.
  std::vector<std::string> take_warnings() { return std::exchange(warnings_, {}); }

 private:
  struct Run {
    std::shared_ptr<const ApplicationWindows> history;  // of the last successful run
    std::size_t before_samplers = 0;                    // readings of the watch taken before the samplers
    std::string error;                                  // the last run's, "" when it succeeded
    std::map<std::string, ProbeState> states;           // as last logged
  };
  ProbeContext context_;
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<Run> runs_;
  bool watched_;
  std::string loops_directory_;
  std::vector<std::string> warnings_;
};

}  // namespace

std::vector<BaselineCpu> record_sub_windows(SamplerSet& samplers, Duration duration, double counter_hertz,
                                            const std::function<void()>& at_sub_window_end) {
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
    if (at_sub_window_end) at_sub_window_end();
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
  Baseline application_side;  // its watched[] and loops[]
  BaselineRecording recording = baseline_recording(plan, host, frequency, seconds);
  {
    // Before the samplers start: loading the BPF engine is not inside a sub-window.
    ApplicationProbes application(plan, host, frequency, cl.report_duration);
    const std::shared_ptr<SamplerSet> samplers = start_samplers(plan, frequency, host);
    progress.step(fmt::format("sampling cpus {}", format_cpu_list(plan.selection.sampled)), cl.report_duration);
    cpus = record_sub_windows(*samplers, cl.report_duration, frequency.hertz, [&] { application.read(); });
    application.record(application_side, recording.configuration);
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
  baseline.watched = std::move(application_side.watched);
  baseline.loops = std::move(application_side.loops);
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
