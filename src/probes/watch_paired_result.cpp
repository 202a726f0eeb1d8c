// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_paired_result.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "host/attribution.h"
#include "host/cpu_list.h"
#include "host/text.h"
#include "measure/gap_counts.h"
#include "probes/watch_window.h"

namespace jitterd {
namespace {

// The histogram's exported buckets: durations under 2^(b+1) ns for b from kFirstBucket, 1.024 us,
// to kLastBucket, 1.07 s; the program's lower buckets fold into the first, its last into +Inf.
constexpr std::size_t kFirstBucket = 9, kLastBucket = 29;

// The causes the engine books to, in attribution's order, then `preempted`.
std::vector<std::string> causes() {
  std::vector<std::string> out;
  for (std::string_view cause : cause_names) out.emplace_back(cause);
  out.emplace_back("preempted");
  return out;
}

struct CauseFigures {
  std::uint64_t count = 0, ns = 0, max_ns = 0;
};

std::map<std::string, CauseFigures> by_cause(const PairedCpuFigures& cpu) {
  std::map<std::string, CauseFigures> out;
  for (std::size_t s = 0; s < cpu.sources.size(); ++s) {
    CauseFigures& c = out[std::string(watch_source_cause(s))];
    c.count += cpu.sources[s].count;
    c.ns += cpu.sources[s].ns;
    c.max_ns = std::max(c.max_ns, cpu.sources[s].max_ns);
  }
  return out;
}

const PairedCpuFigures* find_cpu(const PairedReading* reading, int cpu) {
  return reading == nullptr ? nullptr : entry_of_cpu(reading->cpus, cpu);
}

ProbeMetric duration_histogram(const PairedCpuFigures& cpu) {
  ProbeMetric m = gauge("jitterd_watch_interruption_duration_seconds",
                        "Single interruptions of the watched CPU and preemptions of the application, by length "
                        "(bpf, tracepoints; power-of-two buckets, each bound exclusive).",
                        {{"cpu", std::to_string(cpu.cpu)}}, 0);
  m.type = ProbeMetricType::histogram;
  std::array<std::uint64_t, kSourceBuckets> all{};
  for (const SourceFigures& f : cpu.sources) {
    for (std::size_t b = 0; b < kSourceBuckets; ++b) all[b] += f.buckets[b];
    m.count += f.count;
    m.sum += static_cast<double>(f.ns) * 1e-9;
  }
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b <= kLastBucket; ++b) {
    cumulative += all[b];
    if (b >= kFirstBucket) m.buckets.emplace_back(static_cast<double>(std::uint64_t{2} << b) * 1e-9, cumulative);
  }
  return m;
}

void add_cpu_metrics(const PairedCpuFigures& cpu, const WatchReading& counts, std::vector<ProbeMetric>& out) {
  const std::string label = std::to_string(cpu.cpu);
  const std::map<std::string, CauseFigures> figures = by_cause(cpu);
  for (const std::string& cause : causes()) {
    const auto found = figures.find(cause);
    const CauseFigures f = found == figures.end() ? CauseFigures{} : found->second;
    out.push_back(counter("jitterd_watch_interruptions_total",
                          "Interruptions of the watched CPU (bpf, tracepoints: each paired entry to exit) and "
                          "preemptions of the application, by cause.",
                          {{"cpu", label}, {"cause", cause}}, static_cast<double>(f.count)));
    out.push_back(counter(
        "jitterd_watch_stolen_seconds_total",
        "Time taken on the watched CPU, by cause (bpf, tracepoints: each interruption's own time, nested ones "
        "counted once; preempted: the application runnable while another task ran).",
        {{"cpu", label}, {"cause", cause}}, static_cast<double>(f.ns) * 1e-9));
    out.push_back(gauge("jitterd_watch_longest_interruption_seconds",
                        "The longest single interruption of the watched CPU by cause since the watch began (bpf, "
                        "tracepoints).",
                        {{"cpu", label}, {"cause", cause}}, static_cast<double>(f.max_ns) * 1e-9));
  }
  for (std::size_t s = 0; s < cpu.sources.size(); ++s) {
    const std::string_view task_class = watch_source_task_class(s);
    if (task_class.empty()) continue;
    out.push_back(
        counter("jitterd_watch_preemptions_by_class_total",
                "Preemptions of the application on the watched CPU by the class of the task that took it "
                "(bpf, tracepoints): jitterd, kernel_percpu, application, stray.",
                {{"cpu", label}, {"class", std::string(task_class)}}, static_cast<double>(cpu.sources[s].count)));
  }
  out.push_back(duration_histogram(cpu));
  for (std::size_t bit = 0; bit < cpu.tick_stop_failures.size(); ++bit)
    if (bit < 6 || cpu.tick_stop_failures[bit] > 0)
      out.push_back(counter("jitterd_watch_tick_stop_failures_total",
                            "Times the watched CPU could not stop its tick, by the dependency that kept it "
                            "(timer:tick_stop; bpf, tracepoints).",
                            {{"cpu", label}, {"dependency", std::string(tick_dependency_name(bit))}},
                            static_cast<double>(cpu.tick_stop_failures[bit])));
  for (const auto& [irq, f] : cpu.device_irqs)
    out.push_back(
        counter("jitterd_watch_device_irq_seconds_total",
                "Time device interrupt handlers took on the watched CPU, by IRQ (bpf, tracepoints).",
                {{"cpu", label}, {"irq", std::to_string(irq)}, {"name", device_irq_name(counts, cpu.cpu, irq)}},
                static_cast<double>(f.ns) * 1e-9));
  for (const auto& [sender, n] : top_ipi_senders(cpu.ipi_senders, cpu.ipi_senders_other))
    out.push_back(counter("jitterd_watch_ipis_sent_total",
                          "IPIs sent to the watched CPU by the sending task's name (ipi:ipi_send_cpu and "
                          "ipi_send_cpumask; bpf), the 16 busiest, the rest as sender=\"other\".",
                          {{"cpu", label}, {"sender", printable(sender)}}, static_cast<double>(n)));
  const std::pair<std::string_view, std::uint64_t> faults[] = {
      {"outliers_lost", cpu.outliers_lost}, {"unmatched_exits", cpu.unmatched_exits}, {"too_deep", cpu.too_deep}};
  for (const auto& [kind, n] : faults)
    out.push_back(
        counter("jitterd_watch_bpf_faults_total",
                "What the BPF engine could not count on the watched CPU: outliers_lost (the outlier ring "
                "was full), unmatched_exits (an exit without its entry), too_deep (nesting too deep).",
                {{"cpu", label}, {"kind", std::string(kind)}}, static_cast<double>(n)));
}

std::uint64_t tick_stop_failures(const PairedCpuFigures& cpu) {
  std::uint64_t n = cpu.tick_stop_failures_unknown;
  for (std::uint64_t each : cpu.tick_stop_failures) n += each;
  return n;
}

// Per watched CPU, the last window at a glance: the share of the time taken, interruptions and
// preemptions per second (the typed figures a baseline records per sub-window, probes/watch_window.h),
// tick-stop failures per second.
ProbeTable glance_table(const PairedReading& now, const PairedReading* before, double seconds,
                        std::string_view method) {
  ProbeTable table{"watched CPUs, the last window (" + std::string(method) + ")",
                   {"cpu", "stolen_share", "interruptions_per_s", "preemptions_per_s", "tick_stop_failures_per_s"},
                   {}};
  const std::vector<WatchWindow> windows =
      before != nullptr ? paired_windows(now, *before, seconds, 0, {}) : std::vector<WatchWindow>{};
  for (const PairedCpuFigures& cpu : now.cpus) {
    const PairedCpuFigures* then = find_cpu(before, cpu.cpu);
    const WatchWindow* w = entry_of_cpu(windows, cpu.cpu);
    if (then == nullptr || w == nullptr || w->seconds <= 0) {
      table.rows.push_back({cpu.cpu, Cell(), Cell(), Cell(), Cell()});
      continue;
    }
    const std::uint64_t ticks = counter_rise(tick_stop_failures(cpu), tick_stop_failures(*then));
    table.rows.push_back({cpu.cpu, Cell(w->stolen_seconds / w->seconds, 6),
                          Cell(static_cast<double>(w->interruptions) / w->seconds, 1),
                          Cell(static_cast<double>(w->preemptions) / w->seconds, 1),
                          Cell(static_cast<double>(ticks) / seconds, 1)});
  }
  return table;
}

ProbeTable cause_table(const PairedReading& now, const PairedReading* before, double seconds,
                       std::string_view method) {
  ProbeTable table{
      "interruptions by cause (" + std::string(method) + "; per_s and stolen_ms_per_s: the last window)",
      {"cpu", "cause", "count", "stolen_ms", "longest_us", "per_s", "stolen_ms_per_s"},
      {}};
  for (const PairedCpuFigures& cpu : now.cpus) {
    const PairedCpuFigures* then = find_cpu(before, cpu.cpu);
    const std::map<std::string, CauseFigures> figures = by_cause(cpu);
    const std::map<std::string, CauseFigures> earlier =
        then ? by_cause(*then) : std::map<std::string, CauseFigures>{};
    for (const auto& [cause, f] : figures) {
      if (f.count == 0) continue;
      Cell rate, stolen_rate;
      if (then != nullptr && seconds > 0) {
        const auto e = earlier.find(cause);
        const CauseFigures old = e == earlier.end() ? CauseFigures{} : e->second;
        rate = Cell(static_cast<double>(counter_rise(f.count, old.count)) / seconds, 1);
        stolen_rate = Cell(static_cast<double>(counter_rise(f.ns, old.ns)) * 1e-6 / seconds, 3);
      }
      table.rows.push_back({cpu.cpu, cause, f.count, Cell(static_cast<double>(f.ns) * 1e-6, 3),
                            Cell(static_cast<double>(f.max_ns) * 1e-3, 1), rate, stolen_rate});
    }
  }
  return table;
}

ProbeTable outlier_table(const WatchPairedHistory& history, std::string_view method) {
  ProbeTable table{"the latest outliers (" + std::string(method) + "), newest last",
                   {"end_s", "cpu", "cause", "duration_us", "who"},
                   {}};
  for (const NamedOutlier& n : history.recent)
    table.rows.push_back({Cell(static_cast<double>(n.outlier.end_ns) * 1e-9, 3), n.outlier.cpu, n.cause,
                          Cell(static_cast<double>(n.outlier.duration_ns) * 1e-3, 1), n.who});
  return table;
}

// The program's own cost by handler and the role of the CPU it ran on (none: no role, the
// program looked it up and returned). The time is measured where the program works (watched and
// sampled CPUs); on the others it reads no clock, so only its runs count there.
// Each handler's cost by the role of the CPUs it ran on, where it ran: f(program, role, cost).
template <class F>
void for_each_program_cost(const PairedReading& now, F&& f) {
  for (std::size_t p = 0; p < now.programs.size(); ++p) {
    const BpfProgramCosts& c = now.programs[p];
    const std::pair<std::string_view, const BpfProgramCost*> roles[] = {
        {"watched", &c.watched}, {"sampled", &c.sampled}, {"none", &c.other}};
    for (const auto& [role, cost] : roles)
      if (cost->runs > 0) f(p, role, *cost);
  }
}

void add_program_costs(const PairedReading& now, std::vector<ProbeMetric>& out) {
  for_each_program_cost(now, [&](std::size_t p, std::string_view role, const BpfProgramCost& cost) {
    const ProbeLabels labels{{"program", std::string(bpf_program_name(p))}, {"role", std::string(role)}};
    out.push_back(counter("jitterd_watch_bpf_runs_total",
                          "Runs of the watch's BPF program by handler and the role of the CPU it ran on "
                          "(watched, sampled, none), counted by the program (bpf).",
                          labels, static_cast<double>(cost.runs)));
    if (role == "none" || !bpf_program_timed(p)) return;
    out.push_back(counter("jitterd_watch_bpf_run_seconds_total",
                          "Time the watch's BPF program ran by handler on the watched and sampled CPUs, "
                          "estimated by the program: one run in 16 timed, counted 16 times (bpf).",
                          labels, static_cast<double>(cost.ns) * 1e-9));
  });
}

ProbeTable program_cost_table(const PairedReading& now) {
  ProbeTable table{
      "the BPF program's own cost by handler (bpf; ns_per_run where it works: watched and sampled CPUs)",
      {"program", "role", "runs", "ns_per_run"},
      {}};
  std::vector<std::tuple<std::uint64_t, std::string, std::string, Cell>> rows;
  for_each_program_cost(now, [&](std::size_t p, std::string_view role, const BpfProgramCost& cost) {
    rows.emplace_back(cost.runs, std::string(bpf_program_name(p)), std::string(role),
                      role == "none" || !bpf_program_timed(p)
                          ? Cell()
                          : Cell(static_cast<double>(cost.ns) / static_cast<double>(cost.runs), 1));
  });
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  for (auto& [runs, program, role, per_run] : rows) table.rows.push_back({program, role, runs, per_run});
  return table;
}

ProbeTable ipi_sender_table(const PairedReading& now) {
  ProbeTable table{"IPIs sent to watched CPUs by sender (bpf)", {"cpu", "sender", "count"}, {}};
  for (const PairedCpuFigures& cpu : now.cpus)
    for (const auto& [sender, n] : top_ipi_senders(cpu.ipi_senders, cpu.ipi_senders_other))
      table.rows.push_back({cpu.cpu, printable(sender), n});
  return table;
}

ProbeTable tick_stop_table(const PairedReading& now, std::string_view method) {
  ProbeTable table{
      "tick stop failures by dependency (" + std::string(method) + ")", {"cpu", "dependency", "count"}, {}};
  for (const PairedCpuFigures& cpu : now.cpus) {
    for (std::size_t bit = 0; bit < cpu.tick_stop_failures.size(); ++bit)
      if (cpu.tick_stop_failures[bit] > 0)
        table.rows.push_back({cpu.cpu, std::string(tick_dependency_name(bit)), cpu.tick_stop_failures[bit]});
    if (cpu.tick_stop_failures_unknown > 0)
      table.rows.push_back({cpu.cpu, "unknown", cpu.tick_stop_failures_unknown});
  }
  return table;
}

}  // namespace

