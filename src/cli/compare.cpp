// SPDX-License-Identifier: Apache-2.0
#include "cli/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "cli/progress.h"
#include "compare/comparison.h"
#include "compare/comparison_html.h"
#include "compare/prometheus_history.h"

namespace jitterd {
namespace {

// The two runs and their comparison: the HTML report plots the runs' histograms.
struct ComparedRuns {
  Baseline before, after;
  Comparison comparison;
};

ComparedRuns compare_files(const CommandLine& cl) {
  ComparedRuns runs{read_baseline(cl.compare_before), read_baseline(cl.compare_after), {}};
  runs.comparison =
      compare_baselines(runs.before, cl.compare_before, runs.after, cl.compare_after, {}, cl.compare_allowances);
  return runs;
}

// The sub-window: as given, else two scrape intervals (each sub-window holds whole scrapes), at
// least 1/120 of the shorter range (as many as a 60 s baseline file has), in whole milliseconds.
double history_sub_window(const CommandLine& cl, const RangeSamples& before, const RangeSamples& after) {
  const double scrape = std::max(scrape_interval_seconds(before), scrape_interval_seconds(after));
  if (cl.prometheus_sub_window) {
    const double given = std::chrono::duration<double>(*cl.prometheus_sub_window).count();
    if (given < scrape * 0.99)
      throw BaselineError(kExitBadBaseline,
                          fmt::format("{}: --sub-window {} s is shorter than the scrape interval ({} s): a "
                                      "sub-window must hold at least one scrape",
                                      cl.prometheus.url, given, scrape));
    return given;
  }
  const double shorter = std::min(before.range.end - before.range.start, after.range.end - after.range.start);
  return std::ceil(std::max(2 * scrape, shorter / 120) * 1000) / 1000;
}

std::string bounds_text(const std::vector<double>& bounds_ns) {
  std::string text;
  for (double ns : bounds_ns)
    text += (text.empty() ? "" : " ") + (ns >= 1e6   ? fmt::format("{}ms", ns / 1e6)
                                         : ns >= 1e3 ? fmt::format("{}us", ns / 1e3)
                                                     : fmt::format("{}ns", ns));
  return text;
}

ComparedRuns compare_history(const CommandLine& cl) {
  std::string error;
  const TimeRange before_range = *parse_time_range(cl.prometheus_before, &error);
  const TimeRange after_range = *parse_time_range(cl.prometheus_after, &error);
  const PrometheusClient client(cl.prometheus);
  Progress progress;
  progress.step("reading the before range from Prometheus (1/2)");
  const RangeSamples before_samples = read_range(client, cl.prometheus_instance, before_range);
  progress.step("reading the after range from Prometheus (2/2)");
  const RangeSamples after_samples = read_range(client, cl.prometheus_instance, after_range);
  progress.clear();
  const double sub_window = history_sub_window(cl, before_samples, after_samples);
  const HistoryBaseline before = baseline_from_samples(before_samples, sub_window);
  const HistoryBaseline after = baseline_from_samples(after_samples, sub_window);
  Comparison comparison = compare_baselines(before.baseline, before_samples.source, after.baseline,
                                            after_samples.source, {}, cl.compare_allowances);
  std::vector<std::string> notes{fmt::format(
      "read from Prometheus at the resolution of the exported buckets, not jitterd's fine histogram: a "
      "quantile or max is the upper bound (le) of the bucket holding it, of {} (beyond the last: that bound, "
      "and the max the largest window max scraped); tails are counted above {}; {} s sub-windows",
      bounds_text(before.baseline.histogram_bounds_ns), bounds_text(before.baseline.tail_thresholds_ns),
      sub_window)};
  const std::size_t fewest =
      std::min(before.baseline.duration_seconds, after.baseline.duration_seconds) / sub_window;
  if (fewest < 8)
    notes.push_back(
        fmt::format("about {} sub-windows per range: the rank tests cannot reach p < 0.001 with fewer "
                    "than 8 a side; take longer ranges or a shorter --sub-window",
                    fewest));
  notes.insert(notes.end(), before.notes.begin(), before.notes.end());
  notes.insert(notes.end(), after.notes.begin(), after.notes.end());
  comparison.notes.insert(comparison.notes.begin(), notes.begin(), notes.end());
  return {before.baseline, after.baseline, std::move(comparison)};
}

}  // namespace

int run_compare(const CommandLine& cl) {
  const ComparedRuns runs = cl.prometheus.url.empty() ? compare_files(cl) : compare_history(cl);
  const Comparison& comparison = runs.comparison;
  switch (cl.report_format) {
    case ReportFormat::table:
    case ReportFormat::script:  // not offered by compare's --format
      std::cout << format_comparison_table(comparison, cl.compare_wide);
      break;
    case ReportFormat::csv:
      std::cout << format_comparison_csv(comparison);
      break;
    case ReportFormat::json:
      std::cout << format_comparison_json(comparison);
      break;
    case ReportFormat::html:
      std::cout << comparison_html(comparison, runs.before, runs.after);
      break;
  }
  return 0;
}

}  // namespace jitterd
