// SPDX-License-Identifier: Apache-2.0
#include "daemon/daemon.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/logging.h"
#include "daemon/probe_scheduler.h"
#include "daemon/systemd_notify.h"
#include "export/collector.h"
#include "export/web_server.h"
#include "host/cpu_list.h"
#include "measure/clock_ns.h"
#include "measure/counter_calibration.h"
#include "report/baseline_recorder.h"
#include "sampling/probe_context.h"
#include "sampling/sampling_plan.h"
#include "sampling/sampling_start.h"

namespace jitterd {

namespace {
using namespace std::chrono_literals;
// The rolling windows' step, which is also the live download's sub-window: one length for every
// baseline (report/baseline_recorder.h).
constexpr auto kWindowUpdate = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
    std::chrono::duration<double>(kSubWindowSeconds));

// What was last logged of each sampled CPU's placement, by CPU (a reload starts new samplers).
struct PlacementSeen {
  bool off_cpu = false;
  std::uint64_t losses = 0;
};

// Logs, once each, a sampler that lost its CPU, got it back, or was moved and pinned itself back
// between two calls (an affinity change is undone within microseconds).
void log_cpu_placement(const SamplerSet& samplers, std::map<int, PlacementSeen>& seen) {
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    const SamplerWorker& w = samplers.worker(i);
    const int cpu = w.settings().cpu;
    const bool off = w.off_cpu();
    const std::uint64_t losses = w.cpu_losses();
    PlacementSeen& last = seen[cpu];
    if (losses < last.losses) last = {};  // new samplers since a reload
    if (off && !last.off_cpu) {
      spdlog::warn(
          "cpu {}: the sampler is off its CPU (the CPU went offline, or the thread's affinity was changed); "
          "sampling stopped, trying to pin back every {} ms",
          cpu, kCpuRetry.count());
    } else if (!off && last.off_cpu) {
      spdlog::info("cpu {}: the sampler is back on its CPU; sampling resumed", cpu);
    } else if (!off && losses > last.losses) {
      spdlog::warn("cpu {}: the sampler was moved off its CPU {} time(s) and pinned itself back", cpu,
                   losses - last.losses);
    }
    last = {off, losses};
  }
}
constexpr auto kProbeStopGrace = 600ms;

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGQUIT);  // stops cleanly, like SIGTERM, rather than dumping core unannounced
  sigaddset(&set, SIGUSR1);  // logs the status line; their default action would end the daemon
  sigaddset(&set, SIGUSR2);
  return set;
}

// What stays for the daemon's whole life, whatever the configuration.
struct Runtime {
  HostReader host;
  std::shared_ptr<Collector> collector;
  CounterFrequency frequency;
  // What the probes logged about themselves, so a reload logs only what changed.
  std::shared_ptr<ProbeStateLog> probe_states = std::make_shared<ProbeStateLog>();
};

// Everything one configuration runs: samplers, the probes that borrow them, and the web server.
struct Service {
  SamplingPlan plan;
  std::shared_ptr<SamplerSet> samplers;
  std::shared_ptr<ProbeScheduler> probes;
  // Schedulers replaced by a reload while a probe was inside one long unit: cancelled, their
  // results no longer exported, each ends at its unit's end and is then dropped by the main loop.
  std::vector<std::shared_ptr<ProbeScheduler>> retiring;
  std::unique_ptr<WebServer> web;
  std::string status;
};

void log_plan(const SamplingPlan& plan) {
  for (const auto& p : plan.machine_problems) spdlog::warn("{}", p);
  for (const auto& n : plan.selection.notes) spdlog::info("{}", n);
}

void log_startup(const SamplerSet& samplers) {
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    const SamplerWorker& w = samplers.worker(i);
    for (const auto& warning : w.startup().warnings) spdlog::warn("{}", warning);
    if (!w.startup().error.empty()) {
      spdlog::error("{}", w.startup().error);
      continue;
    }
    const auto& s = w.settings();
    spdlog::info("cpu {}: floor {:.1f} ns, interruption threshold {:.1f} ns, memory {}locked, {}", s.cpu,
                 s.scale.to_seconds(w.startup().floor_ticks) * 1e9,
                 s.scale.to_seconds(w.startup().threshold_ticks) * 1e9, w.startup().memory_locked ? "" : "not ",
                 w.startup().realtime_priority > 0 ? "SCHED_FIFO" : "SCHED_OTHER");
  }
}

// What moving from one plan to another restarts. The web server's threads carry the
// housekeeping affinity they were created with, so a new housekeeping set restarts it too.
struct PlanChange {
  bool samplers = false;
  bool web = false;
  bool probes = false;  // the scheduler holds the sampler set, so new samplers restart it too
  bool any() const { return samplers || web || probes; }
};

