#include "cli/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "cli/posture_report.h"
#include "config/config.h"
#include "host/cpu_list.h"
#include "sampling/probe_context.h"
#include "sampling/sampler_set.h"
#include "sampling/sampling_plan.h"

namespace jitterd {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else
      out += c;
  }
  return out + "\"";
}

CpuGapReport report_cpu(const SamplerWorker& worker) {
  CpuGapReport r;
  const SamplerSettings& s = worker.settings();
  r.cpu = s.cpu;
  r.error = worker.startup().error;
  const SamplerShared* shared = worker.shared();
  if (!shared) return r;
  HistogramSnapshot snapshot;
  shared->histogram.snapshot(snapshot);
  const auto ns = [&](std::uint64_t ticks) { return s.scale.to_seconds(ticks) * 1e9; };
  const double ns_per_tick = 1e9 / s.scale.hertz();
  r.samples = snapshot.total();
  const std::uint64_t sampled = shared->sampled_ticks.load();
  const std::uint64_t max = shared->max_gap.load();
  if (r.samples > 0) {
    r.mean_ticks = static_cast<double>(sampled) / static_cast<double>(r.samples);
    r.stddev_ticks = snapshot.approximate_stddev();
    r.mean_ns = r.mean_ticks * ns_per_tick;
    r.stddev_ns = r.stddev_ticks * ns_per_tick;
    r.min_ns = ns(shared->min_gap.load());
    const WindowSummary summary = summarize(snapshot, max, s.scale);
    r.p50_ns = summary.p50 * 1e9;
    r.p99_ns = summary.p99 * 1e9;
    r.p999_ns = summary.p999 * 1e9;
    r.p9999_ns = summary.p9999 * 1e9;
    r.max_ns = ns(max);
  }
  r.floor_ns = ns(worker.startup().floor_ticks);
  r.threshold_ns = ns(worker.startup().threshold_ticks);
  r.interruptions = shared->interruption_count.load();
  r.sampled_seconds = s.scale.to_seconds(sampled);
  r.stolen_seconds = s.scale.to_seconds(shared->interrupted_ticks.load());
  r.stolen_share = r.sampled_seconds > 0 ? r.stolen_seconds / r.sampled_seconds : 0;
  r.kept = shared->interruptions.copy_since(0);
  return r;
}

std::string format_report_table(const GapReport& report) {
  std::ostringstream out;
  out << "counter " << report.method << " at " << format_number(report.frequency.hertz / 1e6, 3) << " MHz ("
      << report.frequency.source << "), one tick = " << format_number(1e9 / report.frequency.hertz, 3)
      << " ns; sampled " << format_number(report.duration_seconds, 1) << " s continuously\n";
  char line[512];
  std::snprintf(line, sizeof line, "%4s %12s %10s %10s %9s %9s %9s %9s %9s %9s %10s %10s %8s %8s\n", "cpu",
                "samples", "mean_tick", "sd_tick", "mean_ns", "sd_ns", "p50_ns", "p99_ns", "p99.9_ns", "p99.99_ns",
                "max_ns", "interrupts", "stolen%", "thr_ns");
  out << line;
  for (const auto& c : report.cpus) {
    if (!c.error.empty()) {
      out << "cpu " << c.cpu << ": not sampled: " << c.error << "\n";
      continue;
    }
    std::snprintf(line, sizeof line,
                  "%4d %12llu %10.1f %10.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %10.0f %10llu %8.4f %8.1f\n",
                  c.cpu, static_cast<unsigned long long>(c.samples), c.mean_ticks, c.stddev_ticks, c.mean_ns,
                  c.stddev_ns, c.p50_ns, c.p99_ns, c.p999_ns, c.p9999_ns, c.max_ns,
                  static_cast<unsigned long long>(c.interruptions), c.stolen_share * 100, c.threshold_ns);
    out << line;
  }
  out << "percentiles are the upper edge of a histogram bucket (at most 6.25% above the true value, never above "
         "max); max and mean are exact; sd is from bucket midpoints with Sheppard's correction\n";
  return out.str();
}

std::string format_report_csv(const GapReport& report) {
  std::ostringstream out;
  out << "cpu,samples,mean_ticks,stddev_ticks,mean_ns,stddev_ns,min_ns,p50_ns,p99_ns,p99_9_ns,p99_99_ns,max_ns,"
         "interruptions,sampled_seconds,stolen_seconds,stolen_share,floor_ns,threshold_ns,error\n";
  for (const auto& c : report.cpus) {
    out << c.cpu << ',' << c.samples << ',' << format_number(c.mean_ticks, 3) << ','
        << format_number(c.stddev_ticks, 3) << ',' << format_number(c.mean_ns, 3) << ','
        << format_number(c.stddev_ns, 3) << ',' << format_number(c.min_ns, 3) << ',' << format_number(c.p50_ns, 3)
        << ',' << format_number(c.p99_ns, 3) << ',' << format_number(c.p999_ns, 3) << ','
        << format_number(c.p9999_ns, 3) << ',' << format_number(c.max_ns, 3) << ',' << c.interruptions << ','
        << format_number(c.sampled_seconds, 6) << ',' << format_number(c.stolen_seconds, 9) << ','
        << format_number(c.stolen_share, 9) << ',' << format_number(c.floor_ns, 3) << ','
        << format_number(c.threshold_ns, 3) << ',' << c.error << '\n';
  }
  return out.str();
}

