// SPDX-License-Identifier: Apache-2.0
// report --from's reader of a daemon's /status.json: what status_json writes reads back into the
// same figures (the window's percentiles, the probes' tables, the loops' rows), every table a
// section holds comes out whatever its title, and an answer that is not a status page, a field
// that is missing or of the wrong kind, an HTTP error or a topic the daemon does not run is a
// BaselineError naming the URL and what was wrong.
#include "report/status_reader.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "cli/command_line.h"
#include "cli/report_from.h"
#include "export/status_page.h"
#include "report/baseline_file.h"

namespace jitterd {
// Named, not anonymous: the unity build puts this file beside status_page_test.cpp's helpers.
namespace status_reader_test {

const std::string kUrl = "http://127.0.0.1:9978/status.json";
const TickScale scale(2e9);

HistogramSnapshot gaps(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> ticks_and_counts) {
  HistogramSnapshot s;
  for (const auto& [ticks, count] : ticks_and_counts) s.counts[histogram_bucket_index(ticks)] += count;
  return s;
}

// One sampled CPU (3) over a 2 s window, one that is not sampled (5), the watch probe with two
// tables (one a newer daemon might add), a failed clock probe, and the loops probe with one loop.
StatusSnapshot snapshot() {
  StatusSnapshot s;
  s.build = {"9.8.7", "rev", "x86_64", "gcc"};
  s.hostname = "lab1";
  s.unix_seconds = 1.7e9 + 10;
  s.frequency = {2e9, "cpuid", 0};
  SamplerReading r;
  r.settings.cpu = 3;
  r.settings.scale = scale;
  r.settings.window = std::chrono::seconds(10);
  r.startup = {0, true, true, 0, 40, 800, {}, "", "", ""};
  r.up = r.sampling = true;
  r.window_detail.gaps = gaps({{40, 3000}, {2000, 5}, {200000, 1}});
  r.window_detail.sequence = 7;
  r.window_detail.summary = summarize(r.window_detail.gaps, 200000, scale);
  r.window_detail.summary.valid = true;
  r.window_detail.summary.span_seconds = 2;
  s.samplers.push_back(r);
  SamplerReading broken;
  broken.settings.cpu = 5;
  broken.settings.window = std::chrono::seconds(10);
  broken.startup.error = "cannot pin";
  s.samplers.push_back(broken);
  ProbeStatus watch("watch");
  watch.ran = watch.success = true;
  watch.last_run_unix_seconds = 1.7e9 + 8;
  watch.duration_seconds = 0.002;
  watch.result.tables.push_back(
      {"the application's threads on watched CPUs", {"cpu", "tid", "comm"}, {{2, 4242, "engine"}}});
  watch.result.tables.push_back({"top preempters (a table this reader has never heard of)",
                                 {"cpu", "comm", "count"},
                                 {{2, "kworker/2:1", 17}}});
  watch.result.notes.push_back("method: counts");
  s.probes.push_back(std::make_shared<const ProbeStatus>(watch));
  ProbeStatus clock("clock");
  clock.ran = true;
  clock.error = "calibration failed";
  s.probes.push_back(std::make_shared<const ProbeStatus>(clock));
  ProbeStatus never("pacing");
  s.probes.push_back(std::make_shared<const ProbeStatus>(never));
  ProbeStatus loops("loops");
  loops.ran = loops.success = true;
  loops.last_run_unix_seconds = 1.7e9 + 9;
  LoopsReading reading{.directory = "/dev/shm"};
  LoopView rx{.file = "jitterd-loop.rx0",
              .loop = "rx0",
              .cpu = 2,
              .labels = {{"nic", "eth0"}},
              .pid = 4242,
              .up = true,
              .last_seen_unix_seconds = 1.7e9 + 8.5,
              .warmed_up = true,
              .ns_per_tick = 1,
              .gaps = 50'000,
              .interruptions = 7,
              .stolen_seconds = 700e-6};
  const TickScale ns(1e9);
  rx.window_gaps = gaps({{50, 10'000}, {100'000, 2}});
  rx.window = summarize(rx.window_gaps, 100'000, ns);
  rx.window.span_seconds = 2;
  set_counted(rx.window, 0, 2, 200'000, ns);
  set_limits(rx.window, 50, 1000, ns);
  reading.loops.push_back(rx);
  reading.refused.push_back({"jitterd-loop.bad", "magic", "magic 0x00"});
  loops.result.loops = reading;
  loops.result.tables.push_back({"loop probes in /dev/shm", {"file", "loop"}, {{"jitterd-loop.rx0", "rx0"}}});
  s.probes.push_back(std::make_shared<const ProbeStatus>(loops));
  return s;
}

std::string status_text(const StatusSnapshot& s) { return status_json(s, "/metrics").dump(2); }

// The BaselineError's exit code and message of `f`, or (0, "") when it throws none.
template <typename F>
std::pair<int, std::string> refusal(F f) {
  try {
    f();
  } catch (const BaselineError& e) {
    return {e.exit_code(), e.what()};
  }
  return {0, ""};
}

const ProbeTable* table_titled(const StatusTopic& topic, std::string_view start) {
  for (const ProbeTable& t : topic.tables)
    if (t.title.rfind(start, 0) == 0) return &t;
  return nullptr;
}

std::size_t column(const ProbeTable& t, std::string_view name) {
  return static_cast<std::size_t>(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
}

TEST_CASE("report --from gaps reads the daemon's window figures back exactly", "[status_reader]") {
  const StatusSnapshot s = snapshot();
  const Json document = parse_status_document(status_text(s), kUrl);
  const StatusTopic topic = status_topic(document, kUrl, "gaps", false);
  CHECK(topic.header.jitterd_version == "9.8.7");
  CHECK(topic.header.hostname == "lab1");
  CHECK(topic.header.window_seconds == 10);
  CHECK(topic.header.window_sequence == 7);
  REQUIRE(topic.tables.size() == 1);
  const ProbeTable& t = topic.tables[0];
  REQUIRE(t.rows.size() == 2);
  CHECK(cell_text(t.rows[0][column(t, "cpu")]) == "3");
  CHECK(t.rows[0][column(t, "p99_ns")].number == Approx(s.samplers[0].window_detail.summary.p99_ns));
  CHECK(t.rows[0][column(t, "max_ns")].number == Approx(100'000));
  CHECK(t.rows[0][column(t, "window_seconds")].number == 2);
  CHECK(cell_text(t.rows[1][column(t, "p99_ns")]) == "-");  // no window: none, not 0
  CHECK(cell_text(t.rows[1][column(t, "error")]) == "cannot pin");
  const std::string text = format_status_table(status_topic(document, kUrl, "gaps", true));
  CHECK(text.find("the running daemon's view, from " + kUrl + ": jitterd 9.8.7 on lab1") == 0);
  CHECK(text.find("rolling window of 10 s (update 7)") != std::string::npos);
  CHECK(text.find(fmt::format("{:.1f}", s.samplers[0].window_detail.summary.p99_ns)) != std::string::npos);
  const Json json = Json::parse(format_status_json(topic));
  CHECK(json["from"]["url"] == kUrl);
  CHECK(json["cpus"][0]["p99_ns"].get<double>() == Approx(s.samplers[0].window_detail.summary.p99_ns));
}

TEST_CASE("report --from PROBE prints every table the probe's entry holds, a new one too", "[status_reader]") {
  const Json document = parse_status_document(status_text(snapshot()), kUrl);
  const StatusTopic watch = status_topic(document, kUrl, "watch", true);
  REQUIRE(watch.tables.size() == 2);
  CHECK(table_titled(watch, "top preempters") != nullptr);
  CHECK(watch.notes == std::vector<std::string>{"method: counts"});
  CHECK(watch.failure.empty());
  CHECK(status_exit_code(watch) == 0);
  const std::string text = format_status_table(watch);
  CHECK(text.find("probe watch: last run") != std::string::npos);
  CHECK(text.find("(2 s before the page)") != std::string::npos);
  CHECK(text.find("kworker/2:1") != std::string::npos);
  CHECK(text.find("engine") != std::string::npos);
  const StatusTopic clock = status_topic(document, kUrl, "clock", true);
  CHECK(clock.failure == "calibration failed");
  CHECK(status_exit_code(clock) == 1);
  CHECK(format_status_table(clock).find("the last run failed: calibration failed") != std::string::npos);
}

TEST_CASE("report --from loops holds each loop's window figures and the probe's tables", "[status_reader]") {
  const StatusSnapshot s = snapshot();
  const Json document = parse_status_document(status_text(s), kUrl);
  const StatusTopic loops = status_topic(document, kUrl, "loops", false);
  const ProbeTable* window = table_titled(loops, "loops");
  REQUIRE(window != nullptr);
  REQUIRE(window->rows.size() == 1);
  const CpuFigures& f = s.probes.back()->result.loops->loops[0].window;
  CHECK(window->rows[0][column(*window, "p99_ns")].number == Approx(f.p99_ns));
  CHECK(window->rows[0][column(*window, "last_seen_seconds_ago")].number == Approx(1.5));
  CHECK(cell_text(window->rows[0][column(*window, "labels")]) == "nic=eth0");
  CHECK(table_titled(loops, "segments refused") != nullptr);
  CHECK(table_titled(loops, "loop probes in /dev/shm") != nullptr);
  CHECK(loops.lines.back() == "1 loop in /dev/shm");
}

TEST_CASE("report --from refuses what is not a daemon's status page, naming the URL and the field",
          "[status_reader]") {
  const auto topic_of = [](const std::string& text, const char* topic) {
    return [text, topic] { status_topic(parse_status_document(text, kUrl), kUrl, topic, true); };
  };
  auto [code, message] = refusal(topic_of("<html>login</html>", "gaps"));
  CHECK(code == 65);
  CHECK(message.find(kUrl + ": not JSON") == 0);
  CHECK(message.find("<html>login") != std::string::npos);
  std::tie(code, message) = refusal(topic_of(R"({"status": "success", "data": {}})", "gaps"));
  CHECK(code == 65);
  CHECK(message.find("not a jitterd's /status.json") != std::string::npos);
  Json newer = status_json(snapshot(), "/m");
  newer["format_version"] = "2.0";
  std::tie(code, message) = refusal(topic_of(newer.dump(), "gaps"));
  CHECK(message.find("version 2.0 is newer than this jitterd reads") != std::string::npos);
  // An older daemon without a field: its path and the daemon's version.
  Json old = status_json(snapshot(), "/m");
  old["cpus"][0]["window"].erase("p99_9_seconds");
  std::tie(code, message) = refusal(topic_of(old.dump(), "gaps"));
  CHECK(code == 65);
  CHECK(message ==
        kUrl +
            ": cpus[0].window: missing field \"p99_9_seconds\" (the daemon runs jitterd 9.8.7: one older "
            "than this jitterd, without it?)");
  Json wrong = status_json(snapshot(), "/m");
  wrong["probes"][0]["tables"][0]["rows"][0] = Json::array({1});
  std::tie(code, message) = refusal(topic_of(wrong.dump(), "watch"));
  CHECK(message == kUrl + ": probes[0].tables[0].rows: each row must be an array with one cell per column");
  // A topic the daemon does not run, or has not run yet: 69, saying so.
  std::tie(code, message) = refusal(topic_of(status_text(snapshot()), "c2c"));
  CHECK(code == 69);
  CHECK(message.find("the daemon runs no c2c probe (its probes: watch, clock, pacing, loops)") !=
        std::string::npos);
  std::tie(code, message) = refusal(topic_of(status_text(snapshot()), "pacing"));
  CHECK(code == 69);
  CHECK(message.find("has not run the pacing probe yet") != std::string::npos);
}

TEST_CASE("report --from names the HTTP status of an answer that is not the page", "[status_reader]") {
  auto [code, message] = refusal([] { status_document_from_answer(401, "Unauthorized", kUrl); });
  CHECK(code == 69);
  CHECK(message.find(kUrl + ": HTTP status 401") == 0);
  CHECK(message.find("--from-basic-auth-user") != std::string::npos);
  std::tie(code, message) = refusal([] { status_document_from_answer(404, "not found", kUrl); });
  CHECK(code == 69);
  CHECK(message.find("HTTP status 404: no status page there") != std::string::npos);
  std::tie(code, message) = refusal([] { status_document_from_answer(503, "busy\x1b[2J", kUrl); });
  CHECK(message.find("HTTP status 503: \"busy\\x1b[2J\"") != std::string::npos);
}

TEST_CASE("a fresh reading says so and where the daemon's view is", "[status_reader]") {
  WebConfig web;
  web.listen_address = ":9978";
  CHECK(daemon_url(web) == "http://127.0.0.1:9978");
  CHECK(fresh_reading_line("watch", web) ==
        "a fresh reading, taken now by this process (not the running daemon's); the running daemon's view: "
        "jitterd report watch --from http://127.0.0.1:9978\n");
  web.listen_address = "[::]:9100";
  web.security.tls = TlsServerConfig{};
  CHECK(daemon_url(web) == "https://[::1]:9100");
  CHECK(fresh_reading_line("gaps", web).find("jitterd report --from https://[::1]:9100 --from-ca-file") !=
        std::string::npos);
  web.listen_address = "127.0.0.1:0";
  CHECK_FALSE(daemon_url(web));
  CHECK(fresh_reading_line("loops", web).find("the port the daemon logged at start") != std::string::npos);
}

TEST_CASE("report --from: the page's URL from the daemon's, and the flags that need or refuse it",
          "[status_reader]") {
  const auto from = [](std::vector<std::string> args) { return parse_command_line(args).report_from; };
  CHECK(from({"report", "watch", "--from", "http://h:9978"}) == "http://h:9978/status.json");
  CHECK(from({"report", "--from", "https://proxy/jitterd/"}) == "https://proxy/jitterd/status.json");
  CHECK(from({"report", "--from", "http://h:9978/status.json"}) == "http://h:9978/status.json");
  const CommandLine tls = parse_command_line({"report", "--from", "https://h", "--from-ca-file", "ca.pem",
                                              "--from-timeout", "2s", "--from-max-bytes", "1MiB"});
  CHECK(tls.report_from_http.ca_file == "ca.pem");
  CHECK(tls.report_from_http.timeout_seconds == 2);
  CHECK(tls.report_from_http.max_body_bytes == (1u << 20));
  CHECK(tls.report_from_http.url_flag == "--from");
  CHECK(parse_command_line({"report", "--from", "http://h"}).report_from_http.max_body_bytes == kStatusMaxBytes);
  const auto usage = [](std::vector<std::string> args) {
    try {
      parse_command_line(args);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(usage({"report", "--from", "h:9978"}).find("must be an http:// or https:// URL") != std::string::npos);
  CHECK(usage({"report", "--from", "http://u:p@h"}).find("no user or password in the URL") != std::string::npos);
  CHECK(usage({"report", "--from-ca-file", "x"}) == "--from-ca-file: only with --from URL");
  CHECK(usage({"report", "--from", "http://h", "--from-ca-file", "x"}).find("only with --from https://") !=
        std::string::npos);
  CHECK(usage({"report", "--from", "http://h", "--save", "f"}).find("--save: not with --from") !=
        std::string::npos);
  CHECK(usage({"report", "c2c", "--from", "http://h", "--cpus", "0,1"}).find("--cpus: not with --from") !=
        std::string::npos);
  CHECK(usage({"report", "posture", "--from", "http://h", "--format", "script"})
            .find("--format script: not with --from") != std::string::npos);
  CHECK(usage({"report", "--from", "http://h", "--from-cert-file", "c"}).find("give both or neither") !=
        std::string::npos);
}

}  // namespace status_reader_test
}  // namespace jitterd
