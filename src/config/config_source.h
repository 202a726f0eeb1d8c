// SPDX-License-Identifier: Apache-2.0
// Where the running Config comes from: a file (or, for a one-shot report, the built-in defaults
// when there is none), then the command line's overrides, which go through the very rules the
// file's values do (config/value_checks.h) and never through YAML text. A bad flag is a
// ConfigError like a bad key: file "command line", key the flag, "must be <allowed>, got <seen>".
// Pure apart from reading the file; call from any thread.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"

namespace jitterd {

// The settings a flag may override, as given (unchecked until applied).
struct ConfigOverrides {
  std::optional<std::string> listen_address;   // --web.listen-address: web.listen_address
  std::optional<std::string> telemetry_path;   // --web.telemetry-path: web.telemetry_path
  std::optional<std::string> log_level;        // --log.level: log.level
  std::optional<std::string> web_config_file;  // --web.config.file: web.config_file
  std::optional<std::string> cpus;             // --cpus: cpus ("auto", "none" or a CPU list)
  bool operator==(const ConfigOverrides&) const = default;
};

struct ConfigSource {
  std::string path;
  bool defaults_when_absent = false;  // no file at `path`: the built-in defaults, not an error
  ConfigOverrides overrides;
};

// What ConfigError::file says for a flag.
inline constexpr const char* kCommandLineSource = "command line";

// What the configuration was read from, for messages: the path, or "the built-in defaults (no file
// at PATH)" when the file is absent and the source allows that.
std::string config_source_text(const ConfigSource& source);

// Throws ConfigErrors naming "command line" and each bad flag; `config` is unchanged then.
void apply_overrides(const ConfigOverrides& overrides, Config& config);

// The file's errors, then the flags', then those of the web configuration file that web.config_file
// names (read with its certificates into web.security), all at once, as ConfigErrors.
Config load_config(const ConfigSource& source);

}  // namespace jitterd
