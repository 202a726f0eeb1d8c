// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "cli/command_line.h"

using namespace jitterd;
using namespace std::chrono_literals;

TEST_CASE("run is the default verb with node_exporter-style flags", "[command_line]") {
  const auto cl =
      parse_command_line({"--config", "a.yaml", "--web.listen-address=127.0.0.1:0", "--path.sysfs", "/fx/sys",
                          "--path.procfs=/fx/proc", "--log.level", "debug", "--web.telemetry-path", "/m"});
  CHECK(cl.verb == Verb::run);
  CHECK(cl.config_path == "a.yaml");
  CHECK(cl.config_path_given);
  CHECK(cl.overrides.listen_address == "127.0.0.1:0");
  CHECK(cl.sysfs == "/fx/sys");
  CHECK(cl.procfs == "/fx/proc");
  CHECK(cl.overrides.log_level == "debug");
  CHECK(cl.overrides.telemetry_path == "/m");
  CHECK(parse_command_line({}).verb == Verb::run);
  CHECK(parse_command_line({}).config_path == kDefaultConfigPath);
  CHECK(parse_command_line({"run", "--config=b.yaml"}).config_path == "b.yaml");
}

TEST_CASE("flag values are carried as given; the configuration checks them", "[command_line]") {
  // Neither the parser nor anything else pastes these into YAML: config_test checks the rules.
  const auto cl = parse_command_line(
      {"run", "--web.listen-address", "127.0.0.1:1999\\x35", "--web.telemetry-path=/m\", x: \"1"});
  CHECK(cl.overrides.listen_address == "127.0.0.1:1999\\x35");
  CHECK(cl.overrides.telemetry_path == "/m\", x: \"1");
  CHECK_FALSE(cl.overrides.log_level);
}

TEST_CASE("check-config takes run's flags", "[command_line]") {
  const auto cl = parse_command_line({"check-config", "--config", "x", "--web.listen-address", "1.2.3.4:5",
                                      "--web.telemetry-path", "/m", "--log.level=warn", "--path.sysfs", "/s"});
  CHECK(cl.verb == Verb::check_config);
  CHECK(cl.overrides.listen_address == "1.2.3.4:5");
  const ConfigSource source = config_source(cl);
  CHECK(source.path == "x");
  CHECK_FALSE(source.defaults_when_absent);
  CHECK(source.overrides == cl.overrides);
  // One rule for every verb: no --config, no default file: the built-in defaults.
  for (const char* verb : {"run", "check-config", "report", "baseline"}) {
    INFO(verb);
    std::vector<std::string> args{verb};
    if (std::string(verb) == "baseline") args.insert(args.end(), {"-o", "b.json"});
    CHECK(config_source(parse_command_line(args)).defaults_when_absent);
  }
}

TEST_CASE("report: topics, formats and their topic-scoped flags", "[command_line]") {
  const auto r = parse_command_line({"report", "--duration", "2s", "--format", "json", "--interruptions"});
  CHECK(r.verb == Verb::report);
  CHECK(r.report_topic == "gaps");
  CHECK(r.report_duration == 2s);
  CHECK(r.report_format == ReportFormat::json);
  CHECK(r.report_interruptions);
  CHECK(config_source(r).defaults_when_absent);  // no --config: the built-in defaults do
  CHECK_FALSE(config_source(parse_command_line({"report", "--config", "c.yaml"})).defaults_when_absent);
  CHECK(parse_command_line({"report", "gaps", "--format=csv"}).report_format == ReportFormat::csv);
  CHECK(parse_command_line({"report"}).report_duration == 10s);
  for (const char* topic : {"posture", "attribution", "clock", "kernel_cost", "pinning", "pacing", "c2c"}) {
    INFO(topic);
    CHECK(parse_command_line({"report", topic, "--log.level", "debug"}).report_topic == topic);
  }
  const auto c2c = parse_command_line({"report", "c2c", "--cpus", "0-3,8"});
  CHECK(c2c.report_cpus == std::vector<int>{0, 1, 2, 3, 8});
  CHECK_FALSE(parse_command_line({"report", "c2c"}).report_cpus.has_value());
  // gaps, baseline, run and check-config: --cpus overrides cpus: (checked when the file is read).
  CHECK(parse_command_line({"report", "--cpus", "1"}).overrides.cpus == "1");
  CHECK_FALSE(parse_command_line({"report", "--cpus", "1"}).report_cpus.has_value());
  CHECK(parse_command_line({"baseline", "-o", "b.json", "--cpus", "none"}).overrides.cpus == "none");
  CHECK(parse_command_line({"run", "--cpus", "2-5,8"}).overrides.cpus == "2-5,8");
  CHECK(parse_command_line({"check-config", "--cpus", "auto"}).overrides.cpus == "auto");
  CHECK(parse_command_line({"report", "posture", "--format", "csv"}).report_format == ReportFormat::csv);
}

