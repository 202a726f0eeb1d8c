// SPDX-License-Identifier: Apache-2.0
// `jitterd report posture`: the one-shot isolation checker for runbooks. Reads the posture
// through --path.sysfs/--path.procfs, judges it for the configured CPUs with the configured
// `expect:` section, prints the PASS/WARN/FAIL checklist with a reason and a fix per line (or
// JSON, or the checks as CSV, or the fixes as a shell script), and exits 0 when every line passes, 1 when the worst is a WARN, 2 when a line
// FAILs, 3 when it could not check at all (64 and 78 for a bad command line or configuration).
// Formatting is pure; run_posture_report is called once from main().
#pragma once

#include <string>
#include <vector>

#include "cli/command_line.h"
#include "host/posture.h"
#include "probes/posture_checks.h"
#include "probes/probe.h"

namespace jitterd {

struct PostureReport {
  std::vector<int> sampled;
  std::string cpus_setting;  // as configured: "auto" or the list
  std::vector<PostureCheck> checks;
  // About jitterd's own choice of CPUs, not the machine (the CPU selection's notes, SMT siblings
  // sampled together): never WARN or FAIL.
  std::vector<std::string> plan_notes;
  Fingerprint fingerprint;
  // Which CPUs are isolated by which mechanism (probes/posture_isolation.h), and what was read.
  ProbeTable isolation;
  std::vector<std::string> isolation_notes;
  std::vector<std::string> problems;  // files that could not be read
};

// The checks as a table of typed cells: status, check, cpu, reason, expectation.
ProbeTable posture_checks_table(const PostureReport& report);
std::string format_posture_table(const PostureReport& report);
std::string format_posture_json(const PostureReport& report);
std::string format_posture_csv(const PostureReport& report);  // the checks only
// The fixes of every WARN and FAIL as a commented shell script, for a person to read and adapt;
// jitterd never runs it.
std::string format_posture_script(const PostureReport& report);
int posture_exit_code(const PostureReport& report);  // 0, 1 or 2

int run_posture_report(const CommandLine& command_line);

}  // namespace jitterd
