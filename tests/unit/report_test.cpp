// SPDX-License-Identifier: Apache-2.0
// Report rendering: typed cells to text tables, JSON and RFC 4180 CSV, for the gap report, a
// probe's tables and the posture checklist alike.
#include <catch2/catch.hpp>

#include <algorithm>

#include <regex>

#include "cli/posture_report.h"
#include "cli/report.h"
#include "host/text.h"
#include "report/render.h"

using namespace jitterd;

namespace {
GapReport sample_report() {
  GapReport r;
  r.method = "lfence_rdtsc";
  r.frequency = {2'400'000'000.0, "calibrated_monotonic_raw", 0.5};
  r.duration_seconds = 10;
  CpuGapReport c;
  c.cpu = 3;
  c.samples = 1000;
  c.mean_ticks = 48;
  c.mean_ns = 20;
  c.p50_ns = 20;
  c.max_ns = 25000;
  c.interruptions = 7;
  c.stolen_share = 0.0012;
  c.kept = {{100, 60000}, {9000000, 48000}};
  r.cpus.push_back(c);
  CpuGapReport failed;
  failed.cpu = 5;
  failed.error = "cpu 5: cannot pin the sampler thread: Invalid argument";
  r.cpus.push_back(failed);
  return r;
}

// RFC 4180 records read back: quoted fields may hold commas, doubled quotes and line ends.
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
      records.back().back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      records.back().emplace_back();
    } else if (!quoted && c == '\n') {
      records.emplace_back(1);
    } else {
      records.back().back() += c;
    }
  }
  if (records.back() == std::vector<std::string>(1)) records.pop_back();  // after the last LF
  return records;
}

ProbeResult sample_probe_result() {
  ProbeResult r;
  r.tables.push_back(
      {"costs",
       {"op", "samples", "median_ns", "late_ns"},
       {{"counter_read", 1000, Cell(9.8, 1), Cell()}, {"fork_wait", 20, Cell(129011.04, 1), Cell(5.5, 0)}}});
  r.notes.push_back("a \"quoted\" note");
  return r;
}
}  // namespace

TEST_CASE("cells: numbers keep their digits in JSON, show their decimals in a table", "[report]") {
  CHECK(cell_text(Cell(2.345, 1)) == "2.3");
  CHECK(cell_text(Cell(7)) == "7");
  CHECK(cell_text(Cell()) == "-");
  CHECK(cell_text(Cell("x")) == "x");
  CHECK(cell_text(Cell(true)) == "yes");
  CHECK(cell_json(Cell(2.345, 1)).dump() == "2.345");
  CHECK(cell_json(Cell(2.345, 1)).is_number_float());
  CHECK(cell_json(Cell(std::uint64_t{123})).is_number_integer());
  CHECK(cell_json(Cell("12")).is_string());
  CHECK(cell_json(Cell()).is_null());
  CHECK(cell_json(Cell(false)) == false);
}

TEST_CASE("a CSV field with a comma or quote round-trips; a line end is escaped, a record is one line",
          "[report]") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "two\\nlines");
  CHECK(csv_field("cr\r") == "cr\\x0d");
  const std::vector<std::string> fields{"a,b", "say \"hi\"", "two\nlines", "", "cr\rlf\r\n", "plain"};
  const std::string record = csv_record(fields);
  CHECK(record.back() == '\n');
  CHECK(std::count(record.begin(), record.end(), '\n') == 1);
  const auto back = read_csv(record);
  REQUIRE(back.size() == 1);
  CHECK(back[0] == std::vector<std::string>{"a,b", "say \"hi\"", "two\\nlines", "", "cr\\x0dlf\\x0d\\n", "plain"});
}

