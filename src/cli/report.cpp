// SPDX-License-Identifier: Apache-2.0
#include "cli/report.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <thread>

#include "cli/baseline.h"
#include "cli/posture_report.h"
#include "cli/progress.h"
#include "cli/report_from.h"
#include "config/config_source.h"
#include "daemon/logging.h"
#include "host/cpu_list.h"
#include "host/text.h"
#include "probes/probe_registry.h"
#include "report/baseline_html.h"
#include "report/render.h"
#include "sampling/probe_context.h"
#include "sampling/sampler_set.h"
#include "sampling/sampling_plan.h"
#include "sampling/sampling_start.h"

namespace jitterd {

CpuGapReport report_cpu(const SamplerWorker& worker) {
  CpuGapReport r;
  const SamplerSettings& s = worker.settings();
  r.cpu = s.cpu;
  r.error = worker.startup().error;
  const SamplerShared* shared = worker.shared();
  if (!shared) return r;
  const GapCountsTicks counts = read_counts(*shared);
  static_cast<CpuFigures&>(r) = cpu_figures(counts, shared->max_gap.load(), s.scale);
  set_limits(r, worker.startup().floor_ticks, worker.startup().threshold_ticks, s.scale);
  if (r.samples > 0) {
    const double ns_per_tick = 1e9 / s.scale.hertz();
    r.mean_ticks = static_cast<double>(counts.sampled_ticks) / static_cast<double>(r.samples);
    r.stddev_ticks = counts.gaps.approximate_stddev();
    r.mean_ns = r.mean_ticks * ns_per_tick;
    r.stddev_ns = r.stddev_ticks * ns_per_tick;
    r.min_ns = s.scale.to_fractional_ns(shared->min_gap.load());
  }
  r.stolen_share = r.sampled_seconds > 0 ? r.stolen_seconds / r.sampled_seconds : 0;
  r.kept = shared->interruptions.copy_since(0);
  return r;
}

ProbeTable gap_table(const GapReport& report) {
  ProbeTable table{"gaps per cpu",
                   {"cpu", "samples", "mean_ticks", "stddev_ticks", "mean_ns", "stddev_ns", "min_ns", "p50_ns",
                    "p99_ns", "p99_9_ns", "p99_99_ns", "max_ns", "interruptions", "sampled_seconds",
                    "stolen_seconds", "stolen_share", "floor_ns", "threshold_ns", "error"},
                   {}};
  for (const CpuGapReport& c : report.cpus) {
    table.rows.push_back({c.cpu, c.samples, Cell(c.mean_ticks, 3), Cell(c.stddev_ticks, 3), Cell(c.mean_ns, 3),
                          Cell(c.stddev_ns, 3), Cell(c.min_ns, 3), Cell(c.p50_ns, 3), Cell(c.p99_ns, 3),
                          Cell(c.p999_ns, 3), Cell(c.p9999_ns, 3), Cell(c.max_ns, 3), c.interruptions,
                          Cell(c.sampled_seconds, 6), Cell(c.stolen_seconds, 9), Cell(c.stolen_share, 9),
                          Cell(c.floor_ns, 3), Cell(c.threshold_ns, 3), c.error});
  }
  return table;
}

ProbeTable gap_display_table(const GapReport& report) {
  ProbeTable table{"gaps per cpu",
                   {"cpu", "samples", "mean_tick", "sd_tick", "mean_ns", "sd_ns", "p50_ns", "p99_ns", "p99.9_ns",
                    "p99.99_ns", "max_ns", "interrupts", "stolen%", "thr_ns"},
                   {}};
  for (const CpuGapReport& c : report.cpus) {
    if (!c.error.empty()) continue;  // listed under the table
    table.rows.push_back({c.cpu, c.samples, Cell(c.mean_ticks, 1), Cell(c.stddev_ticks, 1), Cell(c.mean_ns, 1),
                          Cell(c.stddev_ns, 1), Cell(c.p50_ns, 1), Cell(c.p99_ns, 1), Cell(c.p999_ns, 1),
                          Cell(c.p9999_ns, 1), Cell(c.max_ns, 0), c.interruptions, Cell(c.stolen_share * 100, 4),
                          Cell(c.threshold_ns, 1)});
  }
  return table;
}

std::string format_report_table(const GapReport& report) {
  std::string out =
      fmt::format("counter {} at {:.3f} MHz ({}), one tick = {:.3f} ns; sampled {:.1f} s continuously\n",
                  report.method, report.frequency.hertz / 1e6, report.frequency.source,
                  1e9 / report.frequency.hertz, report.duration_seconds);
  out += table_text(gap_display_table(report));
  for (const CpuGapReport& c : report.cpus) {
    if (!c.error.empty()) out += fmt::format("cpu {}: not sampled: {}\n", c.cpu, c.error);
  }
  return out +
         "percentiles are the upper edge of a histogram bucket (at most 6.25% above the true value, never above "
         "max); max and mean are exact; sd is from bucket midpoints with Sheppard's correction\n";
}

std::string format_report_csv(const GapReport& report) { return table_csv(gap_table(report)); }

std::string format_report_json(const GapReport& report, bool with_interruptions) {
  Json cpus = table_records(gap_table(report));
  if (with_interruptions) {
    for (std::size_t i = 0; i < report.cpus.size(); ++i) {
      cpus[i]["kept_interruptions"] = json_array(report.cpus[i].kept, [](const Interruption& k) {
        return Json{k.start_tick, k.duration_ticks};
      });
    }
  }
  const Json document{{"counter",
                       {{"method", report.method},
                        {"hertz", report.frequency.hertz},
                        {"source", report.frequency.source},
                        {"uncertainty_ppm", report.frequency.uncertainty_ppm}}},
                      {"duration_seconds", report.duration_seconds},
                      {"cpus", std::move(cpus)}};
  return json_text(document);
}

std::string format_probe_table(std::string_view probe, const ProbeResult& result) {
  std::string out = fmt::format("probe {}\n", probe);
  // Titles and notes may come from outside (a daemon's /status.json: report --from): escaped as cells are.
  for (const ProbeTable& table : result.tables)
    out += fmt::format("\n{}\n{}", printable(table.title), table_text(table));
  for (const auto& note : result.notes) out += fmt::format("note: {}\n", printable(note));
  return out;
}

// Several tables in one CSV: a blank line between them, each with its own header.
std::string format_probe_csv(const ProbeResult& result) {
  std::string out;
  for (std::size_t t = 0; t < result.tables.size(); ++t) out += (t ? "\n" : "") + table_csv(result.tables[t]);
  return out;
}

std::string format_probe_json(std::string_view probe, const ProbeResult& result) {
  return json_text(Json{
      {"probe", std::string(probe)}, {"tables", json_array(result.tables, table_json)}, {"notes", result.notes}});
}

namespace {
// The plan a report runs under: the configuration with the flags applied, logging as it says.
SamplingPlan report_plan(const CommandLine& cl, const HostReader& host, const std::vector<int>& allowed) {
  SamplingPlan plan = make_sampling_plan(load_config(config_source(cl)), host, allowed);
  set_log_level(plan.config.log.level);
  return plan;
}

// `jitterd report PROBE`: one run of one probe, no samplers running, so every CPU it needs is
// reached through a temporary pinned thread.
int run_probe_report(const CommandLine& cl) {
  const std::string& probe_name = cl.report_topic;
  const HostReader host = host_reader(cl);
  const std::vector<int> affinity = current_affinity();
  const SamplingPlan plan = report_plan(cl, host, affinity);
  // A probe that runs over CPUs (c2c: every pair among them) takes --cpus, or every CPU jitterd may use.
  const ProbeFacts& facts = *probe_facts(probe_name);
  const std::unique_ptr<Probe> probe =
      facts.report_over_cpus == nullptr
          ? make_probe(probe_name, plan.config.probes)
          : make_probe(probe_name, facts.report_over_cpus(plan.config.probes, cl.report_cpus.value_or(affinity)));
  restrict_current_thread(plan.selection.housekeeping);
  Progress progress;  // after the restriction: its thread stays on the housekeeping CPUs
  progress.step("calibrating the counter");
  const CounterFrequency context_frequency = housekeeping_counter_frequency(plan);
  ProbeContext context = make_probe_context(plan, host, context_frequency);
  if (facts.report_over_cpus != nullptr) {
    const std::size_t n = cl.report_cpus.value_or(affinity).size();
    progress.step(fmt::format("probe {} over {} cpu{}", probe_name, n, n == 1 ? "" : "s"));
  } else {
    progress.step("probe " + probe_name);
  }
  const ProbeStatus status = run_probe(*probe, context);
  progress.clear();
  if (!cl.save_path.empty() || cl.report_format == ReportFormat::html) {
    const Baseline baseline =
        record_baseline(baseline_recording(plan, host, context_frequency, 0), {}, {baseline_probe(status)});
    if (!cl.save_path.empty()) write_baseline(baseline, cl.save_path);
    if (cl.report_format == ReportFormat::html && status.success) {
      std::cout << baseline_html(baseline, "report " + probe_name);
      return 0;
    }
  }
  if (!status.success) {
    std::cerr << "jitterd: probe " << probe_name << " failed: " << status.error << "\n";
    return 1;
  }
  switch (cl.report_format) {
    case ReportFormat::table:
      std::cout << fresh_reading_line(probe_name, plan.config.web)
                << format_probe_table(probe_name, status.result);
      break;
    case ReportFormat::csv:
    case ReportFormat::script:  // refused for this topic by the command line
    case ReportFormat::html:    // written above
      std::cout << format_probe_csv(status.result);
      break;
    case ReportFormat::json:
      std::cout << format_probe_json(probe_name, status.result);
      break;
  }
  return 0;
}
}  // namespace

int run_report(const CommandLine& cl) {
  if (!cl.report_from.empty()) return run_report_from(cl);
  if (!cl.save_path.empty()) check_baseline_target(cl.save_path);  // before measuring, not after
  if (cl.report_topic != "gaps") {
    const bool checklist = probe_facts(cl.report_topic)->report == ReportKind::checklist;
    return checklist ? run_posture_report(cl) : run_probe_report(cl);
  }
  const HostReader host = host_reader(cl);
  SamplingPlan plan = report_plan(cl, host, current_affinity());
  for (const auto& p : plan.machine_problems) spdlog::warn("{}", p);
  for (const auto& n : plan.selection.notes) spdlog::info("{}", n);
  // A one-shot report spins for its whole duration: the duty cycle is for the daemon.
  plan.config.sampler.duty_cycle = DutyCycleMode::continuous;
  restrict_current_thread(plan.selection.housekeeping);
  Progress progress;  // after the restriction: its thread stays on the housekeeping CPUs
  progress.step("calibrating the counter");
  GapReport report;
  report.method = std::string(to_string(plan.method));
  report.frequency = housekeeping_counter_frequency(plan);
  report.duration_seconds = std::chrono::duration<double>(cl.report_duration).count();
  const std::shared_ptr<SamplerSet> samplers = start_samplers(plan, report.frequency, host);
  progress.step(fmt::format("sampling cpus {}", format_cpu_list(plan.selection.sampled)), cl.report_duration);
  // Recorded in sub-windows whether or not it is saved: one way of running the samplers.
  std::vector<BaselineCpu> recorded = record_sub_windows(*samplers, cl.report_duration, report.frequency.hertz);
  progress.clear();
  for (std::size_t i = 0; i < samplers->size(); ++i) report.cpus.push_back(report_cpu(samplers->worker(i)));
  if (!cl.save_path.empty() || cl.report_format == ReportFormat::html) {
    const Baseline baseline = record_baseline(
        baseline_recording(plan, host, report.frequency, report.duration_seconds), std::move(recorded));
    if (!cl.save_path.empty()) write_baseline(baseline, cl.save_path);
    if (cl.report_format == ReportFormat::html) {
      std::cout << baseline_html(baseline, "report gaps");
      return 0;
    }
  }
  switch (cl.report_format) {
    case ReportFormat::table:
      std::cout << fresh_reading_line("gaps", plan.config.web) << format_report_table(report);
      break;
    case ReportFormat::csv:
    case ReportFormat::script:  // refused for this topic by the command line
    case ReportFormat::html:    // written above
      std::cout << format_report_csv(report);
      break;
    case ReportFormat::json:
      std::cout << format_report_json(report, cl.report_interruptions);
      break;
  }
  return 0;
}

}  // namespace jitterd
