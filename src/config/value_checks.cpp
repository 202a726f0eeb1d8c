// SPDX-License-Identifier: Apache-2.0
#include "config/value_checks.h"

#include <algorithm>
#include <cctype>

#include "config/config_reader.h"
#include "config/web_config.h"

namespace jitterd {
namespace {

CheckedValue refuse(std::string_view allowed, std::string_view seen) {
  return {std::nullopt, "must be " + std::string(allowed) + ", got " + std::string(seen)};
}

}  // namespace

CheckedValue check_listen_address(const std::string& text, std::string_view seen) {
  std::string reason;
  if (!parse_listen_address(text, &reason))
    return {std::nullopt,
            "must be a.b.c.d:port, [IPv6]:port or :port, such as 0.0.0.0:9978, [::]:9978 or :9978, got " +
                std::string(seen) + " (" + reason + ")"};
  return {text, ""};
}

// "/" is the status page, so the metrics need a path of their own; a clean path needs no escaping
// anywhere it is written (web_config.h says which paths are clean).
CheckedValue check_telemetry_path(const std::string& text, std::string_view seen) {
  if (const std::string problem = telemetry_path_problem(text); !problem.empty())
    return {std::nullopt, problem + ", got " + std::string(seen)};
  return {text, ""};
}

CheckedValue check_log_level(const std::string& text, std::string_view seen) {
  if (std::find(log_levels().begin(), log_levels().end(), text) == log_levels().end())
    return refuse("one of " + config_detail::join(log_levels()), seen);
  return {text, ""};
}

// spdlog's canonical names only: its aliases ("warning", "err") would make two spellings valid.
const std::vector<std::string_view>& log_levels() {
  static const std::vector<std::string_view> levels{"trace", "debug", "info", "warn", "error", "critical", "off"};
  return levels;
}

std::string quoted_for_message(std::string_view text) { return '"' + printable(text) + '"'; }

}  // namespace jitterd
