// SPDX-License-Identifier: Apache-2.0
#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>

#include "cli/verb_flags.h"
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
  jitterd report [gaps] --cpus LIST  sample LIST instead of the configured CPUs
  jitterd report c2c --cpus LIST  every pair among LIST: the core-to-core latency matrix
  jitterd report posture [FLAGS]  the isolation checklist
  jitterd report [TOPIC] --from URL  the running daemon's view of TOPIC: its /status.json at URL
  jitterd baseline -o FILE [--duration 60s] [--probes LIST]
                                  sample and run probes once, save everything to FILE
  jitterd compare BEFORE AFTER    what changed between two baselines, and what it did
  jitterd compare --prometheus URL --instance HOST:PORT --before START/END --after START/END
                                  the same from what Prometheus scraped, at the exported buckets
  jitterd fleet --prometheus URL --range START/END --by FIELD [--where MATCHERS]
                                  cohorts of hosts compared over one range, and drifted hosts
  jitterd VERB --help             the flags VERB takes

Exit codes: 0 success, 64 bad command line, 78 bad configuration (a bad value of --web.* or
--log.level included), 65 a baseline file that is not one or cannot be compared, 66 a baseline
file that cannot be read, 73 a baseline that cannot be written, 1 anything else; report posture:
0 PASS, 1 WARN, 2 FAIL, 3 cannot check.)";

std::vector<std::string> report_topics() {
  std::vector<std::string> topics{"gaps"};
  for (std::string_view name : probe_names()) topics.emplace_back(name);
  return topics;
}

// The probes whose report is a checklist (report posture), and those that take --cpus (report c2c).
std::vector<std::string_view> checklist_topics() {
  std::vector<std::string_view> topics;
  for (std::string_view name : probe_names())
    if (probe_facts(name)->report == ReportKind::checklist) topics.push_back(name);
  return topics;
}

std::vector<std::string_view> cpus_topics() {
  std::vector<std::string_view> topics;
  for (std::string_view name : probe_names())
    if (probe_facts(name)->report_over_cpus != nullptr) topics.push_back(name);
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
  verb.add_option(
          "--path.cgroupfs", cl.cgroupfs,
          "where the cgroup v2 hierarchy is mounted, for cpuset partitions (default: <path.sysfs>/fs/cgroup)")
      ->type_name("DIR");
  verb.add_option("--path.kubelet", cl.kubelet,
                  "the kubelet's root directory, for its CPU manager state (cpu_manager_state); \"\" reads none")
      ->type_name("DIR")
      ->capture_default_str();
  verb.add_option_function<std::string>(
          "--log.level", [&cl](const std::string& level) { cl.overrides.log_level = level; },
          "overrides log.level: " + joined(log_levels()))
      ->type_name("LEVEL");
}

// --cpus for the verbs that sample the configured CPUs (run, check-config, baseline): overrides cpus:.
void add_sampled_cpus_flag(CLI::App& verb, CommandLine& cl) {
  verb.add_option_function<std::string>(
          "--cpus", [&cl](const std::string& cpus) { cl.overrides.cpus = cpus; },
          "overrides cpus: the CPUs to sample: auto, none (a daemon that only watches) or a list such as 2-5,8")
      ->type_name("LIST");
}

void add_web_flags(CLI::App& verb, CommandLine& cl) {
  verb.add_option_function<std::string>(
          "--web.listen-address", [&cl](const std::string& address) { cl.overrides.listen_address = address; },
          "overrides web.listen_address: a.b.c.d:port, [IPv6]:port or :port (every address; port 0: any free "
          "one, logged)")
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

}  // namespace

void add_format_flag(CLI::App& verb, ReportFlags& flags, const std::string& what, bool with_script) {
  std::vector<std::string> formats{"table", "json", "csv", "html"};
  if (with_script) formats.push_back("script");
  verb.add_option("--format", flags.format, what)->check(CLI::IsMember(formats))->capture_default_str();
}

