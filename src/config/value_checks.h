// SPDX-License-Identifier: Apache-2.0
// The rules for the settings a command-line flag can set too (web.listen_address,
// web.telemetry_path, log.level), as plain functions: the YAML reader and the flags call the same
// ones, so a value is valid in both places or in neither, and the message reads the same. Pure;
// safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/text.h"

namespace jitterd {

// What a rule made of a value: the value, or the message "must be <allowed>, got <seen>".
struct CheckedValue {
  std::optional<std::string> value;
  std::string error;  // set when value is empty
};

// `seen` is how the message shows the value: the YAML reader shows a plain scalar as written and
// a quoted one in quotes; the command line quotes (quoted_for_message).
CheckedValue check_listen_address(const std::string& text, std::string_view seen);
CheckedValue check_telemetry_path(const std::string& text, std::string_view seen);
CheckedValue check_log_level(const std::string& text, std::string_view seen);

// spdlog's canonical level names, in order of verbosity.
const std::vector<std::string_view>& log_levels();

// `text` in double quotes, printable (host/text.h).
std::string quoted_for_message(std::string_view text);

}  // namespace jitterd