TEST_CASE("CSV: a field a spreadsheet would run as a formula is defused; numbers stay numbers", "[report]") {
  // OWASP's list: = + - @, a tab and a carriage return at the start.
  CHECK(csv_field("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  CHECK(csv_field("+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0");
  CHECK(csv_field("-2+3+cmd|' /C calc'!A0") == "'-2+3+cmd|' /C calc'!A0");
  CHECK(csv_field("@SUM(1+1)") == "'@SUM(1+1)");
  CHECK(csv_field("\t=1") == "'\\x09=1");
  CHECK(csv_field("\r=1") == "'\\x0d=1");
  CHECK(csv_field("-") == "'-");
  // A whole finite number is data: negative, signed exponent, as csv_number spells them.
  CHECK(csv_field("-3.5") == "-3.5");
  CHECK(csv_field("-1e-05") == "-1e-05");
  CHECK(csv_field("-inf") == "'-inf");
  CHECK(csv_field("a=b") == "a=b");  // only the first character counts
  // Numeric cells are never touched, text cells always go through the rule.
  ProbeTable t{"t", {"name", "value"}, {{std::string("=1+2"), Cell(-3.5, 1)}, {std::string("-3.5"), Cell(-2)}}};
  CHECK(table_csv(t) == "name,value\n'=1+2,-3.5\n-3.5,-2\n");
}

TEST_CASE("CSV, JSON and text: ESC, CR, LF and bidirectional overrides never reach the output raw", "[report]") {
  const std::string hostile =
      "ok\x1b[2J\r\nhost\xe2\x80\xae"
      "evil\xe2\x81\xa6";
  ProbeTable t{"t", {"host"}, {{hostile}}};
  for (const std::string& out : {table_csv(t), table_text(t), json_text(table_json(t))}) {
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK(out.find('\r') == std::string::npos);
    CHECK(std::count(out.begin(), out.end(), '\n') == (out == json_text(table_json(t)) ? 1 : 2));
    CHECK(out.find("\xe2\x80\xae") == std::string::npos);
    CHECK(out.find("\xe2\x81\xa6") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("\\u202e"));
  }
  // JSON: the same string to a parser.
  CHECK(Json::parse(json_text(table_json(t)))["rows"][0][0] == hostile);
}

TEST_CASE("a text table puts numbers right and text left", "[report]") {
  const std::string t = table_text(
      {"t",
       {"name", "value", "spread"},
       {{"a", Cell(1.5, 1), "40.0±1.0"}, {"longer", Cell(12345.25, 2), "140.0±1.0"}, {"c", Cell(), ""}}});
  CHECK(t ==
        "name       value  spread\n"
        "a            1.5  40.0±1.0\n"
        "longer  12345.25  140.0±1.0\n"
        "c              -\n");
}

TEST_CASE("the gap table has a row per CPU and says how to read it", "[report]") {
  const std::string t = format_report_table(sample_report());
  CHECK_THAT(t, Catch::Contains("lfence_rdtsc at 2400.000 MHz (calibrated_monotonic_raw), one tick = 0.417 ns"));
  CHECK_THAT(t, Catch::Contains("p99.99_ns"));
  CHECK_THAT(t, Catch::Contains("\n  3     1000       48.0"));
  CHECK_THAT(t, Catch::Contains("cpu 5: not sampled: cpu 5: cannot pin"));
  CHECK_THAT(t, Catch::Contains("upper edge of a histogram bucket"));
}

TEST_CASE("gap csv has a header and one record per CPU, numbers unquoted", "[report]") {
  GapReport r = sample_report();
  r.cpus[1].error = "pin failed, \"EINVAL\"";
  const std::string csv = format_report_csv(r);
  const auto records = read_csv(csv);
  REQUIRE(records.size() == 3);
  CHECK(records[0].front() == "cpu");
  CHECK(records[0].back() == "error");
  CHECK(records[1][0] == "3");
  CHECK(records[1][1] == "1000");
  CHECK(records[1][2] == "48.0");
  CHECK(records[1][15] == "0.0012");  // stolen_share, every digit
  CHECK(records[2].back() == "pin failed, \"EINVAL\"");
  CHECK_THAT(csv, Catch::Contains("\"pin failed, \"\"EINVAL\"\"\""));
}

TEST_CASE("gap json: numbers are numbers, kept interruptions on request, text escaped", "[report]") {
  GapReport r = sample_report();
  r.cpus[1].error = "quote \" and\nnewline";
  const Json with = Json::parse(format_report_json(r, true));
  CHECK(with["counter"]["hertz"] == 2.4e9);
  CHECK(with["duration_seconds"] == 10.0);
  const Json& cpu = with["cpus"][0];
  CHECK(cpu["cpu"] == 3);
  CHECK(cpu["samples"].is_number_integer());
  CHECK(cpu["mean_ns"].is_number_float());
  CHECK(cpu["stolen_share"] == 0.0012);
  CHECK(cpu["kept_interruptions"] == Json::parse("[[100,60000],[9000000,48000]]"));
  CHECK(with["cpus"][1]["error"] == "quote \" and\nnewline");
  CHECK_THAT(format_report_json(r, true), Catch::Contains("quote \\\" and\\nnewline"));
  CHECK_FALSE(Json::parse(format_report_json(r, false))["cpus"][0].contains("kept_interruptions"));
}

TEST_CASE("a probe report prints as aligned text, csv and json with numeric cells", "[report]") {
  const ProbeResult r = sample_probe_result();
  const std::string table = format_probe_table("kernel_cost", r);
  CHECK_THAT(table, Catch::Contains("probe kernel_cost\n\ncosts\n"));
  CHECK_THAT(table, Catch::Contains("op            samples  median_ns  late_ns\n"));
  CHECK_THAT(table, Catch::Contains("counter_read     1000        9.8        -\n"));
  CHECK_THAT(table, Catch::Contains("note: a \"quoted\" note"));
  CHECK(format_probe_csv(r) ==
        "op,samples,median_ns,late_ns\ncounter_read,1000,9.8,\nfork_wait,20,129011.04,5.5\n");

  const Json json = Json::parse(format_probe_json("kernel_cost", r));
  CHECK(json["probe"] == "kernel_cost");
  const Json& costs = json["tables"][0];
  CHECK(costs["columns"] == Json::parse(R"(["op","samples","median_ns","late_ns"])"));
  CHECK(costs["rows"][0][0] == "counter_read");
  CHECK(costs["rows"][0][1].is_number_integer());
  CHECK(costs["rows"][0][2] == 9.8);
  CHECK(costs["rows"][0][3].is_null());
  CHECK(costs["rows"][1][2] == 129011.04);
  CHECK(json["notes"][0] == "a \"quoted\" note");
}

TEST_CASE("several probe tables in one csv are separated by a blank line", "[report]") {
  ProbeResult r = sample_probe_result();
  r.tables.push_back({"second", {"k"}, {{"v"}}});
  CHECK_THAT(format_probe_csv(r), Catch::EndsWith("5.5\n\nk\nv\n"));
}

TEST_CASE("posture json and csv come from the same checks table", "[report]") {
  PostureReport report;
  report.sampled = {2, 3};
  report.cpus_setting = "auto";
  report.checks.push_back({"device_irqs",
                           3,
                           CheckStatus::fail,
                           "irq 45, \"mlx5\" may fire",
                           true,
                           {"echo 0-1 > /proc/irq/45/smp_affinity_list"}});
  report.checks.push_back({"smt", std::nullopt, CheckStatus::pass, "no sibling sampled", false, {}});
  const Json json = Json::parse(format_posture_json(report));
  CHECK(json["sampled"] == Json::parse("[2,3]"));
  CHECK(json["result"] == "FAIL");
  CHECK(json["counts"]["fail"] == 1);
  CHECK(
      json["checks"][0] ==
      Json::parse(
          R"({"status":"FAIL","check":"device_irqs","cpu":3,"reason":"irq 45, \"mlx5\" may fire","expectation":true,"fix":"echo 0-1 > /proc/irq/45/smp_affinity_list"})"));
  CHECK(json["checks"][1]["cpu"].is_null());
  const auto csv = read_csv(format_posture_csv(report));
  REQUIRE(csv.size() == 3);
  CHECK(csv[0] == std::vector<std::string>{"status", "check", "cpu", "reason", "expectation", "fix"});
  CHECK(csv[1] == std::vector<std::string>{"FAIL", "device_irqs", "3", "irq 45, \"mlx5\" may fire", "true",
                                           "echo 0-1 > /proc/irq/45/smp_affinity_list"});
  CHECK(csv[2][2] == "");
  CHECK(csv[2][5] == "");
}

TEST_CASE("posture script: the fixes of WARN and FAIL lines under comments, nothing for PASS", "[report]") {
  PostureReport report;
  report.sampled = {2, 3};
  report.checks.push_back({"device_irqs",
                           3,
                           CheckStatus::fail,
                           "irq 45 may fire",
                           true,
                           {"echo 0-1 > /proc/irq/45/smp_affinity_list", "# keep irqbalance away"}});
  report.checks.push_back({"thp", std::nullopt, CheckStatus::pass, "never", false, {"echo never"}});
  const std::string script = format_posture_script(report);
  CHECK_THAT(script, Catch::StartsWith("#!/bin/sh\n"));
  CHECK_THAT(script, Catch::Contains("jitterd never runs this"));
  CHECK_THAT(script, Catch::EndsWith("\n# FAIL device_irqs cpu 3: irq 45 may fire\n"
                                     "echo 0-1 > /proc/irq/45/smp_affinity_list\n# keep irqbalance away\n"));
  CHECK(script.find("echo never") == std::string::npos);
  report.checks.erase(report.checks.begin());
  CHECK_THAT(format_posture_script(report), Catch::EndsWith("# nothing to change: every line passed\n"));
}

namespace {
// Every byte value, each in a task name of its own between two letters, as a hostile /proc could
// hold them (the kernel's 15 bytes are no limit for a fixture tree or a future source).
std::vector<std::string> names_with_every_byte() {
  std::vector<std::string> names;
  for (int b = 0; b < 256; ++b) names.push_back(std::string("a") + static_cast<char>(b) + "z");
  names.push_back("\ntouch /tmp/Q #");           // the audit's task name
  names.push_back("\x1b]0;title\x07\x1b[2J\r");  // terminal title, clear screen, CR
  names.push_back(
      "x\xe2\x80\xae"
      "evil\xe2\x80\xa8"
      "next");              // a bidi override, a line separator
  names.push_back("\xc3");  // UTF-8 cut short
  return names;
}

bool is_plain_script_command(const std::string& line) {
  static const std::regex plain("[A-Za-z0-9 _.,:=+/-]+( > /(sys|proc)/[A-Za-z0-9_./-]+)?");
  return std::regex_match(line, plain);
}
}  // namespace

TEST_CASE("printable escapes what reorders or breaks a terminal line", "[report]") {
  CHECK(printable("a\xe2\x80\xae"
                  "b") == "a\\u202eb");  // right-to-left override
  CHECK(printable("a\xe2\x80\xa8"
                  "b") == "a\\u2028b");  // line separator
  CHECK(printable("a\xe2\x81\xa6"
                  "b") == "a\\u2066b");  // left-to-right isolate
  CHECK(printable("\x1b[31m\r\x7f") == "\\x1b[31m\\x0d\\x7f");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(printable_excerpt(std::string(100, 'x'), 60) == std::string(60, 'x') + "... (100 bytes)");
  CHECK(printable_excerpt(std::string(80, 'x'), 60) == std::string(80, 'x'));
  // Cut at a character boundary: never half of an "é".
  CHECK(printable_excerpt(std::string(59, 'x') + std::string(30, '\xc3') + "\xa9", 60)
            .starts_with(std::string(59, 'x') + "\\xc3"));
}

TEST_CASE("posture script: a task or IRQ name with any bytes stays inside one comment line", "[report]") {
  for (const std::string& name : names_with_every_byte()) {
    INFO("name bytes: " << printable(name));
    PostureReport report;
    report.sampled = {1};
    const std::string command = "taskset -a -p -c 0 " + name;  // as if a name ever reached a command
    report.checks.push_back({"stray_tasks",
                             1,
                             CheckStatus::fail,
                             "1 stray task(s) last ran on cpu 1: " + name + " (42)",
                             true,
                             {"taskset -a -p -c 0 42", "# " + name + " may also run there", command}});
    const std::string script = format_posture_script(report);
    const std::vector<std::string_view> lines = split_lines(script);
    std::size_t findings = 0, commands = 0;
    for (const std::string_view line : lines) {
      INFO("line: " << printable(line));
      for (const char c : line) CHECK((static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
      if (line.starts_with("# FAIL ")) ++findings;
      if (line.starts_with("#") || line.empty()) continue;
      ++commands;
      CHECK(is_plain_script_command(std::string(line)));
    }
    CHECK(findings == 1);
    // The plain command is written; the one holding the name only if the name is itself plain.
    CHECK(commands == (is_plain_script_command(command) ? 2u : 1u));
    CHECK(script.find("\ntaskset -a -p -c 0 42\n") != std::string::npos);
    CHECK(script.find("\ntouch") == std::string::npos);
  }
}

TEST_CASE("text tables and the posture table show names printable, one line per row", "[report]") {
  for (const std::string& name : names_with_every_byte()) {
    INFO("name bytes: " << printable(name));
    const ProbeTable table{"t", {"field", "before"}, {{Cell(std::string("kernel")), Cell(name)}}};
    const std::string text = table_text(table);
    CHECK(split_lines(text).size() == 2);
    for (const char c : text) CHECK((c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)));
    CHECK(text.find("\xe2\x80\xae") == std::string::npos);
    PostureReport report;
    report.sampled = {1};
    report.checks.push_back({"stray_tasks", 1, CheckStatus::fail, name, false, {"# " + name}});
    report.fingerprint.cmdline = name;
    const std::string checklist = format_posture_table(report);
    for (const char c : checklist) CHECK((c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)));
    CHECK(checklist.find("\xe2\x80\xae") == std::string::npos);
  }
}

TEST_CASE("utc_text: whole seconds rounded down, ISO 8601 UTC; nothing for an unknown time", "[report]") {
  CHECK(utc_text(1795710953.9) == "2026-11-26T16:35:53Z");
  CHECK(utc_text(1.0) == "1970-01-01T00:00:01Z");
  CHECK(utc_text(0) == "");
  CHECK(utc_text(-5) == "");
}
