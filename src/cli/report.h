// SPDX-License-Identifier: Apache-2.0
// The `report` verb: sample the configured CPUs once, continuously, for a given duration and print
// per CPU the gap statistics that tick-counter jitter tools print (samples, mean and standard
// deviation in ticks and ns), with percentiles, max, interruptions and stolen share added; and
// `jitterd report PROBE`, one run of one probe. Both render through report/render.h. Formatting
// functions are pure; run_report is called once from main().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "measure/counter_calibration.h"
#include "measure/cpu_figures.h"
#include "probes/probe.h"
#include "sampling/sampler_worker.h"

namespace jitterd {

// One CPU of the report: its figures over the run (measure/cpu_figures.h) and what only the
// report shows.
struct CpuGapReport : CpuFigures {
  int cpu = 0;
  std::string error;                        // non-empty: this CPU was not sampled
  double mean_ticks = 0, stddev_ticks = 0;  // mean exact; stddev from bucket midpoints
  double mean_ns = 0, stddev_ns = 0, min_ns = 0;
  double stolen_share = 0;
  std::vector<Interruption> kept;  // the ring's content, oldest first
};

struct GapReport {
  std::string method;
  CounterFrequency frequency;
  double duration_seconds = 0;
  std::vector<CpuGapReport> cpus;
};

CpuGapReport report_cpu(const SamplerWorker& worker);

// Every figure per CPU, as CSV and JSON give them; and the narrower view the text table shows.
ProbeTable gap_table(const GapReport& report);
ProbeTable gap_display_table(const GapReport& report);

std::string format_report_table(const GapReport& report);
std::string format_report_csv(const GapReport& report);
std::string format_report_json(const GapReport& report, bool with_interruptions);

std::string format_probe_table(std::string_view probe, const ProbeResult& result);
std::string format_probe_csv(const ProbeResult& result);
std::string format_probe_json(std::string_view probe, const ProbeResult& result);

int run_report(const CommandLine& command_line);

}  // namespace jitterd
