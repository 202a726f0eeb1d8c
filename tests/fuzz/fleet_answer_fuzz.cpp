// SPDX-License-Identifier: Apache-2.0
// A Prometheus API answer on arbitrary text, as `jitterd fleet` reads one: the envelope
// (prometheus_data), the fingerprints' instant vector (fleet_hosts) and the same answer taken as
// each of a batch's four aggregated vectors (add_batch_figures), and as every part of a read at the
// range's two ends (ends_increases: the counters at START and END, the start times, the
// application's side: watched CPUs, loops, their restarts), then each host's values and rows. Every
// input gives hosts or a BaselineError (64, 65 or 69, naming the URL), never another exception, a
// crash or unbounded memory.
#include "fleet/fleet_ends.h"
#include "fleet/fleet_history.h"
#include "fleet/fleet_report.h"
#include "fleet/fleet_rows.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string text(fuzz::as_text(data, size));
  const std::string where = "http://fuzz (query q)";
  try {
    const Json answer = prometheus_data(200, text, where);
    FleetSelection selection{
        {1'800'000'000, 1'800'000'600, "A/B"}, size % 2 == 0 ? "kernel" : "cpu_model", "", {}};
    FleetHistory history;
    try {
      history = fleet_hosts(answer, selection, where);
    } catch (const BaselineError& e) {
      fuzz::require(std::string_view(e.what()).find("http://fuzz") != std::string_view::npos);
      history.hosts.push_back({"box:9978", {}, {}});
    }
    add_batch_figures(history, {answer, answer, answer, answer}, where);
    LoopNames loops(history.loop_names);
    const BatchAnswers batch{answer, answer, answer, answer};
    ApplicationAnswers application;
    application.watch.fill(answer);
    application.loops = batch;
    const EndsResult ends = ends_increases(
        {"box:9978", "a:9"}, {batch, batch, answer, answer, application, application, answer, answer},
        selection.range, 45, where, loops);
    fuzz::require(ends.at_ends + ends.in_full.size() == 2);
    fuzz::require(history.loop_names.size() <= kMostLoopNames);
    add_figures(history, ends.increases);
    for (FleetHost& host : history.hosts) host.counted_seconds = 600;
    add_application_figures(history, ends.application);
    for (const FleetHost& host : history.hosts)
      fuzz::require(host_values(host, history.figure_names.size()).size() == 2 * history.figure_names.size());
    const FleetRows rows = fleet_rows(history, 600, false);
    for (const std::vector<double>& values : rows.values) fuzz::require(values.size() == rows.specs.size());
  } catch (const BaselineError& e) {
    fuzz::require((e.exit_code() == kExitBadBaseline || e.exit_code() == kExitPrometheusUnavailable ||
                   e.exit_code() == kExitFleetUsage) &&
                  std::string_view(e.what()).find("http://fuzz") != std::string_view::npos);
  }
  return 0;
}