TEST_CASE("html format: report gaps and probes, compare; not report posture", "[command_line]") {
  CHECK(parse_command_line({"report", "--format", "html"}).report_format == ReportFormat::html);
  CHECK(parse_command_line({"report", "c2c", "--format=html"}).report_format == ReportFormat::html);
  const auto compare = parse_command_line({"compare", "b.json", "a.json", "--format", "html"});
  CHECK(compare.verb == Verb::compare);
  CHECK(compare.report_format == ReportFormat::html);
  CHECK_THROWS_WITH(parse_command_line({"report", "posture", "--format", "html"}),
                    Catch::Contains("--format html: not for report posture"));
  CHECK_THROWS_WITH(parse_command_line({"compare", "b.json", "a.json", "--format", "script"}),
                    Catch::Contains("script"));
}

TEST_CASE("--help and --version, globally and per verb", "[command_line]") {
  const auto help = parse_command_line({"--help"});
  CHECK(help.verb == Verb::help);
  CHECK_THAT(help.help, Catch::Contains("Usage: jitterd"));
  for (const char* verb : {"run", "check-config", "report"}) CHECK_THAT(help.help, Catch::Contains(verb));
  CHECK(parse_command_line({"-h"}).verb == Verb::help);
  CHECK(parse_command_line({"--version"}).verb == Verb::version);

  const auto run = parse_command_line({"run", "--help"});
  CHECK(run.verb == Verb::help);
  CHECK_THAT(run.help, Catch::Contains("jitterd run"));
  CHECK_THAT(run.help, Catch::Contains("--web.listen-address"));
  CHECK_THAT(run.help, !Catch::Contains("--duration"));
  const auto report = parse_command_line({"report", "--help"});
  CHECK_THAT(report.help, Catch::Contains("jitterd report"));
  CHECK_THAT(report.help, Catch::Contains("--duration"));
  CHECK_THAT(report.help, Catch::Contains("kernel_cost"));
  CHECK_THAT(report.help, !Catch::Contains("--web.listen-address"));
  CHECK_THAT(parse_command_line({"check-config", "--help"}).help, Catch::Contains("--web.telemetry-path"));
  CHECK_THAT(parse_command_line({"--config", "x", "--help"}).help, Catch::Contains("jitterd run"));
}

TEST_CASE("a flag the verb does not take is named", "[command_line]") {
  CHECK_THROWS_WITH(parse_command_line({"run", "--duration", "5s"}),
                    Catch::Contains("run: unknown flag --duration (a flag of report, baseline only)"));
  CHECK_THROWS_WITH(parse_command_line({"--duration=5s"}), Catch::Contains("unknown flag --duration"));
  CHECK_THROWS_WITH(parse_command_line({"check-config", "--format", "json"}),
                    Catch::Contains("unknown flag --format"));
  CHECK_THROWS_WITH(
      parse_command_line({"report", "--web.listen-address", "1.2.3.4:5"}),
      Catch::Contains("report: unknown flag --web.listen-address (a flag of run, check-config only)"));
  CHECK_THROWS_WITH(parse_command_line({"report", "--colour", "red"}),
                    Catch::Contains("report: unknown flag --colour"));
  CHECK_THROWS_WITH(parse_command_line({"--colour"}), Catch::Contains("unknown flag --colour"));
  CHECK_THROWS_AS(parse_command_line({"report", "--version"}), UsageError);
}

TEST_CASE("report flags outside their topic are usage errors", "[command_line]") {
  CHECK_THROWS_WITH(parse_command_line({"report", "clock", "--duration", "2s"}),
                    Catch::Contains("--duration: only for report gaps"));
  CHECK_THROWS_WITH(parse_command_line({"report", "--interruptions"}),
                    Catch::Contains("--interruptions: only for report gaps --format json"));
  CHECK_THROWS_WITH(parse_command_line({"report", "c2c", "--interruptions", "--format", "json"}),
                    Catch::Contains("--interruptions: only for report gaps"));
  CHECK_THROWS_WITH(parse_command_line({"report", "posture", "--cpus", "0,1"}),
                    Catch::Contains("--cpus: only for report gaps, c2c"));
  CHECK_THROWS_WITH(parse_command_line({"report", "--duration", "50ms"}),
                    Catch::Contains("--duration: must be 100ms..24h, got \"50ms\""));
  CHECK_THROWS_WITH(parse_command_line({"report", "c2c", "--cpus", "0"}),
                    Catch::Contains("--cpus: needs at least two CPUs, got \"0\""));
  CHECK_THROWS_WITH(parse_command_line({"report", "c2c", "--cpus", "0-"}), Catch::Contains("got \"0-\""));
}

