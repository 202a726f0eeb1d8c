// SPDX-License-Identifier: Apache-2.0
// The web server's pages (the status page, its JSON form, the baseline download) as the page
// builder (export/page_builder.h) names and builds them: a key per route and refresh value, and
// the page of a key from the collector's state at the time it is built. Pure functions of their
// arguments besides the collector's reads; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "export/collector.h"
#include "export/page_builder.h"
#include "export/web_content.h"

namespace jitterd {

// "status_page 10", "status_json 0", "baseline 0": one page per route and refresh value
// (`refresh_seconds` is 0 for the routes without one).
std::string page_key(Route route, int refresh_seconds);

// The page `key` names, built from what `collector` holds now; throws std::invalid_argument for a
// key page_key does not make.
BuiltPage build_page(const Collector& collector, std::string_view telemetry_path, const std::string& key);

}  // namespace jitterd
