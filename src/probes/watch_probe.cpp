// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_probe.h"

#include <algorithm>

#include "host/attribution.h"
#include "host/cpu_list.h"
#include "host/text.h"
#include "measure/clock_ns.h"
#include "measure/gap_counts.h"
#include "measure/tail_thresholds.h"
#include "probes/application_windows.h"
#include "probes/below_kernel.h"
#include "probes/stolen_plots.h"
#include "probes/watch_glance.h"
#include "probes/watch_timers.h"

namespace jitterd {
namespace {

constexpr std::array<std::string_view, 6> kIrqCauses = {"timer", "ipi_resched", "ipi_call",
                                                        "tlb",   "device_irq",  "other_irq"};
constexpr std::array<std::string_view, 4> kSoftirqCauses = {"timer", "softirq_net", "softirq_rcu",
                                                            "softirq_other"};

std::uint64_t count_of(const std::map<std::string, std::uint64_t>& counts, std::string_view cause) {
  const auto found = counts.find(std::string(cause));
  return found == counts.end() ? 0 : found->second;
}

// Timer interrupts per second over the last window; none for an offline CPU or before a window.
std::optional<double> timer_rate(const WatchedCpu& c, double window_seconds) {
  if (!c.online || window_seconds <= 0) return std::nullopt;
  return static_cast<double>(c.window_timer_interrupts) / window_seconds;
}

void add_cpu_metrics(const WatchedCpu& c, const WatchReading& reading, bool stolen_from_bpf,
                     std::vector<ProbeMetric>& out) {
  const std::string cpu = std::to_string(c.cpu);
  out.push_back(gauge("jitterd_watch_cpu_online",
                      "1 if the watched CPU is online (it has a column in /proc/interrupts).", {{"cpu", cpu}},
                      c.online ? 1 : 0));
  out.push_back(gauge("jitterd_watch_cpu_nohz_full", "1 if the watched CPU is in the kernel's nohz_full set.",
                      {{"cpu", cpu}}, c.nohz_full ? 1 : 0));
  for (std::string_view cause : kIrqCauses)
    out.push_back(counter(
        "jitterd_watch_irqs_total", "Hard interrupts and IPIs the watched CPU took, by cause (/proc/interrupts).",
        {{"cpu", cpu}, {"cause", std::string(cause)}}, static_cast<double>(count_of(c.interrupts, cause))));
  for (std::string_view cause : kSoftirqCauses)
    out.push_back(
        counter("jitterd_watch_softirqs_total", "Softirqs the watched CPU ran, by cause (/proc/softirqs).",
                {{"cpu", cpu}, {"cause", std::string(cause)}}, static_cast<double>(count_of(c.softirqs, cause))));
  for (const auto& [irq, count] : c.device_irqs)
    out.push_back(counter("jitterd_watch_device_irqs_total",
                          "Device interrupts on the watched CPU by IRQ and name (at most 16 IRQs per CPU).",
                          {{"cpu", cpu}, {"irq", irq.first}, {"name", irq.second}}, static_cast<double>(count)));
  out.push_back(counter("jitterd_watch_preemptions_total",
                        "Involuntary context switches of the application's threads on the watched CPU.",
                        {{"cpu", cpu}}, static_cast<double>(c.preemptions)));
  out.push_back(counter("jitterd_watch_voluntary_switches_total",
                        "Voluntary context switches (sleeps) of the application's threads on the watched CPU.",
                        {{"cpu", cpu}}, static_cast<double>(c.voluntary_switches)));
  if (!stolen_from_bpf)  // bpf books every cause's time, preempted included
    out.push_back(
        counter("jitterd_watch_stolen_seconds_total",
                "Time taken on the watched CPU, by cause (counts: the application's run-queue wait while "
                "another task ran, cause preempted).",
                {{"cpu", cpu}, {"cause", "preempted"}}, static_cast<double>(c.wait_ns) * 1e-9));
  out.push_back(counter("jitterd_watch_application_run_seconds_total",
                        "Time the application's threads ran on the watched CPU.", {{"cpu", cpu}},
                        static_cast<double>(c.application_run_ns) * 1e-9));
  if (reading.other_tasks_measured)
    out.push_back(counter("jitterd_watch_other_tasks_seconds_total",
                          "Time tasks other than the application ran on the watched CPU (/proc/schedstat).",
                          {{"cpu", cpu}}, static_cast<double>(c.other_tasks_ns) * 1e-9));
  const std::optional<double> rate = timer_rate(c, reading.window_seconds);
  if (!rate) return;  // no current figure for an offline CPU
  out.push_back(gauge("jitterd_watch_application_threads", "The application's threads on the watched CPU.",
                      {{"cpu", cpu}}, static_cast<double>(c.application_threads)));
  out.push_back(gauge("jitterd_watch_timer_interrupt_rate_hertz",
                      "Timer interrupts per second on the watched CPU over the last window: near 0 when the tick "
                      "is stopped (nohz_full), HZ when it is not.",
                      {{"cpu", cpu}}, *rate));
}

ProbeTable cpu_table(const WatchReading& reading) {
  ProbeTable table{"watched CPUs (counts since the watch began; timer_per_s: the last window)",
                   {"cpu", "online", "nohz_full", "app_threads", "preemptions", "run_queue_wait_ms",
                    "other_tasks_ms", "timer_per_s", "irqs", "device_irqs", "softirqs"},
                   {}};
  for (const WatchedCpu& c : reading.cpus) {
    const std::uint64_t irqs = total_of(c.interrupts), softirqs = total_of(c.softirqs);
    Cell rate;  // none: no window yet, or the CPU is offline
    if (const std::optional<double> hertz = timer_rate(c, reading.window_seconds)) rate = Cell(*hertz, 1);
    table.rows.push_back(
        {c.cpu, Cell(c.online), Cell(c.nohz_full), c.application_threads, c.preemptions,
         Cell(static_cast<double>(c.wait_ns) * 1e-6, 3),
         reading.other_tasks_measured ? Cell(static_cast<double>(c.other_tasks_ns) * 1e-6, 3) : Cell(), rate, irqs,
         count_of(c.interrupts, "device_irq"), softirqs});
  }
  return table;
}

// Per second over the last window, from two readings' totals (totals never go down).
ProbeTable window_table(const WatchReading& reading, const std::vector<WatchedCpu>& previous) {
  ProbeTable table{"the last window, per second",
                   {"cpu", "online", "app_threads", "preemptions", "run_queue_wait_ms", "irqs", "device_irqs",
                    "softirqs", "timer"},
                   {}};
  const double seconds = reading.window_seconds;
  for (const WatchedCpu& c : reading.cpus) {
    const WatchedCpu* before = entry_of_cpu(previous, c.cpu);
    if (before == nullptr || seconds <= 0 || !c.online) {
      table.rows.push_back(
          {c.cpu, Cell(c.online), c.application_threads, Cell(), Cell(), Cell(), Cell(), Cell(), Cell()});
      continue;
    }
    const auto per_second = [&](std::uint64_t now, std::uint64_t then, double scale = 1.0) {
      return Cell(static_cast<double>(counter_rise(now, then)) * scale / seconds, 3);
    };
    table.rows.push_back(
        {c.cpu, Cell(c.online), c.application_threads, per_second(c.preemptions, before->preemptions),
         per_second(c.wait_ns, before->wait_ns, 1e-6),
         per_second(total_of(c.interrupts), total_of(before->interrupts)),
         per_second(count_of(c.interrupts, "device_irq"), count_of(before->interrupts, "device_irq")),
         per_second(total_of(c.softirqs), total_of(before->softirqs)), Cell(*timer_rate(c, seconds), 1)});
  }
  return table;
}

ProbeTable cause_table(const WatchReading& reading) {
  ProbeTable table{"interrupts by cause", {"cpu", "kind", "cause", "count"}, {}};
  for (const WatchedCpu& c : reading.cpus) {
    for (const auto& [cause, n] : c.interrupts)
      if (n > 0) table.rows.push_back({c.cpu, "irq", cause, n});
    for (const auto& [cause, n] : c.softirqs)
      if (n > 0) table.rows.push_back({c.cpu, "softirq", cause, n});
    for (const auto& [irq, n] : c.device_irqs) table.rows.push_back({c.cpu, "device " + irq.first, irq.second, n});
  }
  return table;
}

ProbeTable thread_table(const WatchReading& reading) {
  ProbeTable table{"the application's threads on watched CPUs",
                   {"cpu", "pid", "tid", "name", "preemptions", "voluntary", "run_queue_wait_ms", "run_ms"},
                   {}};
  for (const WatchedThread& t : reading.threads)
    table.rows.push_back({t.cpu, t.thread.pid, t.thread.tid, printable(t.thread.comm), t.preemptions,
                          t.voluntary_switches, Cell(static_cast<double>(t.wait_ns) * 1e-6, 3),
                          Cell(static_cast<double>(t.run_ns) * 1e-6, 3)});
  return table;
}

// "2 of the application's threads run on no watched CPU and are not counted: tid 1234 `logger`
// (last on cpu 0, allowed 0-1), ...": the first kListedThreadsElsewhere named, the rest counted.
std::string threads_elsewhere_note(const WatchReading& reading) {
  std::string out = std::to_string(reading.application_threads_elsewhere) +
                    " of the application's threads run on no watched CPU and are not counted:";
  for (const ApplicationThread& t : reading.threads_elsewhere) {
    const std::string allowed = format_cpu_list(t.allowed);
    out += (&t == &reading.threads_elsewhere.front() ? " tid " : ", tid ") + std::to_string(t.tid) + " `" +
           printable(t.comm) + "` of pid " + std::to_string(t.pid) + " (last on cpu " +
           std::to_string(t.processor) + (allowed.empty() ? "" : ", allowed " + allowed) + ")";
  }
  const std::size_t rest = reading.application_threads_elsewhere - reading.threads_elsewhere.size();
  if (rest > 0) out += ", and " + std::to_string(rest) + " more";
  return out + "; pin them to a watched CPU or add their CPU to watch.cpus to count them";
}

}  // namespace

std::string_view watch_method_name(WatchMethod method) {
  switch (method) {
    case WatchMethod::automatic:
      return "auto";
    case WatchMethod::bpf:
      return "bpf";
    case WatchMethod::tracepoints:
      return "tracepoints";
    case WatchMethod::counts:
      return "counts";
  }
  return "auto";
}

ProbeResult watch_result(const WatchReading& reading, const std::vector<WatchedCpu>& previous,
                         std::string_view method, std::string_view requested, std::string_view reason) {
  ProbeResult result;
  result.metrics.push_back(gauge(
      "jitterd_watch_method_info",
      "How the watched CPUs are read (counts, bpf or tracepoints), what the configuration "
      "asked for, and why they differ; value 1.",
      {{"method", std::string(method)}, {"requested", std::string(requested)}, {"reason", std::string(reason)}},
      1));
  result.metrics.push_back(gauge("jitterd_watch_window_seconds", "The length of the watch probe's last window.",
                                 {}, reading.window_seconds));
  const bool paired = method == "bpf" || method == "tracepoints";
  for (const WatchedCpu& c : reading.cpus) add_cpu_metrics(c, reading, paired, result.metrics);
  result.tables = {window_table(reading, previous), cpu_table(reading), cause_table(reading),
                   thread_table(reading)};
  if (!reading.other_tasks_measured)
    result.notes.push_back(
        "other tasks' time is not measured: /proc/schedstat is missing (a kernel built without "
        "CONFIG_SCHEDSTATS)");
  result.notes.push_back(
      "counts: interrupts from /proc/interrupts and /proc/softirqs; preemptions, stolen (run-queue wait) and run "
      "time from the application's threads' status and schedstat, exact for a thread pinned to its CPU; other "
      "tasks' time from /proc/schedstat, booked when a task leaves the CPU");
  if (reading.application_threads_elsewhere > 0) result.notes.push_back(threads_elsewhere_note(reading));
  return result;
}

void WatchProbe::record_windows(const WatchReading& reading, const std::optional<PairedReading>& bpf) {
  const double outlier_ns = static_cast<double>(settings_.outlier_threshold.count());
  windows_.push_back(bpf && previous_bpf_ ? paired_windows(*bpf, *previous_bpf_, reading.window_seconds,
                                                           outlier_ns, kTailThresholdsNs)
                                          : counts_windows(reading, previous_, kTailThresholdsNs));
  // As long as the samplers' window (settings_.window), oldest first.
  const double span = std::chrono::duration<double>(settings_.window).count();
  const auto seconds_of = [&](const std::vector<WatchWindow>& each) {
    double seconds = 0;
    for (const WatchWindow& w : each) seconds = std::max(seconds, w.seconds);
    return seconds > 0 ? seconds : std::chrono::duration<double>(settings_.interval).count();
  };
  double held = 0;
  for (auto it = windows_.rbegin(); it != windows_.rend(); ++it) {
    held += seconds_of(*it);
    if (held > span + 1e-6) {
      windows_.erase(windows_.begin(), it.base());
      break;
    }
  }
}

bool WatchProbe::record_stolen(const WatchReading& reading, const std::optional<PairedReading>& bpf) {
  const auto end_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));
  const auto length_ns = static_cast<std::uint64_t>(std::max(0.0, reading.window_seconds) * 1e9);
  const bool paired = bpf && previous_bpf_;
  for (const WatchedCpu& c : reading.cpus) {
    StolenSeries& series =
        stolen_.try_emplace(c.cpu, static_cast<std::uint64_t>(settings_.window.count())).first->second;
    const WatchedCpu* before = entry_of_cpu(previous_, c.cpu);
    if (!c.online || before == nullptr) continue;  // no window: a gap in the plot
    if (!paired) {
      series.add(end_ns, length_ns, counts_stolen_by_cause(c, *before));
      continue;
    }
    const PairedCpuFigures *now = entry_of_cpu(bpf->cpus, c.cpu), *then = entry_of_cpu(previous_bpf_->cpus, c.cpu);
    if (now != nullptr && then != nullptr) series.add(end_ns, length_ns, paired_stolen_by_cause(*now, *then));
  }
  return paired;
}