PlanChange compare_plans(const SamplingPlan& from, const SamplingPlan& to) {
  const bool housekeeping = from.selection.housekeeping != to.selection.housekeeping;
  const bool sampled = from.selection.sampled != to.selection.sampled;
  const bool samplers =
      housekeeping || sampled || from.config.sampler != to.config.sampler || from.method != to.method;
  return {samplers, housekeeping || from.config.web != to.config.web,
          samplers || from.config.probes != to.config.probes};
}

// Starts the web server of `plan` and, once it serves, drains and stops the one it replaces. On
// the same address the two share the listening socket, so a restart refuses no connection and
// leaves no request unanswered. A new server that cannot start throws and leaves the old serving.
void replace_web_server(Service& service, const SamplingPlan& plan, Runtime& runtime) {
  auto web = std::make_unique<WebServer>(plan.config.web, runtime.collector, service.web.get());
  if (service.web) service.web->drain();
  service.web = std::move(web);
  spdlog::info("listening on {}, metrics at {} ({})", service.web->bound_address(), plan.config.web.telemetry_path,
               service.web->describe());
}

// Brings `service` to `plan`, restarting what `change` names. The main thread is restricted to
// the housekeeping CPUs first, so web server threads created after it never run on a sampled CPU;
// the web server is replaced before the samplers start, so none of the old one's threads is left
// on a CPU that is sampled from now on.
void apply_plan(Service& service, SamplingPlan plan, PlanChange change, Runtime& runtime) {
  // A reload waits for a running probe at most kProbeStopGrace; a longer unit finishes on its
  // own thread while the new configuration starts (a sampler it borrows is waited for below).
  if (change.probes && service.probes && !service.probes->stop(kProbeStopGrace)) {
    spdlog::info("a probe is inside a long unit; the previous scheduler ends when it is done");
    service.retiring.push_back(std::move(service.probes));
  }
  if (change.samplers && service.samplers) service.samplers->stop();
  restrict_current_thread(plan.selection.housekeeping);
  log_plan(plan);
  if (change.web) replace_web_server(service, plan, runtime);
  if (change.samplers) {
    service.samplers = start_samplers(plan, runtime.frequency, runtime.host);
    log_startup(*service.samplers);
    runtime.collector->set_samplers(service.samplers, runtime.frequency, plan.method);
    runtime.collector->record_samplers_start(unix_seconds());
  }
  if (change.probes) {
    service.probes = std::make_shared<ProbeScheduler>(
        make_enabled_probes(plan.config.probes),
        make_probe_context(plan, runtime.host, runtime.frequency, service.samplers), std::chrono::seconds(2),
        runtime.probe_states);
    runtime.collector->set_probes([probes = service.probes] { return probes->statuses(); });
    // Each run's /metrics text is made on the scheduler's lane that ran it, not by the scrape after it.
    // (A weak pointer: the collector holds the scheduler through set_probes.)
    service.probes->set_after_run([collector = std::weak_ptr<const Collector>(runtime.collector)] {
      if (const auto alive = collector.lock()) alive->render_probe_results();
    });
    // The status pages show a stored run from the moment a scrape can (export/page_builder.h).
    service.probes->set_on_store([collector = std::weak_ptr<const Collector>(runtime.collector)] {
      if (const auto alive = collector.lock()) alive->advance_generation();
    });
    service.probes->start();
  }
  service.status =
      service.samplers->describe() +
      (plan.selection.watched.empty() ? "" : "; watching cpus " + format_cpu_list(plan.selection.watched)) +
      "; housekeeping on cpus " + format_cpu_list(plan.selection.housekeeping) + "; serving " +
      service.web->bound_address();
  service.plan = std::move(plan);
}

void stop_service(Service& service) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  service.web.reset();
  spdlog::debug("web server stopped after {:.1f} ms", elapsed_ms());
  if (service.probes) service.retiring.push_back(std::move(service.probes));
  const bool probes_ended = std::all_of(service.retiring.begin(), service.retiring.end(),
                                        [](const auto& probes) { return probes->stop(kProbeStopGrace); });
  if (!probes_ended) {
    // A probe is inside one long unit (a pacing rate held for `duration`, say): waiting would
    // break the promise to stop within a second, and its numbers would be discarded anyway.
    spdlog::warn("a probe is still running after {:.0f} ms; exiting without waiting for it", elapsed_ms());
    spdlog::default_logger()->flush();
    std::_Exit(0);
  }
  spdlog::debug("probes stopped after {:.1f} ms", elapsed_ms());
  if (service.samplers) service.samplers->stop();
  spdlog::debug("samplers stopped after {:.1f} ms", elapsed_ms());
}