std::vector<std::pair<std::string, std::uint64_t>> top_ipi_senders(
    const std::map<std::string, std::uint64_t>& senders, std::uint64_t other) {
  std::vector<std::pair<std::string, std::uint64_t>> all(senders.begin(), senders.end());
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (all.size() <= kMaxIpiSendersPerCpu && other == 0) return all;
  if (all.size() <= kMaxIpiSendersPerCpu) {
    all.emplace_back("other", other);
    return all;
  }
  std::uint64_t rest = other;
  for (std::size_t i = kMaxIpiSendersPerCpu; i < all.size(); ++i) rest += all[i].second;
  all.resize(kMaxIpiSendersPerCpu);
  all.emplace_back("other", rest);
  return all;
}

NamedOutlier name_outlier(const PairedOutlier& outlier) {
  NamedOutlier n{outlier, std::string(watch_source_cause(outlier.source)),
                 std::string(watch_source_task_class(outlier.source)), ""};
  const std::string name = printable(outlier.name);
  if (!n.task_class.empty())
    n.who = name + "[" + std::to_string(outlier.id) + "] (" + n.task_class + ")";
  else if (watch_source_name(outlier.source) == "device_irq")
    n.who = "irq " + std::to_string(outlier.id) + (name.empty() ? "" : " " + name);
  else
    n.who = std::string(watch_source_name(outlier.source));
  return n;
}