TEST_CASE("bad arguments name themselves", "[command_line]") {
  CHECK_THROWS_WITH(
      parse_command_line({"serve"}),
      Catch::Contains("unknown verb \"serve\" (allowed: run, check-config, report, baseline, compare, fleet)"));
  CHECK_THROWS_WITH(parse_command_line({"--config"}), Catch::Contains("--config"));
  CHECK_THROWS_WITH(parse_command_line({"report", "--format", "xml"}), Catch::Contains("xml"));
  CHECK_THROWS_WITH(parse_command_line({"run", "report"}), Catch::Contains("run: unexpected argument \"report\""));
  CHECK_THROWS_WITH(
      parse_command_line({"report", "c2x"}),
      Catch::Contains(
          "unknown topic \"c2x\" (allowed: gaps, posture, attribution, watch, loops, clock, kernel_cost, "
          "pinning, pacing, c2c)"));
  CHECK_THROWS_WITH(parse_command_line({"report", "kernel"}), Catch::Contains("unknown topic \"kernel\""));
  CHECK_THROWS_WITH(parse_command_line({"report", "c2c", "extra"}),
                    Catch::Contains("unexpected argument \"extra\""));
  CHECK_THROWS_WITH(parse_command_line({"report", "c2c", "--cpus"}), Catch::Contains("--cpus"));
  try {
    parse_command_line({"report", "--format", "xml"});
  } catch (const UsageError& e) {
    CHECK(e.hint() == "see jitterd report --help");
  }
}

TEST_CASE("compare takes two files, or --prometheus with an instance and two ranges", "[command_line]") {
  const CommandLine files = parse_command_line({"compare", "a.json", "b.json", "--format", "csv"});
  CHECK(files.verb == Verb::compare);
  CHECK(files.compare_before == "a.json");
  CHECK(files.compare_after == "b.json");
  CHECK(files.prometheus.url.empty());
  const CommandLine history = parse_command_line(
      {"compare", "--prometheus", "http://127.0.0.1:9090", "--instance", "box:9978", "--before",
       "2026-11-25T10:00:00Z/2026-11-25T10:10:00Z", "--after", "1795608000/1795608600", "--sub-window", "30s"});
  CHECK(history.prometheus.url == "http://127.0.0.1:9090");
  CHECK(history.prometheus_instance == "box:9978");
  CHECK(history.prometheus_after == "1795608000/1795608600");
  CHECK(history.prometheus_sub_window == std::chrono::seconds(30));
  CHECK(history.compare_before.empty());

  const std::vector<std::string> prometheus{"compare", "--prometheus", "http://p:9090", "--instance", "i:1"};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = prometheus;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  CHECK_THROWS_WITH(parse_command_line({"compare", "a.json"}), Catch::Contains("needs BEFORE and AFTER"));
  CHECK_THROWS_WITH(parse_command_line({"compare", "a.json", "b.json", "--instance", "i:1"}),
                    Catch::Contains("--instance: only with --prometheus"));
  CHECK_THROWS_WITH(parse_command_line(with({"--before", "1/2"})),
                    Catch::Contains("--after: needed with --prometheus"));
  CHECK_THROWS_WITH(parse_command_line(with({"--before", "2/1", "--after", "3/4"})),
                    Catch::Contains("--before: the range is the wrong way round"));
  CHECK_THROWS_WITH(parse_command_line(with({"--before", "1/2", "--after", "yesterday/today"})),
                    Catch::Contains("--after: START \"yesterday\""));
  CHECK_THROWS_WITH(parse_command_line(with({"--before", "1/2", "--after", "3/4", "a.json", "b.json"})),
                    Catch::Contains("not the files \"a.json\""));
  CHECK_THROWS_WITH(parse_command_line(with({"--before", "1/2", "--after", "3/4", "--sub-window", "1ms"})),
                    Catch::Contains("--sub-window: must be 100ms..24h"));
  CHECK_THROWS_WITH(parse_command_line({"compare", "--prometheus", "127.0.0.1:9090", "--instance", "i", "--before",
                                        "1/2", "--after", "3/4"}),
                    Catch::Contains("--prometheus: must be an http:// or https:// URL"));
  CHECK(history.prometheus.timeout_seconds == 30);
  CHECK(history.prometheus.basic_auth_user.empty());
}

