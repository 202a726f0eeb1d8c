// SPDX-License-Identifier: Apache-2.0
// The facts kept per probe beside its registry entry (probes/probe_registry.cpp), as plain data
// that the layers above interpret: how `jitterd report` runs it once, what the sampling plan checks
// of its settings, compare's run-to-run allowances and row conditions for its tables, and how a
// page draws it. Code above probes/ asks the registry for these instead of testing a probe's name.
// Pure types and functions; safe from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"
#include "probes/probe.h"
#include "probes/probes_settings.h"

namespace jitterd {

// How `jitterd report PROBE` shows the probe.
enum class ReportKind {
  tables,     // its tables as table, JSON, CSV or HTML; --save writes them into a baseline
  checklist,  // a verdict per check (report posture): exit code by verdict, --format script for the
              // fixes, no HTML page and nothing to save into a baseline
};

// What a plan check is given (sampling/sampling_plan.cpp), once the CPUs are chosen.
struct PlanFacts {
  const HostReader& host;
  const std::vector<int>& sampled;  // the CPUs with samplers
  const std::vector<int>& usable;   // online and allowed: where jitterd may run a probe
  // The longest a probe's step may pause a sampler when the probe runs on a sampled CPU.
  std::chrono::nanoseconds sampler_step_limit;
  // How the configuration writes a duration (config/duration.h), so a message quotes it as a file would.
  std::function<std::string(std::chrono::nanoseconds)> duration_text;
};

// One problem a plan check found, as a configuration error will name it: the key ("probes.pacing.duration"),
// the message, and where the file says it: at `key`, or at `fallback_key` when the file does not hold
// `key` (a default that is wrong only beside the CPU the file chose).
struct SettingProblem {
  std::string key;
  std::string message;
  std::string fallback_key;
};

using PlanCheck = std::vector<SettingProblem> (*)(const ProbesSettings&, const PlanFacts&);

// A figure of the probe's tables that compare may test, and how far it may move between two runs of
// an unchanged machine (compare/allowances.h applies them): `figure` is a column whose samples back
// it ("median_ns"); cv the relative run-to-run spread on bare metal, guest_cv under a hypervisor;
// none: not tested there, `untested`/`guest_untested` saying why.
struct AllowanceRow {
  std::string_view figure;
  std::optional<double> cv;
  std::optional<double> guest_cv;
  std::string_view untested;
  std::string_view guest_untested;
};

// A row of the probe's tables whose figures hold only while a cell stays in bounds; past them the
// row is shown, not tested, because `broken`. With a `rate_column`, `column` (ns) must stay within
// one slot (1 / `rate_column` seconds) of its schedule ("pacer fell behind its schedule"); without
// one, `column` must stay at most `at_most` ("operation's CPU was shared with other tasks"). A row
// without the cells (an older baseline, a row the condition does not measure) keeps it.
// compare/probe_rows.cpp applies them.
struct RowCondition {
  std::string_view column, rate_column, broken;
  double at_most = 0;
};

// The tables of the probe whose title starts with `title_prefix` render as `shape`.
struct TableShapeRule {
  std::string_view title_prefix{};
  TableShape shape = TableShape::rows;
};

// Everything kept per probe besides its settings and its type.
struct ProbeFacts {
  // It measures once and its result is a figure to compare, so `jitterd baseline --probes` may
  // run it; posture and attribution judge the machine over time instead.
  bool in_baselines = false;
  bool in_default_baseline = false;  // run by `jitterd baseline` without --probes
  ReportKind report = ReportKind::tables;
  // `jitterd report PROBE --cpus LIST` runs it over LIST (or every CPU jitterd may use) rather than
  // the configured CPUs: the settings for that one run; null: the flag is refused.
  ProbesSettings (*report_over_cpus)(ProbesSettings, const std::vector<int>& cpus) = nullptr;
  PlanCheck plan_check = nullptr;
  std::span<const AllowanceRow> allowances{};
  std::span<const RowCondition> row_conditions{};
  TableShapeRule shaped_table{};
  // Its section of the comparison page: the heading, and where it sits (lowest first); an empty
  // heading: no section.
  std::string_view comparison_heading{};
  int comparison_rank = 0;
  // Not empty: the status page shows the probe in a section of its own under this heading, after
  // the samplers, instead of among the probes.
  std::string_view status_heading{};
  // A reader: each run reads what happened since the last (the application's CPUs, its loops, the
  // BPF engine's records) and must keep its cadence, so the scheduler runs it on the readers'
  // thread, apart from the active probes that spin or borrow CPUs for seconds (docs/DESIGN.md,
  // "Readers keep their cadence"). A reader never borrows a CPU (run_on_cpu); the BPF engine is
  // used by readers only.
  bool reader = false;
  // It reads the application's side (its result's application_windows: the watched CPUs, the
  // loops): `jitterd baseline` runs it beside its samplers, once before they start and once per
  // sub-window, with the settings this gives for a run of `run` (one reading per sub-window, the
  // whole run in its history), and records that history as the file's watched[] or loops[] (as
  // the daemon's download does); null: not such a probe.
  ProbesSettings (*recording_settings)(ProbesSettings, std::chrono::nanoseconds run) = nullptr;
};

}  // namespace jitterd