void WatchPairedHistory::add(const PairedReading& reading) {
  outliers_dropped += reading.outliers_dropped;
  for (const PairedOutlier& o : reading.outliers) {
    NamedOutlier named = name_outlier(o);
    outliers[{o.cpu, named.cause}] += 1;
    recent.push_back(std::move(named));
    if (recent.size() > kRecentOutliers) recent.pop_front();
  }
}

void add_paired_result(const PairedReading& now, const PairedReading* before, const WatchReading& counts,
                       const WatchPairedHistory& history, const KernelWatch& engine, ProbeResult& result) {
  const std::string_view method = engine.method();
  const bool bpf = method == "bpf";  // the IPIs' senders and the program's thread map are bpf's
  const std::vector<std::string>& missing = engine.missing_tracepoints();
  for (const PairedCpuFigures& cpu : now.cpus) add_cpu_metrics(cpu, counts, result.metrics);
  for (const auto& [key, n] : history.outliers)
    result.metrics.push_back(
        counter("jitterd_watch_outliers_total",
                "Interruptions and preemptions at or above watch.outlier_threshold (bpf, tracepoints).",
                {{"cpu", std::to_string(key.first)}, {"cause", key.second}}, static_cast<double>(n)));
  for (const std::string& tracepoint : missing)
    result.metrics.push_back(gauge("jitterd_watch_tracepoint_missing",
                                   "1 for each optional tracepoint this kernel lacks; what it would count is not "
                                   "counted (bpf, tracepoints).",
                                   {{"tracepoint", tracepoint}}, 1));
  result.tables.push_back(glance_table(now, before, counts.window_seconds, method));
  result.tables.push_back(cause_table(now, before, counts.window_seconds, method));
  result.tables.push_back(outlier_table(history, method));
  result.tables.push_back(tick_stop_table(now, method));
  if (bpf) {
    result.tables.push_back(ipi_sender_table(now));
    result.tables.push_back(program_cost_table(now));
    result.metrics.push_back(
        counter("jitterd_watch_ipi_senders_untracked_total",
                "IPIs to watched CPUs whose sender the program's full map could not take (bpf).", {},
                static_cast<double>(now.ipi_senders_untracked)));
    result.metrics.push_back(gauge("jitterd_watch_application_untracked_threads",
                                   "The application's threads the program's map could not take: their "
                                   "preemptions are not counted (bpf).",
                                   {}, static_cast<double>(engine.application_untracked())));
    add_program_costs(now, result.metrics);
  }
  if (engine.application_untracked() > 0)
    result.notes.push_back(std::to_string(engine.application_untracked()) +
                           " of the application's threads could not be added to the BPF program's map: their "
                           "preemptions are not counted");
  if (!missing.empty())
    result.notes.push_back("this kernel lacks the tracepoints " + joined(missing) +
                           ": what they would count is not counted");
  if (history.outliers_dropped > 0)
    result.notes.push_back(std::to_string(history.outliers_dropped) +
                           " outliers were drained but not kept (more than " +
                           std::to_string(kMaxOutliersPerReading) + " in one reading)");
}

void add_tracer_wakeups(const std::map<int, std::uint64_t>& wakeups, ProbeResult& result) {
  for (const auto& [cpu, n] : wakeups)
    result.metrics.push_back(
        counter("jitterd_watch_tracer_wakeups_total",
                "Interrupts the tracepoints method itself cost the watched CPU: perf wakes the ring's reader "
                "with an irq_work there once per ring's worth of records (4 MiB).",
                {{"cpu", std::to_string(cpu)}}, static_cast<double>(n)));
  result.notes.push_back(
      "tracepoints: perf's ring costs each watched CPU one irq_work per 4 MiB of records "
      "(jitterd_watch_tracer_wakeups_total); the bpf method costs it none");
}

}  // namespace jitterd
