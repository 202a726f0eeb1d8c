#include <catch2/catch.hpp>

#include "cli/command_line.h"

using namespace jitterd;

TEST_CASE("run is the default verb with node_exporter-style flags", "[command_line]") {
  const auto cl =
      parse_command_line({"--config", "a.yaml", "--web.listen-address=127.0.0.1:0", "--path.sysfs", "/fx/sys",
                          "--path.procfs=/fx/proc", "--log.level", "debug", "--web.telemetry-path", "/m"});
  CHECK(cl.verb == Verb::run);
  CHECK(cl.config_path == "a.yaml");
  CHECK(cl.config_path_given);
  CHECK(cl.listen_address == "127.0.0.1:0");
  CHECK(cl.sysfs == "/fx/sys");
  CHECK(cl.procfs == "/fx/proc");
  CHECK(cl.log_level == "debug");
  CHECK(cl.telemetry_path == "/m");
}

TEST_CASE("verbs and report options", "[command_line]") {
  CHECK(parse_command_line({"check-config", "--config", "x"}).verb == Verb::check_config);
  const auto r = parse_command_line({"report", "--duration", "2s", "--format", "json", "--interruptions"});
  CHECK(r.verb == Verb::report);
  CHECK(r.report_duration == "2s");
  CHECK(r.report_format == ReportFormat::json);
  CHECK(r.report_interruptions);
  CHECK(parse_command_line({"--help"}).verb == Verb::help);
  CHECK(parse_command_line({"run", "--version"}).verb == Verb::version);
  CHECK(parse_command_line({}).config_path == kDefaultConfigPath);
  const auto c2c = parse_command_line({"report", "c2c", "--cpus", "0-3,8"});
  CHECK(c2c.report_topic == "c2c");
  CHECK(c2c.report_cpus == "0-3,8");
  CHECK_FALSE(parse_command_line({"report"}).report_cpus.has_value());
}

TEST_CASE("bad arguments name themselves", "[command_line]") {
  CHECK_THROWS_WITH(parse_command_line({"serve"}), Catch::Contains("unknown verb \"serve\""));
  CHECK_THROWS_WITH(parse_command_line({"--colour"}), Catch::Contains("unknown flag --colour"));
  CHECK_THROWS_WITH(parse_command_line({"--config"}), Catch::Contains("--config: needs a value"));
  CHECK_THROWS_WITH(parse_command_line({"report", "--format", "xml"}), Catch::Contains("got \"xml\""));
  CHECK_THROWS_WITH(parse_command_line({"run", "report"}), Catch::Contains("unexpected argument \"report\""));
  CHECK_THROWS_WITH(
      parse_command_line({"report", "c2x"}),
      Catch::Contains("unknown topic \"c2x\" (allowed: gaps, clock, pacing, kernel, pinning, c2c, posture)"));
  CHECK_THROWS_WITH(parse_command_line({"report", "c2c", "--cpus"}), Catch::Contains("--cpus: needs a value"));
}
