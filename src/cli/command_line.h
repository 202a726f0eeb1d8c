// SPDX-License-Identifier: Apache-2.0
// The command line: a verb (run, the default; check-config; report [TOPIC]; baseline; compare; fleet) and the
// node_exporter-style flags that verb takes, parsed by CLI11 into a plain CommandLine the rest of
// the program reads. A flag the verb does not take is a usage error naming it. Values that are
// configuration settings (--web.*, --log.level) are only carried here: config/config_source.h
// checks them with the file's rules. Pure parsing, no output; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare/allowances.h"
#include "compare/http_client.h"
#include "compare/prometheus_client.h"
#include "config/config_source.h"
#include "config/duration.h"
#include "fleet/fleet_history.h"
#include "fleet/fleet_report.h"
#include "host/host_reader.h"

namespace jitterd {

inline constexpr const char* kDefaultConfigPath =
    JITTERD_DEFAULT_CONFIG_PATH;  // CMake: <sysconfdir>/jitterd/jitterd.yaml

enum class Verb { run, report, baseline, compare, fleet, check_config, help, version };
enum class ReportFormat { table, json, csv, script, html };  // script: report posture only; html: not posture

struct CommandLine {
  Verb verb = Verb::run;
  std::string config_path = kDefaultConfigPath;
  bool config_path_given = false;
  ConfigOverrides overrides;  // --web.listen-address, --web.telemetry-path, --web.config.file, --log.level
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  std::string cgroupfs;                         // "": <sysfs>/fs/cgroup
  std::string kubelet = "/var/lib/kubelet";     // "": no kubelet state read
  std::string report_topic = "gaps";            // gaps or a probe name (probe_names(); posture is the checklist)
  std::optional<std::vector<int>> report_cpus;  // report c2c --cpus: the CPUs to pair
  Duration report_duration = std::chrono::seconds(10);
  ReportFormat report_format = ReportFormat::table;
  bool report_interruptions = false;
  std::string save_path;  // report --save FILE: also write the result as a baseline
  // report --from URL: a running daemon's /status.json (the URL as given, completed with the
  // path), read with these connection settings (--from-ca-file, --from-basic-auth-user, ...).
  std::string report_from;
  HttpOptions report_from_http;
  std::string output_path;                   // baseline -o FILE
  std::vector<std::string> baseline_probes;  // baseline --probes: run after the samplers
  std::string compare_before, compare_after;
  // compare --prometheus URL --instance I --before RANGE --after RANGE: the ranges are checked
  // here (compare/time_range.h parse_time_range) and kept as given.
  // compare --prometheus and fleet: the Prometheus and how to connect to it (the --prometheus-*
  // flags; the largest answer by default compare/prometheus_client.h kPrometheusMaxBytes).
  PrometheusOptions prometheus;
  std::string prometheus_instance, prometheus_before, prometheus_after;
  std::optional<Duration> prometheus_sub_window;  // default: chosen from the scrape interval
  // compare --allowance NAME=CV,...: run-to-run allowances in place of the measured ones
  // (compare/allowances.h), checked here.
  std::vector<AllowanceSetting> compare_allowances;
  bool compare_wide = false;  // compare --wide: the text table with every column (tests, p-values)
  // fleet --prometheus URL --range START/END --by FIELD: what to read and how to judge it (the
  // Prometheus flags above are shared with compare).
  std::string fleet_range;
  FleetSelection fleet_selection;
  FleetOptions fleet_options;
  std::string help;  // Verb::help: the text asked for, jitterd's or one verb's
};

// A command line that cannot be read: the message names the argument; hint says where the help is.
class UsageError : public std::invalid_argument {
 public:
  UsageError(const std::string& message, std::string hint)
      : std::invalid_argument(message), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// `args` without the program name. Throws UsageError.
CommandLine parse_command_line(const std::vector<std::string>& args);

// The configuration the verb runs with: --config (every verb: the built-in defaults when no
// --config is given and the default file is absent) and the flags that override its settings.
ConfigSource config_source(const CommandLine& command_line);
// The machine as --path.sysfs, --path.procfs, --path.cgroupfs and --path.kubelet give it; throws ConfigErrors (file "command line")
// naming the flag when a root is not where that filesystem is mounted.
HostReader host_reader(const CommandLine& command_line);

}  // namespace jitterd
