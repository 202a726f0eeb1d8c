#include "cli/command_line.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace jitterd {

namespace {
struct FlagValue {
  std::string name;
  std::string value;
  bool has_value;
};

// Accepts "--flag=value" and "--flag value".
FlagValue split_flag(const std::vector<std::string>& args, std::size_t& i) {
  const std::string& arg = args[i];
  const auto eq = arg.find('=');
  if (eq != std::string::npos) return {arg.substr(0, eq), arg.substr(eq + 1), true};
  if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) return {arg, args[++i], true};
  return {arg, "", false};
}

Verb verb_from(const std::string& word) {
  if (word == "run") return Verb::run;
  if (word == "report") return Verb::report;
  if (word == "check-config") return Verb::check_config;
  throw std::invalid_argument("unknown verb \"" + word + "\" (allowed: run, report, check-config)");
}

ReportFormat format_from(const std::string& word) {
  if (word == "table") return ReportFormat::table;
  if (word == "json") return ReportFormat::json;
  if (word == "csv") return ReportFormat::csv;
  throw std::invalid_argument("--format: must be table, json or csv, got \"" + word + "\"");
}
}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  bool verb_seen = false;
  bool topic_seen = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h" || arg == "--version") {
      CommandLine info;
      info.verb = arg == "--version" ? Verb::version : Verb::help;
      return info;
    }
    if (arg == "--interruptions") {
      cl.report_interruptions = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (verb_seen && cl.verb == Verb::report && !topic_seen) {
        static const char* const kTopics[] = {"gaps", "clock", "pacing", "kernel", "pinning", "c2c", "posture"};
        if (std::find(std::begin(kTopics), std::end(kTopics), arg) == std::end(kTopics)) {
          throw std::invalid_argument("report: unknown topic \"" + arg +
                                      "\" (allowed: gaps, clock, pacing, kernel, pinning, c2c, posture)");
        }
        cl.report_topic = arg;
        topic_seen = true;
        continue;
      }
      if (verb_seen) throw std::invalid_argument("unexpected argument \"" + arg + "\"");
      cl.verb = verb_from(arg);
      verb_seen = true;
      continue;
    }
    const FlagValue flag = split_flag(args, i);
    static const char* const kValueFlags[] = {
        "--config",      "--web.listen-address", "--web.telemetry-path", "--web.config.file", "--path.sysfs",
        "--path.procfs", "--log.level",          "--duration",           "--format",          "--cpus"};
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), flag.name) == std::end(kValueFlags)) {
      throw std::invalid_argument("unknown flag " + flag.name + " (see --help)");
    }
    if (!flag.has_value) throw std::invalid_argument(flag.name + ": needs a value");
    if (flag.name == "--config") {
      cl.config_path = flag.value;
      cl.config_path_given = true;
    } else if (flag.name == "--web.listen-address") {
      cl.listen_address = flag.value;
    } else if (flag.name == "--web.telemetry-path") {
      cl.telemetry_path = flag.value;
    } else if (flag.name == "--web.config.file") {
      cl.web_config_file = flag.value;
    } else if (flag.name == "--path.sysfs") {
      cl.sysfs = flag.value;
    } else if (flag.name == "--path.procfs") {
      cl.procfs = flag.value;
    } else if (flag.name == "--log.level") {
      cl.log_level = flag.value;
    } else if (flag.name == "--duration") {
      cl.report_duration = flag.value;
    } else if (flag.name == "--cpus") {
      cl.report_cpus = flag.value;
    } else if (flag.name == "--format") {
      cl.report_format = format_from(flag.value);
    } else {
      throw std::invalid_argument("unknown flag " + flag.name + " (see --help)");
    }
  }
  return cl;
}

std::string usage_text() {
  return R"(Usage: jitterd [run] [flags]          the daemon: sample, serve /metrics
       jitterd check-config --config FILE  validate a configuration (exit 0, or 78 with every error)
       jitterd report [--duration 10s] [--format table|json|csv] [--interruptions]
                                            sample the configured CPUs once and print the gaps
       jitterd report clock|pacing|kernel|pinning [--format table|json|csv]
                                            run one probe once, as configured, and print it
       jitterd report c2c [--cpus LIST] [--format table|json|csv]
                                            measure every pair among LIST (default: every CPU
                                            jitterd may run on) and print the latency matrix
       jitterd report posture [--format table|json]
                                            the isolation checklist: PASS/WARN/FAIL per line,
                                            exit 0 (all PASS), 1 (a WARN), 2 (a FAIL), 3 (cannot check)

Flags:
  --config FILE              configuration file (default /etc/jitterd/jitterd.yaml)
  --web.listen-address ADDR  host:port to serve on, overrides web.listen_address (port 0: any free)
  --web.telemetry-path PATH  path of the metrics, overrides web.telemetry_path
  --web.config.file FILE     TLS and basic auth (exporter-toolkit format), overrides web.config_file
  --path.sysfs DIR           where sysfs is mounted (default /sys)
  --path.procfs DIR          where procfs is mounted (default /proc)
  --log.level LEVEL          trace, debug, info, warn, error, critical or off; overrides log.level
  --duration D               report: how long to sample, e.g. 10s
  --format F                 report: table, json or csv
  --interruptions            report: also list every kept interruption (json only)
  --cpus LIST                report c2c: the CPUs to pair, e.g. 0-7,16
  --help, --version
)";
}

}  // namespace jitterd
