// The command line: a verb (run, report, check-config) and node_exporter-style flags.
// Pure parsing, no side effects; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config_source.h"
#include "host/host_reader.h"

namespace jitterd {

inline constexpr const char* kDefaultConfigPath = "/etc/jitterd/jitterd.yaml";

enum class Verb { run, report, check_config, help, version };
enum class ReportFormat { table, json, csv };

struct CommandLine {
  Verb verb = Verb::run;
  std::string config_path = kDefaultConfigPath;
  bool config_path_given = false;
  ConfigOverrides overrides;  // --web.listen-address, --web.telemetry-path, --log.level: checked with the config
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  std::string report_topic = "gaps";   // gaps (the samplers), clock, pacing, kernel, pinning, c2c
  std::optional<std::string> report_cpus;  // report c2c: the CPUs to pair
  std::string report_duration = "10s";
  ReportFormat report_format = ReportFormat::table;
  bool report_interruptions = false;
};

// Throws std::invalid_argument with a message naming the bad argument.
CommandLine parse_command_line(const std::vector<std::string>& args);
std::string usage_text();

// The configuration the verb runs with: --config (report: the built-in defaults when no --config
// is given and the default file is absent) and the flags that override its settings.
ConfigSource config_source(const CommandLine& command_line);
HostReader host_reader(const CommandLine& command_line);

}  // namespace jitterd
