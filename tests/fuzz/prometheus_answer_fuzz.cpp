// SPDX-License-Identifier: Apache-2.0
// A Prometheus API answer on arbitrary text, as `jitterd compare --prometheus` reads one: the
// envelope (prometheus_data), the range query's matrix and the baseline rebuilt from it
// (baseline_from_samples, with the sub-window compare would choose). Every input gives a baseline
// or a BaselineError (65 or 69, naming the URL), never another exception, a crash or unbounded
// memory.
#include <algorithm>
#include <cmath>

#include "compare/prometheus_history.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string text(fuzz::as_text(data, size));
  const std::string where = "http://fuzz (query q)";
  try {
    RangeSamples samples{{1'800'000'000, 1'800'000'600, "A/B"}, "box:9978", where, {}};
    samples.matrix = range_result(prometheus_data(size % 2 == 0 ? 200 : 503, text, where), where);
    const double scrape = scrape_interval_seconds(samples);
    const double sub_window = std::ceil(std::max(2 * scrape, 600.0 / 120) * 1000) / 1000;
    static_cast<void>(baseline_from_samples(samples, sub_window));
  } catch (const BaselineError& e) {
    fuzz::require((e.exit_code() == kExitBadBaseline || e.exit_code() == kExitPrometheusUnavailable) &&
                  std::string_view(e.what()).find("http://fuzz") != std::string_view::npos);
  }
  return 0;
}