std::vector<std::string> comma_separated(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

namespace {

ReportFormat format_of(const ReportFlags& flags) {
  return flags.format == "json"     ? ReportFormat::json
         : flags.format == "csv"    ? ReportFormat::csv
         : flags.format == "script" ? ReportFormat::script
         : flags.format == "html"   ? ReportFormat::html
                                    : ReportFormat::table;
}

// --duration's value, or the usage error naming it.
Duration checked_duration(const std::string& text, const std::string& hint) {
  const std::optional<Duration> duration = parse_duration(text);
  if (!duration || *duration < 100ms || *duration > 24h) {
    throw UsageError("--duration: must be 100ms..24h, got \"" + text + "\"", hint);
  }
  return *duration;
}

void add_report_flags(CLI::App& report, CommandLine& cl, ReportFlags& flags) {
  report.add_option("TOPIC", cl.report_topic, "gaps, or a probe to run once: " + joined(probe_names()))
      ->type_name("")
      ->capture_default_str();
  add_format_flag(report, flags, "how to print the report", true);
  report.add_option("--duration", flags.duration, "gaps only: how long to sample, 100ms..24h")
      ->type_name("DURATION")
      ->capture_default_str();
  report.add_flag("--interruptions", cl.report_interruptions,
                  "gaps with --format json only: also list every kept interruption");
  report
      .add_option("--cpus", flags.cpus,
                  "gaps: the CPUs to sample (overrides cpus:, as run's --cpus); c2c: the CPUs to pair, e.g. "
                  "0-7,16 (default: every CPU jitterd may use)")
      ->type_name("LIST");
  report.add_option("--save", cl.save_path, "also save the complete result as a baseline file (see compare)")
      ->type_name("FILE");
  add_report_from_flags(report, cl, flags);
}

void add_baseline_flags(CLI::App& baseline, CommandLine& cl, ReportFlags& flags) {
  baseline
      .add_option("-o,--output", cl.output_path,
                  "the baseline file to write: a new file or a regular one, replaced whole (never half-written, "
                  "never a link, a device or a FIFO); - for standard output")
      ->type_name("FILE")
      ->required();
  add_sampled_cpus_flag(baseline, cl);
  baseline.add_option("--duration", flags.duration, "how long to sample, 100ms..24h")
      ->type_name("DURATION")
      ->capture_default_str();
  baseline
      .add_option("--probes", flags.probes,
                  "the probes to run once after sampling, comma-separated, or none: " + joined(probe_names()))
      ->type_name("LIST")
      ->capture_default_str();
}

// run and check-config: the same flags, since check-config checks what run would do.
CLI::App* add_daemon_verb(CLI::App& app, CommandLine& cl, const std::string& name, const std::string& what) {
  CLI::App* verb = app.add_subcommand(name, what);
  add_common_flags(*verb, cl);
  add_sampled_cpus_flag(*verb, cl);
  add_web_flags(*verb, cl);
  return verb;
}

// The probes a baseline runs: names of probes that measure once (not posture or attribution).
std::vector<std::string> checked_probes(const std::string& list, const std::string& hint) {
  std::vector<std::string> names;
  if (list == "none" || list.empty()) return names;
  const std::vector<std::string> allowed(baseline_probe_names().begin(), baseline_probe_names().end());
  for (const std::string& name : comma_separated(list)) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      throw UsageError("--probes: unknown probe \"" + name + "\" (allowed: " + joined(allowed) + ", or none)",
                       hint);
    names.push_back(name);
  }
  return names;
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
  // The topic's facts: gaps is no probe, and shows tables.
  const ProbeFacts* facts = probe_facts(cl.report_topic);
  const bool checklist = facts != nullptr && facts->report == ReportKind::checklist;
  if (cl.report_format == ReportFormat::script && !checklist) {
    throw UsageError(
        "--format script: only for report " + joined(checklist_topics()) + " (the changes that fix its findings)",
        hint);
  }
  if (cl.report_format == ReportFormat::html && checklist) {
    throw UsageError("--format html: not for report " + cl.report_topic + " (table, json, csv or script)", hint);
  }
  const bool gaps = cl.report_topic == "gaps";
  if (report.count("--duration") > 0) {
    if (!gaps) throw UsageError("--duration: only for report gaps (a probe runs as configured)", hint);
    cl.report_duration = checked_duration(flags.duration, hint);
  }
  if (!cl.save_path.empty() && checklist) {
    throw UsageError("--save: not for report " + cl.report_topic + " (a baseline holds gaps and probe results)",
                     hint);
  }
  if (cl.save_path == "-") {
    throw UsageError("--save: not - (standard output carries the report); name a file", hint);
  }
  if (cl.report_interruptions && !(gaps && cl.report_format == ReportFormat::json)) {
    throw UsageError("--interruptions: only for report gaps --format json", hint);
  }
  if (report.count("--cpus") > 0 && gaps) {
    cl.overrides.cpus = flags.cpus;  // checked with the file's cpus: rules (config/config_source.h)
  } else if (report.count("--cpus") > 0) {
    if (facts == nullptr || facts->report_over_cpus == nullptr) {
      throw UsageError(
          "--cpus: only for report gaps, " + joined(cpus_topics()) + " (the other topics use the configured cpus)",
          hint);
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
  check_report_from(cl, report, flags);
}

}  // namespace

namespace {

// The verbs and their flags, into `app`: each verb's values into `cl`, the report's and fleet's
// text flags (checked after parsing) into `report_flags` and `fleet_flags`.
struct Verbs {
  CLI::App *run, *check, *report, *baseline, *compare, *fleet;
};
Verbs add_verbs(CLI::App& app, CommandLine& cl, ReportFlags& report_flags, FleetFlags& fleet_flags) {
  CLI::App* run = add_daemon_verb(app, cl, "run",
                                  "the daemon: sample the configured CPUs and serve /metrics (the default verb)");
  CLI::App* check =
      add_daemon_verb(app, cl, "check-config", "check the configuration and the flags as run would, then exit");
  CLI::App* report = app.add_subcommand("report", "measure once and print a report as a table, JSON, CSV or HTML");
  add_common_flags(*report, cl);
  add_report_flags(*report, cl, report_flags);
  CLI::App* baseline = app.add_subcommand(
      "baseline", "sample the configured CPUs, run probes once, and save everything to a file for compare");
  add_common_flags(*baseline, cl);
  add_baseline_flags(*baseline, cl, report_flags);
  CLI::App* compare = app.add_subcommand(
      "compare",
      "compare two baselines, or two ranges of Prometheus history: what changed, and what it did, with a "
      "verdict per figure");
  add_compare_flags(*compare, cl, report_flags);
  CLI::App* fleet = add_fleet_verb(app, cl, report_flags, fleet_flags);
  for (CLI::App* verb : {run, check, report, baseline, compare, fleet}) verb->allow_extras();
  app.footer(kSynopsis);  // after the verbs, which would inherit it
  return {run, check, report, baseline, compare, fleet};
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  ReportFlags report_flags;
  FleetFlags fleet_flags;
  CLI::App app{
      "jitterd measures how quiet CPUs are: pinned samplers time every gap in their loop, and\n"
      "probes time clocks, pacing, kernel operations and core-to-core latency.",
      "jitterd"};
  app.set_help_flag("-h,--help", "print this help and exit");
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  app.require_subcommand(0, 1);
  const auto [run, check, report, baseline, compare, fleet] = add_verbs(app, cl, report_flags, fleet_flags);

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
  cl.report_format = format_of(report_flags);  // --format of report, compare and fleet; the others: table
  if (run->parsed()) {
    reject_extras(app, *run);
    cl.verb = Verb::run;
  } else if (check->parsed()) {
    reject_extras(app, *check);
    cl.verb = Verb::check_config;
  } else if (baseline->parsed()) {
    reject_extras(app, *baseline);
    cl.verb = Verb::baseline;
    cl.report_duration = checked_duration(report_flags.duration, "see jitterd baseline --help");
    cl.baseline_probes = checked_probes(report_flags.probes, "see jitterd baseline --help");
  } else if (fleet->parsed()) {
    reject_extras(app, *fleet);
    cl.verb = Verb::fleet;
    check_fleet(cl, *fleet, report_flags, fleet_flags);
  } else if (compare->parsed()) {
    reject_extras(app, *compare);
    cl.verb = Verb::compare;
    check_compare(cl, *compare, report_flags);
  } else {
    reject_extras(app, *report);
    cl.verb = Verb::report;
    check_report(cl, *report, report_flags);
  }
  return cl;
}

ConfigSource config_source(const CommandLine& cl) {
  // One rule for every verb: without --config, an absent default file means the built-in
  // defaults; a file named by --config must be there.
  return {cl.config_path, !cl.config_path_given, cl.overrides};
}

HostReader host_reader(const CommandLine& cl) {
  HostReader host(cl.sysfs, cl.procfs, cl.cgroupfs, cl.kubelet);
  std::vector<ConfigError> errors;
  const auto check = [&](const char* flag, const char* what, const std::string& problem) {
    if (!problem.empty())
      errors.push_back(ConfigError{kCommandLineSource, 0, 0, flag,
                                   "must be where " + std::string(what) + " is mounted: " + printable(problem)});
  };
  check("--path.sysfs", "sysfs", host.sysfs_problem());
  check("--path.procfs", "procfs", host.procfs_problem());
  // Given: it must be a directory (a machine without cgroup v2 simply has no partitions to read).
  if (!cl.cgroupfs.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(cl.cgroupfs, ec))
      check("--path.cgroupfs", "the cgroup v2 hierarchy", cl.cgroupfs + ": not a directory");
  }
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
  return host;
}

}  // namespace jitterd