TEST_CASE("compare --prometheus: overlapping ranges, basic auth and the timeout", "[command_line]") {
  const std::vector<std::string> prometheus{"compare", "--prometheus", "http://p:9090", "--instance", "i:1"};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = prometheus;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const auto usage_error = [](const std::vector<std::string>& args) {
    try {
      parse_command_line(args);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // Touching ranges are fine; overlapping ones (either order, one inside the other) are refused, naming both.
  CHECK_NOTHROW(parse_command_line(with({"--before", "100/200", "--after", "200/300"})));
  CHECK_NOTHROW(parse_command_line(with({"--before", "200/300", "--after", "100/200"})));
  for (const auto& [before, after] :
       {std::pair{"100/250", "200/300"}, {"200/300", "100/250"}, {"100/400", "200/300"}}) {
    INFO(before << " " << after);
    CHECK_THAT(usage_error(with({"--before", before, "--after", after})),
               Catch::Contains(std::string("--before ") + before) &&
                   Catch::Contains(std::string("--after ") + after) && Catch::Contains("overlap"));
  }
  CHECK_THAT(usage_error(with({"--before", "2026-11-25T10:00:00Z/2026-11-25T10:10:00Z", "--after",
                               "2026-11-25T10:05:00Z/2026-11-25T10:15:00Z"})),
             Catch::Contains("overlap"));

  const CommandLine auth = parse_command_line(
      with({"--before", "1/2", "--after", "3/4", "--prometheus-basic-auth-user", "grafana",
            "--prometheus-basic-auth-password-file", "/run/secrets/p", "--prometheus-timeout", "2s"}));
  CHECK(auth.prometheus.basic_auth_user == "grafana");
  CHECK(auth.prometheus.basic_auth_password_file == "/run/secrets/p");
  CHECK(auth.prometheus.timeout_seconds == 2);
  CHECK_THAT(usage_error(with({"--before", "1/2", "--after", "3/4", "--prometheus-basic-auth-user", "grafana"})),
             Catch::Contains("give both or neither"));
  CHECK_THAT(
      usage_error(with({"--before", "1/2", "--after", "3/4", "--prometheus-basic-auth-password-file", "p"})),
      Catch::Contains("give both or neither"));
  CHECK_THAT(
      usage_error(with({"--before", "1/2", "--after", "3/4", "--prometheus-basic-auth-user", "u",
                        "--prometheus-basic-auth-password-file", "p", "--prometheus-bearer-token-file", "t"})),
      Catch::Contains("one of them"));
  CHECK_THAT(usage_error(with({"--before", "1/2", "--after", "3/4", "--prometheus-basic-auth-user", "a:b",
                               "--prometheus-basic-auth-password-file", "p"})),
             Catch::Contains("cannot hold ':'"));
  for (const char* bad : {"0s", "50ms", "2h", "soon"}) {
    INFO(bad);
    CHECK_THAT(usage_error(with({"--before", "1/2", "--after", "3/4", "--prometheus-timeout", bad})),
               Catch::Contains("--prometheus-timeout: must be 100ms..1h"));
  }
  CHECK_THAT(usage_error({"compare", "a.json", "b.json", "--prometheus-timeout", "5s"}),
             Catch::Contains("--prometheus-timeout: only with --prometheus"));
  CHECK_THAT(usage_error({"compare", "a.json", "b.json", "--prometheus-basic-auth-user", "u"}),
             Catch::Contains("--prometheus-basic-auth-user: only with --prometheus"));
}

TEST_CASE("command line: compare --allowance sets run-to-run allowances, each token checked") {
  const auto usage_error = [](const std::string& allowance) {
    try {
      parse_command_line({"compare", "a.json", "b.json", "--allowance", allowance});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const CommandLine cl =
      parse_command_line({"compare", "a.json", "b.json", "--allowance", "c2c=0.3, kernel_cost.p99_ns=0.5,gaps=0"});
  CHECK(cl.compare_allowances ==
        std::vector<AllowanceSetting>{{"c2c", 0.3}, {"kernel_cost.p99_ns", 0.5}, {"gaps", 0}});
  CHECK(parse_command_line({"compare", "a.json", "b.json"}).compare_allowances.empty());
  // The bad token named, with what is allowed.
  CHECK_THAT(usage_error("c2c=0.3,c2x=0.2"),
             Catch::Contains("--allowance: \"c2x=0.2\": unknown figure \"c2x\"") &&
                 Catch::Contains("allowed: gaps, loop, watch, c2c, kernel_cost, pacing") &&
                 Catch::Contains("c2c.median_ns"));
  for (const char* bad : {"c2c=3", "c2c=-0.1", "c2c=abc", "c2c=", "c2c=0.3x", "c2c=nan", "c2c=inf"}) {
    INFO(bad);
    CHECK_THAT(usage_error(bad), Catch::Contains(std::string("--allowance: \"") + bad + "\"") &&
                                     Catch::Contains("must be a number 0..2"));
  }
  CHECK_THAT(usage_error("c2c"), Catch::Contains("\"c2c\": not NAME=CV"));
  CHECK_THAT(usage_error("c2c=0.3,,gaps=0.2"), Catch::Contains("\"\": not NAME=CV"));
  CHECK_THAT(usage_error("c2c=0.3,c2c=0.4"), Catch::Contains("c2c given twice"));
  CHECK_THAT(usage_error("pacing.p99_late_ns=0.5"), Catch::Contains("never tested"));
  CHECK_THAT(usage_error(""), Catch::Contains("--allowance: empty"));
}

TEST_CASE("fleet: --prometheus, --range and --by, each flag checked") {
  const CommandLine cl = parse_command_line(
      {"fleet", "--prometheus", "http://p:9090", "--range", "100/700", "--by", "kernel", "--class",
       "bios_vendor,microcode", "--alpha", "0.01", "--adjustment", "bh", "--min-hosts", "8", "--format", "html"});
  CHECK(cl.verb == Verb::fleet);
  CHECK(cl.fleet_selection.range.start == 100);
  CHECK(cl.fleet_selection.range.end == 700);
  CHECK(cl.fleet_selection.by == "kernel");
  CHECK(cl.fleet_selection.class_fields == std::vector<std::string>{"bios_vendor", "microcode"});
  CHECK(cl.fleet_options.criteria.alpha == 0.01);
  CHECK(cl.fleet_options.criteria.adjustment == Adjustment::benjamini_hochberg);
  CHECK(cl.fleet_options.criteria.min_hosts == 8);
  CHECK(cl.report_format == ReportFormat::html);
  const std::vector<std::string> base{"fleet",   "--prometheus", "http://p:9090", "--range",
                                      "100/700", "--by",         "kernel"};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  CHECK_THROWS_WITH(parse_command_line({"fleet", "--prometheus", "http://p:9090", "--range", "100/700"}),
                    Catch::Contains("--by is needed"));
  CHECK_THROWS_WITH(parse_command_line({"fleet", "--by", "kernel", "--range", "100/700"}),
                    Catch::Contains("--prometheus is needed"));
  CHECK_THROWS_WITH(parse_command_line(with({"--alpha", "0.5"})), Catch::Contains("--alpha: must be 0.0001..0.2"));
  CHECK_THROWS_WITH(parse_command_line(with({"--min-hosts", "2"})), Catch::Contains("--min-hosts"));
  CHECK_THROWS_WITH(parse_command_line(with({"--adjustment", "bonferroni"})), Catch::Contains("holm or bh"));
  CHECK_THROWS_WITH(parse_command_line(with({"--class", "bios-vendor"})), Catch::Contains("not a label name"));
  CHECK_THROWS_WITH(parse_command_line(with({"--where", "x=\"1\"}"})), Catch::Contains("--where"));
  CHECK_THROWS_WITH(
      parse_command_line({"fleet", "--prometheus", "http://p:9090", "--range", "700/100", "--by", "k"}),
      Catch::Contains("--range"));
  // Its counters are read at END: a range not over yet is refused (year 2100).
  CHECK_THROWS_WITH(
      parse_command_line({"fleet", "--prometheus", "http://p:9090", "--range", "100/4102444800", "--by", "k"}),
      Catch::Contains("--range: END 2100-01-01") && Catch::Contains("in the future"));
  CHECK_NOTHROW(parse_command_line({"fleet", "--prometheus", "http://p:9090", "--range", "-1h", "--by", "k"}));
  CHECK_THROWS_WITH(parse_command_line(with({"--instance", "a:1"})), Catch::Contains("--instance"));
}
