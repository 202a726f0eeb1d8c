// SPDX-License-Identifier: Apache-2.0
// The daemon's live status page on "/" and its JSON form (the baseline download is
// live_baseline.h): pure functions of a StatusSnapshot (what Collector::status() takes at request time, the same state a scrape
// reads), so the web server's threads render them and no sampler does any work for them. Every
// text from the machine (IRQ names, command line, BIOS strings, probe errors) is HTML-escaped.
// Safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "export/collector.h"
#include "report/render.h"

namespace jitterd {

inline constexpr const char* kStatusJsonPath = "/status.json";
inline constexpr const char* kBaselineDownloadPath = "/baseline.json";
// Auto-refresh bounds of "/?refresh=N" (seconds); 0 is off.
inline constexpr int kMinRefreshSeconds = 2;
inline constexpr int kMaxRefreshSeconds = 3600;

// "refresh" query value: nullopt when it is not a whole number; else clamped to
// [kMinRefreshSeconds, kMaxRefreshSeconds], 0 staying 0 (off).
std::optional<int> parse_refresh(std::string_view value);

Json status_json(const StatusSnapshot& status, std::string_view telemetry_path);
std::string status_html(const StatusSnapshot& status, std::string_view telemetry_path, int refresh_seconds);

}  // namespace jitterd
