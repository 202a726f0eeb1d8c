// The command line: a verb (run, report, check-config) and node_exporter-style flags.
// Pure parsing, no side effects; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace jitterd {

inline constexpr const char* kDefaultConfigPath = "/etc/jitterd/jitterd.yaml";

enum class Verb { run, report, check_config, help, version };
enum class ReportFormat { table, json, csv };

struct CommandLine {
  Verb verb = Verb::run;
  std::string config_path = kDefaultConfigPath;
  bool config_path_given = false;
  std::optional<std::string> listen_address;   // overrides web.listen_address
  std::optional<std::string> telemetry_path;   // overrides web.telemetry_path
  std::optional<std::string> web_config_file;  // --web.config.file, overrides web.config_file
  std::optional<std::string> log_level;        // overrides log.level
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  std::string report_topic = "gaps";       // gaps (the samplers), clock, pacing, kernel, pinning, c2c
  std::optional<std::string> report_cpus;  // report c2c: the CPUs to pair
  std::string report_duration = "10s";
  ReportFormat report_format = ReportFormat::table;
  bool report_interruptions = false;
};

// Throws std::invalid_argument with a message naming the bad argument.
CommandLine parse_command_line(const std::vector<std::string>& args);
std::string usage_text();

}  // namespace jitterd
