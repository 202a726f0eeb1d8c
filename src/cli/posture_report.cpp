// SPDX-License-Identifier: Apache-2.0
#include "cli/posture_report.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "config/config_source.h"
#include "daemon/logging.h"
#include "host/cpu_list.h"
#include "host/interrupt_counts.h"
#include "host/text.h"
#include "host/topology.h"
#include "probes/posture_isolation.h"
#include "report/render.h"
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

// A fix line is a command only if it has the shape posture_fixes.cpp gives commands: words of
// letters, digits and "_.,:=+-/" (no quote, variable, glob, separator or substitution), and at most
// one " > " into a file under /sys/ or /proc/. Everything in it comes from validated configuration
// and numbers; this check keeps the script inert even if a string from the machine ever reached one.
bool is_plain_command(std::string_view line) {
  const auto word_chars = [](std::string_view text, std::string_view extra) {
    return std::all_of(text.begin(), text.end(), [&](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             extra.find(c) != std::string_view::npos;
    });
  };
  const std::size_t redirect = line.find(" > ");
  const std::string_view command = line.substr(0, redirect);
  if (command.empty() || !word_chars(command, " _.,:=+-/")) return false;
  if (redirect == std::string_view::npos) return true;
  const std::string_view file = line.substr(redirect + 3);
  return (file.rfind("/sys/", 0) == 0 || file.rfind("/proc/", 0) == 0) && word_chars(file, "_.-/");
}

// `line` as the script writes it: a comment made printable, so that whatever bytes a task or IRQ
// name held, it stays one comment line; a command only if it is a plain one, else commented out.
std::string script_line(std::string_view line) {
  if (line.rfind("#", 0) == 0) return "#" + printable(line.substr(1));
  if (is_plain_command(line)) return std::string(line);
  return "# not written as a command (it is not one of the plain forms jitterd writes): " + printable(line);
}

// The isolation table's rows (cpu, mechanism, by) as one line per mechanism and owner, in the
// order they first appear: "cpuset /rt.slice: cpus 4-5".
std::vector<std::pair<std::pair<std::string, std::string>, std::vector<int>>> isolation_groups(
    const ProbeTable& table) {
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<int>>> groups;
  for (const auto& row : table.rows) {
    const std::pair<std::string, std::string> what{cell_text(row[1]), cell_text(row[2])};
    auto found = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
    if (found == groups.end()) found = groups.insert(groups.end(), {what, {}});
    found->second.push_back(static_cast<int>(row[0].integer));
  }
  return groups;
}

}  // namespace

std::string format_posture_table(const PostureReport& report) {
  std::ostringstream out;
  out << "isolation posture for sampled cpus "
      << (report.sampled.empty() ? "none" : format_cpu_list(report.sampled))
      << " (cpus: " << printable(report.cpus_setting) << ")\n\n";
  std::size_t check_width = 5;
  for (const PostureCheck& c : report.checks) check_width = std::max(check_width, c.check.size());
  for (const PostureCheck& c : report.checks) {
    const std::string cpu = c.cpu ? "cpu " + std::to_string(*c.cpu) : "-";
    out << to_string(c.status) << "  " << c.check << std::string(check_width - c.check.size(), ' ') << "  " << cpu
        << std::string(cpu.size() < 7 ? 7 - cpu.size() : 0, ' ') << "  " << printable(c.reason)
        << (c.expectation ? " [expect]" : "") << "\n";
    for (const std::string& line : c.fix) out << "      fix: " << printable(line) << "\n";
  }
  out << "\nisolated cpus by mechanism:\n";
  if (report.isolation.rows.empty()) out << "  none\n";
  for (const auto& [what, cpus] : isolation_groups(report.isolation))
    out << "  " << what.first << "  " << printable(what.second) << ": cpus " << format_cpu_list(cpus) << "\n";
  for (const std::string& note : report.isolation_notes) out << "  " << printable(note) << "\n";
  if (!report.plan_notes.empty()) out << "\nsampling plan:\n";
  for (const std::string& note : report.plan_notes) out << "  " << printable(note) << "\n";
  out << "\nfingerprint:\n";
  for (const auto& [field, value] : fingerprint_fields(report.fingerprint)) {
    out << "  " << field << std::string(13 - std::min<std::size_t>(field.size(), 12), ' ')
        << (value.empty() ? "unknown" : printable(value)) << "\n";
  }
  for (const std::string& problem : report.problems) out << "unreadable: " << printable(problem) << "\n";
  out << "\nresult: " << summary(report) << "\n";
  return out.str();
}

ProbeTable posture_checks_table(const PostureReport& report) {
  ProbeTable table{"isolation checklist", {"status", "check", "cpu", "reason", "expectation", "fix"}, {}};
  for (const PostureCheck& c : report.checks) {
    table.rows.push_back({to_string(c.status), c.check, c.cpu ? Cell(*c.cpu) : Cell(), c.reason,
                          Cell(c.expectation), joined_with(c.fix, "\n")});
  }
  return table;
}

std::string format_posture_csv(const PostureReport& report) { return table_csv(posture_checks_table(report)); }