std::string format_report_json(const GapReport& report, bool with_interruptions) {
  std::ostringstream out;
  out << "{\"counter\":{\"method\":" << json_string(report.method)
      << ",\"hertz\":" << format_number(report.frequency.hertz, 3)
      << ",\"source\":" << json_string(report.frequency.source)
      << ",\"uncertainty_ppm\":" << format_number(report.frequency.uncertainty_ppm, 4)
      << "},\"duration_seconds\":" << format_number(report.duration_seconds, 3) << ",\"cpus\":[";
  for (std::size_t i = 0; i < report.cpus.size(); ++i) {
    const auto& c = report.cpus[i];
    out << (i ? "," : "") << "{\"cpu\":" << c.cpu << ",\"error\":" << json_string(c.error)
        << ",\"samples\":" << c.samples << ",\"mean_ticks\":" << format_number(c.mean_ticks, 3)
        << ",\"stddev_ticks\":" << format_number(c.stddev_ticks, 3)
        << ",\"mean_ns\":" << format_number(c.mean_ns, 3) << ",\"stddev_ns\":" << format_number(c.stddev_ns, 3)
        << ",\"min_ns\":" << format_number(c.min_ns, 3) << ",\"p50_ns\":" << format_number(c.p50_ns, 3)
        << ",\"p99_ns\":" << format_number(c.p99_ns, 3) << ",\"p99_9_ns\":" << format_number(c.p999_ns, 3)
        << ",\"p99_99_ns\":" << format_number(c.p9999_ns, 3) << ",\"max_ns\":" << format_number(c.max_ns, 3)
        << ",\"interruptions\":" << c.interruptions
        << ",\"sampled_seconds\":" << format_number(c.sampled_seconds, 6)
        << ",\"stolen_seconds\":" << format_number(c.stolen_seconds, 9)
        << ",\"stolen_share\":" << format_number(c.stolen_share, 9)
        << ",\"floor_ns\":" << format_number(c.floor_ns, 3)
        << ",\"threshold_ns\":" << format_number(c.threshold_ns, 3);
    if (with_interruptions) {
      out << ",\"kept_interruptions\":[";
      for (std::size_t k = 0; k < c.kept.size(); ++k) {
        out << (k ? "," : "") << "[" << c.kept[k].start_tick << "," << c.kept[k].duration_ticks << "]";
      }
      out << "]";
    }
    out << "}";
  }
  out << "]}\n";
  return out.str();
}

namespace {
// Characters as a terminal shows them: UTF-8 continuation bytes (the second byte of "±") take no
// column of their own.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
}  // namespace

std::string format_probe_table(std::string_view probe, const ProbeResult& result) {
  std::ostringstream out;
  out << "probe " << probe << "\n";
  for (const ProbeTable& table : result.tables) {
    std::vector<std::size_t> width(table.columns.size(), 0);
    for (std::size_t c = 0; c < table.columns.size(); ++c) width[c] = display_width(table.columns[c]);
    for (const auto& row : table.rows) {
      for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
        width[c] = std::max(width[c], display_width(row[c]));
    }
    out << "\n" << table.title << "\n";
    const auto print_row = [&](const std::vector<std::string>& cells) {
      for (std::size_t c = 0; c < cells.size() && c < width.size(); ++c) {
        // Text left, numbers right, as a reader scans them.
        const bool numeric =
            !cells[c].empty() && (std::isdigit(static_cast<unsigned char>(cells[c][0])) || cells[c][0] == '-');
        out << (c ? "  " : "")
            << (numeric && c ? std::string(width[c] - display_width(cells[c]), ' ') + cells[c]
                             : cells[c] + std::string(width[c] - display_width(cells[c]), ' '));
      }
      out << "\n";
    };
    print_row(table.columns);
    for (const auto& row : table.rows) print_row(row);
  }
  for (const auto& note : result.notes) out << "note: " << note << "\n";
  return out.str();
}

