#include "cli/posture_report.h"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/report.h"
#include "config/config.h"
#include "host/cpu_list.h"
#include "host/topology.h"
#include "sampling/sampling_plan.h"

namespace jitterd {
namespace {

struct Counts {
  std::size_t pass = 0, warn = 0, fail = 0;
};

Counts count(const std::vector<PostureCheck>& checks) {
  Counts c;
  for (const PostureCheck& check : checks) {
    (check.status == CheckStatus::pass ? c.pass : check.status == CheckStatus::warn ? c.warn : c.fail)++;
  }
  return c;
}

std::string summary(const PostureReport& report) {
  const Counts c = count(report.checks);
  return std::string(to_string(overall_status(report.checks))) + " (" + std::to_string(c.fail) + " fail, " +
         std::to_string(c.warn) + " warn, " + std::to_string(c.pass) + " pass)";
}

}  // namespace

std::string format_posture_table(const PostureReport& report) {
  std::ostringstream out;
  out << "isolation posture for sampled cpus "
      << (report.sampled.empty() ? "none" : format_cpu_list(report.sampled)) << " (cpus: " << report.cpus_setting
      << ")\n\n";
  std::size_t check_width = 5;
  for (const PostureCheck& c : report.checks) check_width = std::max(check_width, c.check.size());
  for (const PostureCheck& c : report.checks) {
    const std::string cpu = c.cpu ? "cpu " + std::to_string(*c.cpu) : "-";
    out << to_string(c.status) << "  " << c.check << std::string(check_width - c.check.size(), ' ') << "  " << cpu
        << std::string(cpu.size() < 7 ? 7 - cpu.size() : 0, ' ') << "  " << c.reason
        << (c.expectation ? " [expect]" : "") << "\n";
  }
  out << "\nfingerprint:\n";
  for (const auto& [field, value] : fingerprint_fields(report.fingerprint)) {
    out << "  " << field << std::string(13 - std::min<std::size_t>(field.size(), 12), ' ')
        << (value.empty() ? "unknown" : value) << "\n";
  }
  for (const std::string& problem : report.problems) out << "unreadable: " << problem << "\n";
  out << "\nresult: " << summary(report) << "\n";
  return out.str();
}

std::string format_posture_json(const PostureReport& report) {
  std::ostringstream out;
  const Counts c = count(report.checks);
  out << "{\"sampled\":[";
  for (std::size_t i = 0; i < report.sampled.size(); ++i) out << (i ? "," : "") << report.sampled[i];
  out << "],\"cpus\":" << json_string(report.cpus_setting) << ",\"result\":\""
      << to_string(overall_status(report.checks)) << "\",\"counts\":{\"fail\":" << c.fail << ",\"warn\":" << c.warn
      << ",\"pass\":" << c.pass << "},\"checks\":[";
  for (std::size_t i = 0; i < report.checks.size(); ++i) {
    const PostureCheck& check = report.checks[i];
    out << (i ? "," : "") << "{\"status\":\"" << to_string(check.status)
        << "\",\"check\":" << json_string(check.check)
        << ",\"cpu\":" << (check.cpu ? std::to_string(*check.cpu) : "null")
        << ",\"reason\":" << json_string(check.reason)
        << ",\"expectation\":" << (check.expectation ? "true" : "false") << "}";
  }
  out << "],\"fingerprint\":{";
  bool first = true;
  for (const auto& [field, value] : fingerprint_fields(report.fingerprint)) {
    out << (first ? "" : ",") << json_string(field) << ":" << json_string(value);
    first = false;
  }
  out << "},\"unreadable\":[";
  for (std::size_t i = 0; i < report.problems.size(); ++i)
    out << (i ? "," : "") << json_string(report.problems[i]);
  out << "]}\n";
  return out.str();
}

int posture_exit_code(const PostureReport& report) {
  switch (overall_status(report.checks)) {
    case CheckStatus::pass:
      return 0;
    case CheckStatus::warn:
      return 1;
    case CheckStatus::fail:
      return 2;
  }
  return 2;
}

namespace {
int report_posture(const CommandLine& cl);
}  // namespace

int run_posture_report(const CommandLine& cl) {
  if (cl.report_format == ReportFormat::csv) {
    std::cerr << "jitterd: report posture: --format table or json\n";
    return 64;
  }
  try {
    return report_posture(cl);
  } catch (const ConfigErrors&) {
    throw;  // main() reports them and exits 78
  } catch (const std::exception& e) {
    // Not 1: a runbook must tell "could not check" from "a WARN".
    std::cerr << "jitterd: report posture: " << e.what() << "\n";
    return 3;
  }
}

namespace {
int report_posture(const CommandLine& cl) {
  const HostReader host(cl.sysfs, cl.procfs);
  // The machine the sysfs root describes, not this process's affinity, decides what `cpus: auto`
  // selects: the report judges a fixture tree as it would judge that machine.
  const SamplingPlan plan = make_sampling_plan(cl, host, read_topology(host).online);
  // A second of /proc/stat says whether the sampled CPUs' SMT siblings are idle: at USER_HZ 100,
  // 100 ticks, so one busy tick (1%) still counts as idle and two do not.
  const std::map<int, CpuTimes> before = parse_proc_stat(host.read_proc("stat").value_or(""));
  if (!before.empty()) std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::map<int, double> busy = busy_shares(before, parse_proc_stat(host.read_proc("stat").value_or("")));
  const Posture posture = read_posture(host);
  PostureReport report;
  report.sampled = plan.selection.sampled;
  std::sort(report.sampled.begin(), report.sampled.end());
  report.cpus_setting = plan.config.cpus.text;
  report.checks = check_posture(posture, report.sampled, plan.config.probes.posture.expect, busy);
  report.fingerprint = posture.fingerprint;
  report.problems = posture.problems;
  std::cout << (cl.report_format == ReportFormat::json ? format_posture_json(report)
                                                       : format_posture_table(report));
  return posture_exit_code(report);
}
}  // namespace

}  // namespace jitterd