void WatchProbe::add_stolen_plots(bool paired, ProbeResult& result) const {
  const double offset = unix_minus_monotonic_now();
  const std::string note =
      paired ? std::string()
             : "counts: only the application's run-queue wait is timed (preempted); interrupts are counted, not "
               "timed, and no task is named (methods bpf and tracepoints do both)";
  for (const auto& [cpu, series] : stolen_) {
    const auto tallies = top_.cpus().find(cpu);
    const TopTallies* top = paired && tallies != top_.cpus().end() ? &tallies->second : nullptr;
    result.stolen.push_back(stolen_plot(series, cpu, "", top, offset, note));
  }
}

ProbeResult WatchProbe::run(ProbeContext& context) {
  const std::string followed = follow_auto_cpus(context);
  const WatchReading reading = take_reading(context);
  const std::optional<PairedReading> bpf = read_bpf(reading);
  const std::string_view requested = watch_method_name(settings_.method);
  ProbeResult result = watch_result(reading, previous_, method_, requested, reason_);
  record_windows(reading, bpf);
  const bool paired = record_stolen(reading, bpf);
  result.application_windows = std::make_shared<const ApplicationWindows>(
      ApplicationWindows{method_,
                         reason_,
                         bpf ? static_cast<double>(settings_.outlier_threshold.count()) : 0,
                         std::vector<std::vector<WatchWindow>>(windows_.begin(), windows_.end()),
                         {}});
  previous_ = reading.cpus;
  if (bpf) {
    if (previous_bpf_)
      top_.add(*bpf, *previous_bpf_, reading, static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC)));
    add_paired_result(*bpf, previous_bpf_ ? &*previous_bpf_ : nullptr, reading, history_, *kernel_, result);
    add_top_result(top_, kernel_->method(), context.host, static_cast<double>(settings_.outlier_threshold.count()),
                   result);
    if (trace_) add_tracer_wakeups(trace_->tracer_wakeups(), result);
    previous_bpf_ = *bpf;
  } else
    result.notes.push_back(
        "who preempted the application: the counts method cannot name the tasks (the kernel's counters say how "
        "often and how long, not who); methods bpf and tracepoints name them (docs/watch.md)");
  add_stolen_plots(paired, result);
  // The engine's (method bpf): the same one get() gave when the watch opened.
  BpfWatch* bpf_engine = method_ == "bpf" && bpf_owner_ ? bpf_owner_->get(context.sampler_thread_of) : nullptr;
  WatchedBelowKernel below;
  if (bpf_engine) {
    below = {bpf_engine->read_smis(), bpf_engine->read_cycles(), bpf_engine->smi_why_not(),
             bpf_engine->frequency_why_not()};
  } else {
    below.smi_why_not = below.frequency_why_not =
        "the watch's method is " + method_ + "; only bpf reads a watched cpu's msr counters";
  }
  add_watched_below_kernel(context, *watched_, below, watched_cycles_, result);
  if (bpf_engine) add_timer_starts(bpf_engine->read_timer_starts(), reading, timer_functions_, result);
  result.tables.insert(result.tables.begin(),
                       watch_glance_table(windows_, reading, bpf ? &top_ : nullptr, method_));
  // Asked for bpf or tracepoints and given counts: a warning until it changes.
  const bool fell_back = settings_.method != WatchMethod::automatic && requested != method_;
  result.states["method"] = {method_ + " (" + reason_ + ")", fell_back};
  result.notes.push_back("method: " + method_ + " (" + reason_ + ")");
  const std::size_t threads = reading.threads.size();
  if (settings_.application.named() && threads == 0)
    result.states["application"] = {"no thread of the application on a watched CPU", true};
  else
    result.states["application"] = {
        std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " of the application on watched CPUs",
        false};
  // A state, not a warning: logged when it appears and when it changes, not every second.
  const std::string problems = joined_with(reading.problems, "; ");
  result.states["problems"] = {problems.empty() ? "none" : problems, !problems.empty()};
  if (!followed.empty()) result.warnings.push_back(followed);
  if (watched_->empty()) result.notes.push_back("no CPU is watched (watch.cpus chose none)");
  if (settings_.application.named() && settings_.application.by_name_only())
    result.notes.push_back(
        "the application is named by task names only: any local user can start threads of those names and be "
        "counted as the application; set application.user or application.cgroup (docs/watch.md)");
  return result;
}

}  // namespace jitterd
