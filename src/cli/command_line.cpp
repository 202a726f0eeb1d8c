#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "config/value_checks.h"
#include "host/cpu_list.h"
#include "probes/probe_registry.h"

namespace jitterd {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSynopsis = R"(
Synopsis:
  jitterd [run] [FLAGS]           the daemon: sample, serve /metrics (the default verb)
  jitterd check-config [FLAGS]    check the configuration and the flags as run would
  jitterd report [gaps] [FLAGS]   sample the configured CPUs once and print the gaps
  jitterd report PROBE [FLAGS]    run one probe once, as configured, and print its tables
  jitterd report c2c --cpus LIST  every pair among LIST: the core-to-core latency matrix
  jitterd report posture [FLAGS]  the isolation checklist
  jitterd VERB --help             the flags VERB takes

Exit codes: 0 success, 64 bad command line, 78 bad configuration (a bad value of --web.* or
--log.level included), 1 anything else; report posture: 0 PASS, 1 WARN, 2 FAIL, 3 cannot check.)";

template <typename Words>
std::string joined(const Words& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + std::string(word);
  return text;
}

std::vector<std::string> report_topics() {
  std::vector<std::string> topics{"gaps"};
  for (std::string_view name : probe_names()) topics.emplace_back(name);
  return topics;
}

// Where things are and how much to log: every verb takes these.
void add_common_flags(CLI::App& verb, CommandLine& cl) {
  verb.add_option_function<std::string>(
          "--config",
          [&cl](const std::string& path) {
            cl.config_path = path;
            cl.config_path_given = true;
          },
          "configuration file")
      ->type_name("FILE")
      ->default_str(kDefaultConfigPath);
  verb.add_option("--path.sysfs", cl.sysfs, "where sysfs is mounted; every /sys read goes through it")
      ->type_name("DIR")
      ->capture_default_str();
  verb.add_option("--path.procfs", cl.procfs, "where procfs is mounted; every /proc read goes through it")
      ->type_name("DIR")
      ->capture_default_str();
  verb.add_option_function<std::string>(
          "--log.level", [&cl](const std::string& level) { cl.overrides.log_level = level; },
          "overrides log.level: " + joined(log_levels()))
      ->type_name("LEVEL");
}

void add_web_flags(CLI::App& verb, CommandLine& cl) {
  verb.add_option_function<std::string>(
          "--web.listen-address", [&cl](const std::string& address) { cl.overrides.listen_address = address; },
          "overrides web.listen_address: a.b.c.d:port or [IPv6]:port (port 0: any free one, logged)")
      ->type_name("ADDR:PORT");
  verb.add_option_function<std::string>(
          "--web.telemetry-path", [&cl](const std::string& path) { cl.overrides.telemetry_path = path; },
          "overrides web.telemetry_path: the path of the metrics")
      ->type_name("PATH");
  verb.add_option_function<std::string>(
          "--web.config.file", [&cl](const std::string& file) { cl.overrides.web_config_file = file; },
          "overrides web.config_file: TLS and basic auth, in the exporter-toolkit format")
      ->type_name("FILE");
}

// The report's own flags, kept as text here and checked against the topic afterwards.
struct ReportFlags {
  std::string format = "table";
  std::string duration = "10s";
  std::string cpus;
};

void add_report_flags(CLI::App& report, CommandLine& cl, ReportFlags& flags) {
  report.add_option("TOPIC", cl.report_topic, "gaps, or a probe to run once: " + joined(probe_names()))
      ->type_name("")
      ->capture_default_str();
  report.add_option("--format", flags.format, "how to print the report")
      ->check(CLI::IsMember({"table", "json", "csv", "script"}))
      ->capture_default_str();
  report.add_option("--duration", flags.duration, "gaps only: how long to sample, 100ms..24h")
      ->type_name("DURATION")
      ->capture_default_str();
  report.add_flag("--interruptions", cl.report_interruptions,
                  "gaps with --format json only: also list every kept interruption");
  report
      .add_option("--cpus", flags.cpus,
                  "c2c only: the CPUs to pair, e.g. 0-7,16 (default: every CPU jitterd may use)")
      ->type_name("LIST");
}

// The verb's name, or the usage error for a first word that is no verb. No verb (only flags, or
// nothing) means run; jitterd's own --help and --version stand alone.
std::optional<std::string> verb_of(const std::vector<std::string>& args, const CLI::App& app) {
  if (args.empty()) return "run";
  const std::string& first = args.front();
  if (first == "--help" || first == "-h" || first == "--version") return std::nullopt;
  if (first.rfind("-", 0) == 0) return "run";
  std::vector<std::string> verbs;
  for (const CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (verb->get_name() == first) return first;
    verbs.push_back(verb->get_name());
  }
  throw UsageError("unknown verb \"" + first + "\" (allowed: " + joined(verbs) + ")", "see jitterd --help");
}

// What CLI11 left over (allow_extras): a flag of another verb or of none, or a stray word.
void reject_extras(CLI::App& app, const CLI::App& verb) {
  const std::vector<std::string> extras = verb.remaining();
  if (extras.empty()) return;
  const std::string hint = "see jitterd " + verb.get_name() + " --help";
  const std::string& extra = extras.front();
  if (extra.rfind("-", 0) != 0)
    throw UsageError(verb.get_name() + ": unexpected argument \"" + extra + "\"", hint);
  const std::string flag = extra.substr(0, extra.find('='));
  std::vector<std::string> takers;
  for (CLI::App* other : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (other->get_option_no_throw(flag) != nullptr) takers.push_back(other->get_name());
  }
  throw UsageError(verb.get_name() + ": unknown flag " + flag +
                       (takers.empty() ? std::string() : " (a flag of " + joined(takers) + " only)"),
                   hint);
}