// SIGHUP: a new plan that fails to load keeps the running one, logged and exported; one that
// loads but cannot start (say, its port is taken) is rolled back to the running one.
void reload(Service& service, const ConfigSource& source, const std::vector<int>& allowed, Runtime& runtime) {
  notify_reloading();
  spdlog::info("reloading {}", source.path);
  try {
    SamplingPlan plan = make_sampling_plan(load_config(source), runtime.host, allowed);
    set_log_level(plan.config.log.level);
    const PlanChange change = compare_plans(service.plan, plan);
    if (!change.any()) {
      spdlog::info("configuration reloaded; sampling and web server unchanged");
      service.plan = std::move(plan);
    } else {
      SamplingPlan previous = service.plan;
      try {
        apply_plan(service, std::move(plan), change, runtime);
      } catch (const std::exception& e) {
        spdlog::error("reload failed: {}; restarting the previous configuration", e.what());
        apply_plan(service, std::move(previous), change, runtime);
        runtime.collector->record_reload(false, unix_seconds());
        notify_ready(service.status);
        return;
      }
      spdlog::info("configuration reloaded ({}{}{}); {}", change.samplers ? "samplers restarted" : "samplers kept",
                   change.probes ? ", probes restarted" : ", probes kept",
                   change.web ? ", web server restarted" : ", web server kept", service.status);
    }
    runtime.collector->record_reload(true, unix_seconds());
  } catch (const ConfigErrors& e) {
    for (const std::string& line : e.listed()) spdlog::error("{}", line);
    spdlog::error("reload rejected: {} error(s); still running the previous configuration", e.errors().size());
    runtime.collector->record_reload(false, unix_seconds());
  }
  notify_ready(service.status);
}
}  // namespace

int run_daemon(const ConfigSource& source, const HostReader& host) {
  // Blocked here, before any thread exists, so every thread inherits the mask and only the
  // main loop's sigtimedwait receives them.
  const sigset_t signals = handled_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Runtime runtime{host, nullptr, {}, std::make_shared<ProbeStateLog>()};
  const std::vector<int> allowed = current_affinity();
  SamplingPlan plan = make_sampling_plan(load_config(source), runtime.host, allowed);
  set_log_level(plan.config.log.level);
  spdlog::info("configuration: {}", config_source_text(source));
  runtime.frequency = housekeeping_counter_frequency(plan);
  spdlog::info("counter: {} at {:.0f} Hz ({}, uncertainty {:.2f} ppm)", to_string(plan.method),
               runtime.frequency.hertz, runtime.frequency.source, runtime.frequency.uncertainty_ppm);

  runtime.collector = std::make_shared<Collector>(runtime.host, this_build());
  runtime.collector->record_reload(true, unix_seconds());
  Service service;
  apply_plan(service, std::move(plan), PlanChange{true, true, true}, runtime);
  notify_ready(service.status);
  spdlog::info("ready: {}", service.status);

  const auto watchdog = watchdog_ping_interval();
  auto next_window = std::chrono::steady_clock::now() + kWindowUpdate;
  auto next_watchdog = std::chrono::steady_clock::now();
  bool stalled_logged = false;
  std::map<int, PlacementSeen> placement;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_window) {
      service.samplers->update_windows();
      runtime.collector->advance_generation();  // the status pages show the new window step
      log_cpu_placement(*service.samplers, placement);
      next_window += kWindowUpdate;
      if (next_window < now) next_window = now + kWindowUpdate;
    }
    std::erase_if(service.retiring, [](const auto& probes) { return probes->stop(std::chrono::nanoseconds(0)); });
    if (watchdog && now >= next_watchdog) {
      // No progress, no ping: systemd then restarts a daemon whose samplers hang.
      if (service.samplers->all_alive()) {
        notify_watchdog();
        stalled_logged = false;
      } else if (!stalled_logged) {
        spdlog::error("a sampler stopped making progress; withholding the watchdog ping");
        stalled_logged = true;
      }
      next_watchdog = now + *watchdog;
    }
    auto wake = next_window;
    if (watchdog && next_watchdog < wake) wake = next_watchdog;
    const auto wait =
        std::chrono::duration_cast<std::chrono::nanoseconds>(wake - std::chrono::steady_clock::now());
    timespec timeout{};
    if (wait.count() > 0) {
      timeout.tv_sec = static_cast<time_t>(wait.count() / 1'000'000'000);
      timeout.tv_nsec = static_cast<long>(wait.count() % 1'000'000'000);
    }
    const int signal = sigtimedwait(&signals, nullptr, &timeout);
    if (signal == SIGHUP) {
      reload(service, source, allowed, runtime);
    } else if (signal == SIGUSR1 || signal == SIGUSR2) {
      spdlog::info("received SIG{}: nothing to do; {}", sigabbrev_np(signal), service.status);
    } else if (signal == SIGTERM || signal == SIGINT || signal == SIGQUIT) {
      spdlog::info("received SIG{}, stopping", sigabbrev_np(signal));
      notify_stopping();
      stop_service(service);
      return 0;
    }
  }
}

}  // namespace jitterd
