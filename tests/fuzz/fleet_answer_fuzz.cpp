// SPDX-License-Identifier: Apache-2.0
// A Prometheus API answer on arbitrary text, as `jitterd fleet` reads one: the envelope
// (prometheus_data), the fingerprints' instant vector (fleet_hosts) and the same answer taken as
// each of a batch's four aggregated vectors (add_batch_figures), and as every part of a read at the
// range's two ends (ends_increases: the counters at START and END, the start times), then each
// host's values. Every
// input gives hosts or a BaselineError (64, 65 or 69, naming the URL), never another exception, a
// crash or unbounded memory.
#include "fleet/fleet_ends.h"
#include "fleet/fleet_history.h"
#include "fleet/fleet_report.h"
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
    const BatchAnswers batch{answer, answer, answer, answer};
    const EndsResult ends =
        ends_increases({"box:9978", "a:9"}, {batch, batch, answer, answer}, selection.range, 45, where);
    fuzz::require(ends.at_ends + ends.in_full.size() == 2);
    add_figures(history, ends.increases);
    for (const FleetHost& host : history.hosts)
      fuzz::require(host_values(host, history.figure_names.size()).size() == 2 * history.figure_names.size());
  } catch (const BaselineError& e) {
    fuzz::require((e.exit_code() == kExitBadBaseline || e.exit_code() == kExitPrometheusUnavailable ||
                   e.exit_code() == kExitFleetUsage) &&
                  std::string_view(e.what()).find("http://fuzz") != std::string_view::npos);
  }
  return 0;
}