std::string format_posture_json(const PostureReport& report) {
  const Counts c = count(report.checks);
  Json fingerprint = Json::object();
  for (const auto& [field, value] : fingerprint_fields(report.fingerprint)) fingerprint[field] = value;
  const Json document{{"sampled", report.sampled},
                      {"cpus", report.cpus_setting},
                      {"result", to_string(overall_status(report.checks))},
                      {"counts", {{"fail", c.fail}, {"warn", c.warn}, {"pass", c.pass}}},
                      {"checks", table_records(posture_checks_table(report))},
                      {"plan_notes", report.plan_notes},
                      {"isolation", table_records(report.isolation)},
                      {"isolation_notes", report.isolation_notes},
                      {"fingerprint", std::move(fingerprint)},
                      {"unreadable", report.problems}};
  return json_text(document);
}

std::string format_posture_script(const PostureReport& report) {
  std::ostringstream out;
  out << "#!/bin/sh\n"
      << "# The changes that would fix the WARN and FAIL lines of `jitterd report posture` for sampled cpus "
      << (report.sampled.empty() ? "none" : format_cpu_list(report.sampled)) << ".\n"
      << "# jitterd never runs this. Read each step, adapt it to how this machine is managed (tuned, "
      << "configuration\n# management, the boot loader), and run what you choose as root. Lines starting "
      << "with # are\n# changes to make by hand, mostly on the kernel command line (they take effect at "
      << "the next boot).\n"
      << "# result: " << summary(report) << "\n";
  std::size_t steps = 0;
  std::set<std::string> written;  // a change shared by several lines (one per cpu) is written once
  for (const PostureCheck& c : report.checks) {
    if (c.status == CheckStatus::pass || c.fix.empty()) continue;
    ++steps;
    out << "\n# " << to_string(c.status) << " " << c.check << (c.cpu ? " cpu " + std::to_string(*c.cpu) : "")
        << ": " << printable(c.reason) << "\n";
    std::size_t repeated = 0;
    for (const std::string& line : c.fix) {
      if (written.insert(line).second)
        out << script_line(line) << "\n";
      else
        ++repeated;
    }
    if (repeated == c.fix.size()) out << "# (the change above fixes this too)\n";
  }
  if (steps == 0) out << "\n# nothing to change: every line passed\n";
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

// The isolation checklist of the host the flags name, printed in the asked format; its exit code.
int report_posture(const CommandLine& cl) {
  const HostReader host = host_reader(cl);
  // The machine the sysfs root describes, not this process's affinity, decides what `cpus: auto`
  // selects: the report judges a fixture tree as it would judge that machine.
  const SamplingPlan plan = make_sampling_plan(load_config(config_source(cl)), host, read_topology(host).online);
  set_log_level(plan.config.log.level);
  // A second of /proc/stat says whether the sampled CPUs' SMT siblings are idle: at USER_HZ 100,
  // 100 ticks, so one busy tick (1%) still counts as idle and two do not.
  // The same second says which device IRQs fired on them (did fire, beside may fire).
  const std::map<int, CpuTimes> before = parse_proc_stat(host.read_proc("stat").value_or(""));
  const InterruptTable interrupts_before = parse_proc_interrupts(host.read_proc("interrupts").value_or(""));
  if (!before.empty() || !interrupts_before.cpus.empty()) std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::map<int, double> busy = busy_shares(before, parse_proc_stat(host.read_proc("stat").value_or("")));
  const InterruptTable interrupts_after = parse_proc_interrupts(host.read_proc("interrupts").value_or(""));
  std::optional<IrqFiring> fired;
  if (!interrupts_before.cpus.empty() && !interrupts_after.cpus.empty()) {
    // The nominal second: a report's text must not depend on how late the reader woke.
    fired = IrqFiring{numbered_irq_deltas(interrupts_before, interrupts_after), 1.0};
  }
  const Posture posture = read_posture(host);
  PostureReport report;
  report.sampled = plan.selection.sampled;
  std::sort(report.sampled.begin(), report.sampled.end());
  report.cpus_setting = plan.config.cpus.text;
  report.checks = check_posture(posture, report.sampled, plan.config.probes.posture.expect, busy, fired);
  report.plan_notes = plan.selection.notes;
  for (std::string& note : smt_plan_notes(posture, report.sampled)) report.plan_notes.push_back(std::move(note));
  report.fingerprint = posture.fingerprint;
  report.isolation = isolation_table(posture);
  report.isolation_notes = isolation_notes(posture);
  report.problems = posture.problems;
  switch (cl.report_format) {
    case ReportFormat::table:
    case ReportFormat::html:  // refused for this topic by the command line
      std::cout << format_posture_table(report);
      break;
    case ReportFormat::csv:
      std::cout << format_posture_csv(report);
      break;
    case ReportFormat::json:
      std::cout << format_posture_json(report);
      break;
    case ReportFormat::script:
      std::cout << format_posture_script(report);
      break;
  }
  return posture_exit_code(report);
}

}  // namespace

int run_posture_report(const CommandLine& cl) {
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

}  // namespace jitterd