// The report flags that depend on the topic, as values.
void check_report(CommandLine& cl, const CLI::App& report, const ReportFlags& flags) {
  const std::string hint = "see jitterd report --help";
  const std::vector<std::string> topics = report_topics();
  if (std::find(topics.begin(), topics.end(), cl.report_topic) == topics.end()) {
    throw UsageError("report: unknown topic \"" + cl.report_topic + "\" (allowed: " + joined(topics) + ")", hint);
  }
  cl.report_format = flags.format == "json"     ? ReportFormat::json
                     : flags.format == "csv"    ? ReportFormat::csv
                     : flags.format == "script" ? ReportFormat::script
                                                : ReportFormat::table;
  if (cl.report_format == ReportFormat::script && cl.report_topic != "posture") {
    throw UsageError("--format script: only for report posture (the changes that fix its findings)", hint);
  }
  const bool gaps = cl.report_topic == "gaps";
  if (report.count("--duration") > 0) {
    if (!gaps) throw UsageError("--duration: only for report gaps (a probe runs as configured)", hint);
    const std::optional<Duration> duration = parse_duration(flags.duration);
    if (!duration || *duration < 100ms || *duration > 24h) {
      throw UsageError("--duration: must be 100ms..24h, got \"" + flags.duration + "\"", hint);
    }
    cl.report_duration = *duration;
  }
  if (cl.report_interruptions && !(gaps && cl.report_format == ReportFormat::json)) {
    throw UsageError("--interruptions: only for report gaps --format json", hint);
  }
  if (report.count("--cpus") > 0) {
    if (cl.report_topic != "c2c") {
      throw UsageError("--cpus: only for report c2c (the other topics use the configured cpus)", hint);
    }
    std::string error;
    const std::optional<std::vector<int>> cpus = parse_cpu_list(flags.cpus, &error);
    if (!cpus || cpus->size() < 2) {
      throw UsageError(
          "--cpus: " + (cpus ? std::string("needs at least two CPUs") : error) + ", got \"" + flags.cpus + "\"",
          hint);
    }
    cl.report_cpus = *cpus;
  }
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  ReportFlags report_flags;
  CLI::App app{
      "jitterd measures how quiet CPUs are: pinned samplers time every gap in their loop, and\n"
      "probes time clocks, pacing, kernel operations and core-to-core latency.",
      "jitterd"};
  app.set_help_flag("-h,--help", "print this help and exit");
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  app.require_subcommand(0, 1);
  CLI::App* run =
      app.add_subcommand("run", "the daemon: sample the configured CPUs and serve /metrics (the default verb)");
  add_common_flags(*run, cl);
  add_web_flags(*run, cl);
  CLI::App* check =
      app.add_subcommand("check-config", "check the configuration and the flags as run would, then exit");
  add_common_flags(*check, cl);
  add_web_flags(*check, cl);
  CLI::App* report = app.add_subcommand("report", "measure once and print a report as a table, JSON or CSV");
  add_common_flags(*report, cl);
  add_report_flags(*report, cl, report_flags);
  for (CLI::App* verb : {run, check, report}) verb->allow_extras();
  app.footer(kSynopsis);  // after the verbs, which would inherit it

  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  const std::optional<std::string> verb_name = verb_of(args, app);
  if (verb_name && (args.empty() || args.front() != *verb_name)) reversed.push_back(*verb_name);
  try {
    app.parse(std::move(reversed));
  } catch (const CLI::CallForHelp&) {
    cl.verb = Verb::help;
    cl.help = app.help();  // the verb's, when one was given
    return cl;
  } catch (const CLI::ParseError& e) {
    throw UsageError((verb_name ? *verb_name + ": " : std::string()) + e.what(),
                     "see jitterd " + (verb_name ? *verb_name + " " : std::string()) + "--help");
  }
  if (version) {
    cl.verb = Verb::version;
    return cl;
  }
  if (run->parsed()) {
    reject_extras(app, *run);
    cl.verb = Verb::run;
  } else if (check->parsed()) {
    reject_extras(app, *check);
    cl.verb = Verb::check_config;
  } else {
    reject_extras(app, *report);
    cl.verb = Verb::report;
    check_report(cl, *report, report_flags);
  }
  return cl;
}

ConfigSource config_source(const CommandLine& cl) {
  // report works without a file; run and check-config need the one they were given or the default.
  return {cl.config_path, cl.verb == Verb::report && !cl.config_path_given, cl.overrides};
}

HostReader host_reader(const CommandLine& cl) {
  HostReader host(cl.sysfs, cl.procfs);
  std::vector<ConfigError> errors;
  const auto check = [&](const char* flag, const char* what, const std::string& problem) {
    if (!problem.empty())
      errors.push_back(ConfigError{kCommandLineSource, 0, 0, flag,
                                   "must be where " + std::string(what) + " is mounted: " + printable(problem)});
  };
  check("--path.sysfs", "sysfs", host.sysfs_problem());
  check("--path.procfs", "procfs", host.procfs_problem());
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
  return host;
}

}  // namespace jitterd
