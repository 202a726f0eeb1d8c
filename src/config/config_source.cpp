// SPDX-License-Identifier: Apache-2.0
#include "config/config_source.h"

#include <filesystem>
#include <vector>

#include "config/value_checks.h"
#include "config/web_config.h"
#include "host/cpu_list.h"

namespace jitterd {
namespace {

// One flag's value through its setting's rule, into `target` or into `errors`.
void apply(const char* flag, const std::optional<std::string>& given,
           CheckedValue (*check)(const std::string&, std::string_view), std::string& target,
           std::vector<ConfigError>& errors) {
  if (!given) return;
  CheckedValue result = check(*given, quoted_for_message(*given));
  if (result.value)
    target = std::move(*result.value);
  else
    errors.push_back(ConfigError{kCommandLineSource, 0, 0, flag, std::move(result.error)});
}

CheckedValue check_file_name(const std::string& text, std::string_view seen) {
  if (text.empty()) return {std::nullopt, "must be a file name, got " + std::string(seen)};
  return {text, ""};
}

// --cpus: "auto", "none" (sample nothing: a daemon that only watches) or a CPU list, as the file's
// cpus: takes them; cpus_per_core stays the file's.
void apply_cpus(const std::optional<std::string>& given, Config& config, std::vector<ConfigError>& errors) {
  if (!given) return;
  CpuSetting cpus = config.cpus;
  cpus.text = *given;
  if (*given == "auto") {
    cpus.automatic = true;
    cpus.list.clear();
  } else if (*given == "none") {
    cpus.automatic = false;
    cpus.list.clear();
    cpus.text = "[]";
  } else {
    std::string reason;
    std::optional<std::vector<int>> list = parse_cpu_list(*given, &reason);
    if (list && list->empty()) reason = "no CPUs";
    if (!list || list->empty()) {
      errors.push_back(ConfigError{kCommandLineSource, 0, 0, "--cpus",
                                   "must be auto, none or a CPU list such as \"2-5,8\", got " +
                                       quoted_for_message(*given) + " (" + reason + ")"});
      return;
    }
    if (const std::optional<int> cpu = repeated_cpu(*given)) {  // the file's rule (cpus_listed_once)
      errors.push_back(ConfigError{kCommandLineSource, 0, 0, "--cpus",
                                   "must list each CPU once, got " + quoted_for_message(*given) + " (cpu " +
                                       std::to_string(*cpu) + " more than once)"});
      return;
    }
    cpus.automatic = false;
    cpus.list = std::move(*list);
  }
  config.cpus = std::move(cpus);
  config.marks.erase("cpus");
  config.flags["cpus"] = "--cpus";
}

void apply_collecting(const ConfigOverrides& o, Config& config, std::vector<ConfigError>& errors) {
  apply("--web.listen-address", o.listen_address, check_listen_address, config.web.listen_address, errors);
  apply("--web.telemetry-path", o.telemetry_path, check_telemetry_path, config.web.telemetry_path, errors);
  apply("--log.level", o.log_level, check_log_level, config.log.level, errors);
  apply("--web.config.file", o.web_config_file, check_file_name, config.web.config_file, errors);
  apply_cpus(o.cpus, config, errors);
}

}  // namespace

void apply_overrides(const ConfigOverrides& overrides, Config& config) {
  Config changed = config;
  std::vector<ConfigError> errors;
  apply_collecting(overrides, changed, errors);
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
  config = std::move(changed);
}

std::string config_source_text(const ConfigSource& source) {
  if (source.defaults_when_absent && !std::filesystem::exists(source.path))
    return "the built-in defaults (no file at " + source.path + ")";
  return source.path;
}

Config load_config(const ConfigSource& source) {
  std::vector<ConfigError> errors;
  Config config;
  try {
    config = source.defaults_when_absent && !std::filesystem::exists(source.path)
                 ? parse_config("{}", "(built-in defaults)")
                 : load_config_file(source.path);
  } catch (const ConfigErrors& file_errors) {
    errors = file_errors.errors();
  }
  apply_collecting(source.overrides, config, errors);
  // Read with the rest, so check-config checks it and a reload that breaks it is refused whole.
  if (!config.web.config_file.empty()) {
    try {
      config.web.security = load_web_config_file(config.web.config_file);
    } catch (const ConfigErrors& web_errors) {
      errors.insert(errors.end(), web_errors.errors().begin(), web_errors.errors().end());
    }
  }
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
  return config;
}

}  // namespace jitterd