std::string format_probe_csv(const ProbeResult& result) {
  std::ostringstream out;
  for (std::size_t t = 0; t < result.tables.size(); ++t) {
    const ProbeTable& table = result.tables[t];
    if (t) out << "\n";
    const auto print_row = [&](const std::vector<std::string>& cells) {
      for (std::size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << cells[c];
      out << "\n";
    };
    print_row(table.columns);
    for (const auto& row : table.rows) print_row(row);
  }
  return out.str();
}

std::string format_probe_json(std::string_view probe, const ProbeResult& result) {
  std::ostringstream out;
  out << "{\"probe\":" << json_string(std::string(probe)) << ",\"tables\":[";
  for (std::size_t t = 0; t < result.tables.size(); ++t) {
    const ProbeTable& table = result.tables[t];
    out << (t ? "," : "") << "{\"title\":" << json_string(table.title) << ",\"columns\":[";
    for (std::size_t c = 0; c < table.columns.size(); ++c) out << (c ? "," : "") << json_string(table.columns[c]);
    out << "],\"rows\":[";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      out << (r ? "," : "") << "[";
      for (std::size_t c = 0; c < table.rows[r].size(); ++c)
        out << (c ? "," : "") << json_string(table.rows[r][c]);
      out << "]";
    }
    out << "]}";
  }
  out << "],\"notes\":[";
  for (std::size_t n = 0; n < result.notes.size(); ++n) out << (n ? "," : "") << json_string(result.notes[n]);
  out << "]}\n";
  return out.str();
}

namespace {
// `jitterd report clock|pacing|kernel|pinning`: one run of one probe, no samplers running, so
// every CPU it needs is reached through a temporary pinned thread.
int run_probe_report(const CommandLine& cl) {
  const std::string probe_name = cl.report_topic == "kernel" ? "kernel_cost" : cl.report_topic;
  const HostReader host(cl.sysfs, cl.procfs);
  const std::vector<int> affinity = current_affinity();
  const SamplingPlan plan = make_sampling_plan(cl, host, affinity);
  std::unique_ptr<Probe> probe;
  if (probe_name == "c2c") {
    // Like core-to-core-latency: every pair among the given CPUs, all in one run.
    C2cSettings settings = plan.config.probes.c2c;
    settings.pairs.selection = PairSelection::all;
    settings.cpus = affinity;
    if (cl.report_cpus) {
      std::string error;
      const auto cpus = parse_cpu_list(*cl.report_cpus, &error);
      if (!cpus || cpus->size() < 2) {
        std::cerr << "jitterd: --cpus: " << (cpus ? "needs at least two CPUs" : error) << ", got \""
                  << *cl.report_cpus << "\"\n";
        return 64;
      }
      settings.cpus = *cpus;
    }
    probe = std::make_unique<C2cProbe>(std::move(settings));
  } else {
    probe = make_probe(probe_name, plan.config.probes);
  }
  restrict_current_thread(plan.selection.housekeeping);
  ProbeContext context =
      make_probe_context(plan, host, counter_frequency(plan.method, std::chrono::milliseconds(250)));
  const ProbeStatus status = run_probe(*probe, context);
  if (!status.success) {
    std::cerr << "jitterd: probe " << probe_name << " failed: " << status.error << "\n";
    return 1;
  }
  switch (cl.report_format) {
    case ReportFormat::table:
      std::cout << format_probe_table(probe_name, status.result);
      break;
    case ReportFormat::csv:
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
  if (cl.report_topic == "posture") return run_posture_report(cl);
  if (cl.report_cpus && cl.report_topic != "c2c") {
    std::cerr << "jitterd: --cpus: only for report c2c (the other topics use the configured cpus)\n";
    return 64;
  }
  if (cl.report_topic != "gaps") return run_probe_report(cl);
  const auto duration = parse_duration(cl.report_duration);
  if (!duration || *duration < std::chrono::milliseconds(100) || *duration > std::chrono::hours(24)) {
    std::cerr << "jitterd: --duration: must be 100ms..24h, got \"" << cl.report_duration << "\"\n";
    return 64;
  }
  const HostReader host(cl.sysfs, cl.procfs);
  SamplingPlan plan = make_sampling_plan(cl, host, current_affinity());
  for (const auto& p : plan.machine_problems) spdlog::warn("{}", p);
  for (const auto& n : plan.selection.notes) spdlog::info("{}", n);
  // A one-shot report spins for its whole duration: the duty cycle is for the daemon.
  plan.config.sampler.duty_cycle = DutyCycleMode::continuous;
  restrict_current_thread(plan.selection.housekeeping);
  GapReport report;
  report.method = std::string(to_string(plan.method));
  report.frequency = counter_frequency(plan.method, std::chrono::milliseconds(250));
  report.duration_seconds = std::chrono::duration<double>(*duration).count();
  SamplerSet samplers(sampler_settings(plan, TickScale(report.frequency.hertz)));
  samplers.start();
  std::this_thread::sleep_for(*duration);
  samplers.stop();
  for (std::size_t i = 0; i < samplers.size(); ++i) report.cpus.push_back(report_cpu(samplers.worker(i)));
  switch (cl.report_format) {
    case ReportFormat::table:
      std::cout << format_report_table(report);
      break;
    case ReportFormat::csv:
      std::cout << format_report_csv(report);
      break;
    case ReportFormat::json:
      std::cout << format_report_json(report, cl.report_interruptions);
      break;
  }
  return 0;
}

}  // namespace jitterd
