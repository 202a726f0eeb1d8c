// SPDX-License-Identifier: Apache-2.0
#include "export/page_routes.h"

#include <stdexcept>

#include "export/live_baseline.h"
#include "export/status_page.h"
#include "host/text.h"

namespace jitterd {

namespace {
constexpr std::string_view kStatusPage = "status_page";
constexpr std::string_view kStatusJson = "status_json";
constexpr std::string_view kBaseline = "baseline";
}  // namespace

std::string page_key(Route route, int refresh_seconds) {
  switch (route) {
    case Route::status_page:
      return std::string(kStatusPage) + " " + std::to_string(refresh_seconds);
    case Route::status_json:
      return std::string(kStatusJson) + " 0";
    case Route::baseline:
      return std::string(kBaseline) + " 0";
    default:
      throw std::invalid_argument("not a page's route");
  }
}

BuiltPage build_page(const Collector& collector, std::string_view telemetry_path, const std::string& key) {
  const std::size_t blank = key.find(' ');
  const std::string_view name = std::string_view(key).substr(0, blank);
  const std::optional<int> refresh =
      blank == std::string::npos ? std::nullopt : parse_number<int>(std::string_view(key).substr(blank + 1));
  if (!refresh) throw std::invalid_argument("no page is named \"" + printable(key) + "\"");
  if (name == kStatusPage)
    return {status_html(collector.status(), telemetry_path, static_cast<int>(*refresh)), {}};
  if (name == kStatusJson) return {status_json(collector.status(), telemetry_path).dump(2) + "\n", {}};
  if (name == kBaseline) {
    // The window steps first: the status taken after them has every sampler they name.
    const std::vector<WindowParts> windows = collector.window_parts();
    return {baseline_json(live_baseline(collector.status(), windows)).dump(2) + "\n", {}};
  }
  throw std::invalid_argument("no page is named \"" + printable(key) + "\"");
}

}  // namespace jitterd
