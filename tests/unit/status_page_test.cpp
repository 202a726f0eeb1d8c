// SPDX-License-Identifier: Apache-2.0
// The status page, its JSON and the live baseline, on fixed readings: every text from the machine
// escaped, the JSON's numbers the ones /metrics exports, a baseline that reads back, the refresh
// parameter's bounds.
#include "export/status_page.h"
#include "export/live_baseline.h"
#include "probes/watch_glance.h"
#include "probes/watch_top.h"
#include "report/baseline_reader.h"
#include "report/baseline_recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include <catch2/catch.hpp>

#include "probes/probe_registry.h"
#include "report/html.h"

namespace jitterd {
namespace {

const TickScale scale(2e9);  // one tick is 0.5 ns
const std::string hostile = "<script>alert(\"x\")</script>&'";

HistogramSnapshot gaps(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> ticks_and_counts) {
  HistogramSnapshot s;
  for (const auto& [ticks, count] : ticks_and_counts) s.counts[histogram_bucket_index(ticks)] += count;
  return s;
}

// Two window steps of one sampler on CPU 3: 20 ns gaps, and 1 us and 100 us interruptions.
std::vector<WindowPart> parts() {
  WindowPart a{{gaps({{40, 1000}, {2000, 5}}), 40'000 + 10'000, 5, 10'000}};
  WindowPart b{{gaps({{40, 2000}, {200000, 1}}), 80'000 + 200'000, 1, 200'000}};
  return {a, b};
}

StatusSnapshot snapshot() {
  StatusSnapshot s;
  s.build = {"1.0" + hostile, "rev", "x86_64", "gcc"};
  s.hostname = "lab<1>";
  s.unix_seconds = 1.7e9 + 10;
  s.frequency = {2e9, "test" + hostile, 0};
  SamplerReading r;
  r.settings.cpu = 3;
  r.settings.scale = scale;
  r.startup = {0, true, true, 0, 40, 800, {}, "", "", ""};  // floor 20 ns, threshold 400 ns
  r.up = true;
  r.sampling = true;
  for (const WindowPart& p : parts()) r.window_detail.gaps.add(p.added.gaps);
  r.window_detail.sequence = 7;
  r.window_detail.end_unix_seconds = 1.7e9 + 9;
  r.window_detail.interruptions = 6;
  r.window_detail.interrupted_ticks = 210'000;
  r.window_detail.summary = summarize(r.window_detail.gaps, 200000, scale);
  r.window_detail.summary.valid = true;
  r.window_detail.summary.span_seconds = 2;
  s.samplers.push_back(r);
  SamplerReading broken;
  broken.settings.cpu = 5;
  broken.startup.error = "cannot pin: " + hostile;
  s.samplers.push_back(broken);

  ProbeStatus posture("posture");
  posture.ran = posture.success = true;
  posture.last_run_unix_seconds = 1.7e9 + 4;
  MachineReading machine;
  machine.facts.fingerprint.bios_vendor = hostile;
  machine.facts.hostname = "lab<1>";
  machine.facts.governors = {{3, "performance"}};
  machine.facts.clocksource = "tsc";
  machine.since_unix_seconds = 1.7e9;
  posture.result.machine = machine;
  posture.result.tables.push_back({"isolation checklist",
                                   {"status", "check", "cpu", "reason"},
                                   {{"FAIL", "irq " + hostile, 3, hostile}},
                                   TableShape::checklist});
  posture.result.notes.push_back("note " + hostile);
  s.probes.push_back(std::make_shared<const ProbeStatus>(posture));
  ProbeStatus failed("clock");
  failed.ran = true;
  failed.error = "failed: " + hostile;
  s.probes.push_back(std::make_shared<const ProbeStatus>(failed));
  return s;
}

}  // namespace

TEST_CASE("the status page escapes everything from the machine and links its paths", "[status_page]") {
  const std::string page = status_html(snapshot(), "/m", 0);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;") != std::string::npos);
  CHECK(page.find("href=\"/m\"") != std::string::npos);
  CHECK(page.find("<title>lab&lt;1&gt;: jitterd status</title>") != std::string::npos);
  CHECK(page.find("href=\"/status.json\"") != std::string::npos);
  CHECK(page.find("href=\"/baseline.json\"") != std::string::npos);
  CHECK(page.find("Content-Security-Policy") != std::string::npos);
  CHECK(page.find("http-equiv=\"refresh\"") == std::string::npos);
  CHECK(page.find("<td class=\"fail\">FAIL</td>") != std::string::npos);
  CHECK(page.find("data-sequence=\"7\"") != std::string::npos);
  CHECK(page.find("<svg") != std::string::npos);  // the exceedance plot of cpu 3
  // p99 of cpu 3: 1000 + 5 + 2000 + 1 gaps, rank 2977 is a 20 ns gap (bucket edge 20.5 ns).
  const double p99 = ns_to_seconds(snapshot().samplers[0].window_detail.summary.p99_ns);
  CHECK(p99 == Approx(20.5e-9));
  CHECK(page.find("id=\"cpu3-p99\">" + fmt::format("{:.3f}", p99 * 1e6) + "<") != std::string::npos);
  CHECK(page.find("id=\"cpu3-max\">100.000<") != std::string::npos);
  const std::string refreshing = status_html(snapshot(), "/m", 10);
  CHECK(refreshing.find("http-equiv=\"refresh\" content=\"10\"") != std::string::npos);
}

TEST_CASE("the status JSON holds the window figures /metrics exports", "[status_page]") {
  const StatusSnapshot s = snapshot();
  const Json j = status_json(s, "/m");
  CHECK(j["format"] == "jitterd-status");
  CHECK(j["window"]["sequence"] == 7);
  REQUIRE(j["cpus"].size() == 2);
  const Json& cpu = j["cpus"][0];
  CHECK(cpu["cpu"] == 3);
  CHECK(cpu["window"]["p99_seconds"].get<double>() == ns_to_seconds(s.samplers[0].window_detail.summary.p99_ns));
  CHECK(cpu["window"]["p99_99_seconds"].get<double>() ==
        ns_to_seconds(s.samplers[0].window_detail.summary.p9999_ns));
  CHECK(cpu["window"]["max_seconds"].get<double>() == Approx(100e-6));
  CHECK(cpu["window"]["interruptions_per_second"].get<double>() == Approx(3));
  CHECK(cpu["window"]["stolen_ratio"].get<double>() == Approx(105e-6 / 2));
  CHECK(cpu["interruption_threshold_seconds"].get<double>() == Approx(400e-9));
  CHECK(j["cpus"][1]["window"].is_null());
  CHECK(j["cpus"][1]["error"] == "cannot pin: " + hostile);  // JSON keeps the text; it is not HTML
  CHECK(j["probes"][0]["age_seconds"].get<double>() == Approx(6));
  CHECK(j["probes"][1]["success"] == false);
  CHECK(j["fingerprint"]["fields"]["bios_vendor"] == hostile);
  CHECK(j["fingerprint"]["since_unix_seconds"].get<double>() == 1.7e9);
}

namespace {

// The loops probe's last run: one loop up over a 2 s window (10,000 gaps of 50 ns, 2 of 100 us at
// 1 GHz), one down, and a refused segment, with text from outside in every field it can reach.
StatusSnapshot with_loops() {
  StatusSnapshot s = snapshot();
  ProbeStatus loops("loops");
  loops.ran = loops.success = true;
  loops.last_run_unix_seconds = 1.7e9 + 9;
  const TickScale ns(1e9);
  LoopsReading reading{.directory = "/dev/shm/" + hostile};
  LoopView rx{.file = "jitterd-loop.rx0",
              .loop = "rx0",
              .cpu = 2,
              .labels = {{"nic", hostile}},
              .pid = 4242,
              .up = true,
              .last_seen_unix_seconds = 1.7e9 + 8.5,
              .warmed_up = true,
              .ns_per_tick = 1,
              .gaps = 50'000,
              .interruptions = 7,
              .stolen_seconds = 700e-6};
  rx.window_gaps = gaps({{50, 10'000}, {100'000, 2}});
  rx.window = summarize(rx.window_gaps, 100'000, ns);
  rx.window.span_seconds = 2;
  set_counted(rx.window, 0, 2, 200'000, ns);
  set_limits(rx.window, 50, 1000, ns);
  reading.loops.push_back(rx);
  LoopView gone{.file = "jitterd-loop.gone", .loop = "gone", .cpu = 1, .pid = 17, .why = "writer gone " + hostile};
  reading.loops.push_back(gone);
  reading.refused.push_back({"jitterd-loop.bad", "magic", "magic 0x" + hostile});
  loops.result.loops = reading;
  s.probes.push_back(std::make_shared<const ProbeStatus>(loops));
  return s;
}

}  // namespace

TEST_CASE("the status page shows each loop as a sampled CPU, and the refused segments with why", "[status_page]") {
  const StatusSnapshot s = with_loops();
  const std::string page = status_html(s, "/m", 0);
  CHECK(page.find("<script") == std::string::npos);
  const auto section = page.find("<h2>Loops (the applications&#39; own)</h2>");
  REQUIRE(section != std::string::npos);
  CHECK(section > page.find("<h2>Samplers</h2>"));
  CHECK(section < page.find("<h2>Probes</h2>"));
  CHECK(page.find("id=\"probe-loops\"", section) != std::string::npos);
  // Its own section, not also listed among the probes.
  CHECK(page.find("id=\"probe-loops\"", page.find("<h2>Probes</h2>")) == std::string::npos);
  const double p99 = ns_to_seconds(s.probes.back()->result.loops->loops[0].window.p99_ns);
  CHECK(p99 == Approx(51e-9));  // rank 9901 of 10,002 is a 50 ns gap: its bucket's upper edge
  CHECK(page.find("id=\"loop-rx0-p99\">" + fmt::format("{:.3f}", p99 * 1e6) + "<") != std::string::npos);
  CHECK(page.find("id=\"loop-rx0-max\">100.000<") != std::string::npos);
  CHECK(page.find("id=\"loop-rx0-interruptions\">1.00<") != std::string::npos);
  CHECK(page.find("id=\"loop-rx0-stolen\">0.0100<") != std::string::npos);  // 200 us of 2 s
  CHECK(page.find("id=\"loop-rx0-floor\">0.050<") != std::string::npos);
  CHECK(page.find("id=\"loop-rx0-threshold\">1.000<") != std::string::npos);
  CHECK(page.find("id=\"loop-rx0-last-seen\">1.5<") != std::string::npos);
  CHECK(page.find("id=\"loop-rx0-plot\"") != std::string::npos);
  CHECK(page.find("nic=" + html_escape(hostile)) != std::string::npos);
  // The loop that is down: no window, its reason; no plot without gaps.
  CHECK(page.find("<tr id=\"loop-gone\">") != std::string::npos);
  CHECK(page.find("id=\"loop-gone-last-seen\">never<") != std::string::npos);
  CHECK(page.find(html_escape("writer gone " + hostile)) != std::string::npos);
  CHECK(page.find("id=\"loop-gone-plot\"") == std::string::npos);
  CHECK(page.find("<td>jitterd-loop.bad</td><td>magic</td>") != std::string::npos);
  CHECK(page.find(html_escape("magic 0x" + hostile)) != std::string::npos);
  CHECK(page.find("2 loops and 1 refused segment in <code>/dev/shm/" + html_escape(hostile)) != std::string::npos);
}

TEST_CASE("the loops' section opens with each loop's headline and lists who took its interruptions",
          "[status_page]") {
  StatusSnapshot s = with_loops();
  ProbeStatus loops = *s.probes.back();
  ProbeTable glance = loop_glance_table();
  add_loop_glance_row(glance, "rx0", 2, loops.result.loops->loops[0].window, nullptr);
  loops.result.loops->glance = glance;
  TopTally top;
  top.rows.push_back({preempter_key("evil<b>", "stray"), {3, 300'000, 0, 0}, 1, 1});
  top.total = {3, 300'000};
  ProbeTable who = preempters_table("who preempted the loops", {"loop", "cpu"});
  add_preempter_rows(who, {Cell("rx0"), Cell(2)}, "window", top, HostReader("/nonexistent", "/nonexistent"),
                     "(unnamed)");
  loops.result.loops->who = {who};
  s.probes.back() = std::make_shared<const ProbeStatus>(loops);
  const std::string page = status_html(s, "/m", 0);
  const auto section = page.find("id=\"probe-loops\"");
  const auto headline = page.find(std::string(kLoopGlanceTitle), section);
  REQUIRE(headline != std::string::npos);
  CHECK(headline < page.find("<table id=\"loops\">", section));  // at the top of the section
  CHECK(page.find("<td>evil&lt;b&gt;</td>", section) != std::string::npos);
  CHECK(page.find("<b>", section) == std::string::npos);
}

TEST_CASE("the status JSON holds each loop's window figures and the refused segments", "[status_page]") {
  const StatusSnapshot s = with_loops();
  const Json j = status_json(s, "/m");
  REQUIRE(j["loops"].is_object());
  CHECK(j["loops"]["directory"] == "/dev/shm/" + hostile);
  REQUIRE(j["loops"]["loops"].size() == 2);
  const Json& rx = j["loops"]["loops"][0];
  const CpuFigures& f = s.probes.back()->result.loops->loops[0].window;
  CHECK(rx["loop"] == "rx0");
  CHECK(rx["cpu"] == 2);
  CHECK(rx["labels"]["nic"] == hostile);
  CHECK(rx["up"] == true);
  CHECK(rx["pid"] == 4242);
  CHECK(rx["gaps"] == 50'000);
  CHECK(rx["interruptions"] == 7);
  CHECK(rx["stolen_seconds"].get<double>() == Approx(700e-6));
  CHECK(rx["loop_floor_seconds"].get<double>() == Approx(50e-9));
  CHECK(rx["interruption_threshold_seconds"].get<double>() == Approx(1e-6));
  CHECK(rx["last_seen_unix_seconds"].get<double>() == 1.7e9 + 8.5);
  CHECK(rx["window"]["p99_seconds"].get<double>() == ns_to_seconds(f.p99_ns));
  CHECK(rx["window"]["max_seconds"].get<double>() == Approx(100e-6));
  CHECK(rx["window"]["interruptions_per_second"].get<double>() == Approx(1));
  CHECK(rx["window"]["stolen_ratio"].get<double>() == Approx(100e-6));
  const Json& gone = j["loops"]["loops"][1];
  CHECK(gone["up"] == false);
  CHECK(gone["error"] == "writer gone " + hostile);
  CHECK(gone["window"].is_null());
  CHECK(gone["last_seen_unix_seconds"].is_null());
  CHECK(gone["loop_floor_seconds"].is_null());
  REQUIRE(j["loops"]["refused"].size() == 1);
  CHECK(j["loops"]["refused"][0]["reason"] == "magic");
  CHECK(j["loops"]["refused"][0]["why"] == "magic 0x" + hostile);
  CHECK(status_json(snapshot(), "/m")["loops"].is_null());  // no loops probe
}

TEST_CASE("a sampler off its CPU: the JSON's error and the page's note say which CPU, since when and why",
          "[status_page]") {
  StatusSnapshot s = snapshot();
  SamplerReading& r = s.samplers[0];
  r.up = false;
  r.off_cpu = true;
  r.off_cpu_since = 1.7e9;  // 2023-11-14T22:13:20Z
  r.pin_error = EINVAL;
  const std::string offline =
      "cpu 3 is offline (or outside this process's cpuset): the sampler cannot pin itself to it since "
      "2023-11-14T22:13:20Z; not sampled meanwhile, retrying every 250 ms";
  const Json j = status_json(s, "/metrics");
  CHECK(j["cpus"][0]["error"] == offline);
  CHECK(j["cpus"][0]["up"] == false);
  CHECK(j["cpus"][0]["pinned"] == false);
  CHECK(status_html(s, "/metrics", 0).find(html_escape(offline)) != std::string::npos);
  r.pin_error = EPERM;
  CHECK(status_json(s, "/metrics")["cpus"][0]["error"] ==
        "the sampler cannot pin itself back to cpu 3 (Operation not permitted) since 2023-11-14T22:13:20Z; not "
        "sampled meanwhile, retrying every 250 ms");
  r.pin_error = 0;
  r.off_cpu_since = 0;
  CHECK(status_json(s, "/metrics")["cpus"][0]["error"] ==
        "the sampler was moved off cpu 3; not sampled meanwhile, retrying every 250 ms");
  r.off_cpu = false;
  CHECK(status_json(s, "/metrics")["cpus"][0]["error"] == "");
}

TEST_CASE("a live baseline holds the window's gaps and steps and reads back", "[status_page]") {
  const StatusSnapshot s = snapshot();
  WindowParts window{s.samplers[0].window_detail, parts()};
  const Baseline b = live_baseline(s, {window, WindowParts{}});
  REQUIRE(b.cpus.size() == 2);
  const BaselineCpu& c = b.cpus[0];
  CHECK(c.error.empty());
  CHECK(c.samples == 3006);
  CHECK(c.sub_windows.size() == 2);
  CHECK(c.interruptions == 6);
  CHECK(c.stolen_seconds == Approx(105e-6));
  CHECK(c.max_ns == Approx(100'000));
  CHECK(c.histogram.counts == s.samplers[0].window_detail.gaps.counts);
  CHECK(b.cpus[1].error == "cannot pin: " + hostile);
  CHECK(b.sub_window_seconds == kSubWindowSeconds);
  CHECK(b.duration_seconds == 2);
  const Baseline back = baseline_from_json(baseline_json(b), "test");
  CHECK(back.cpus[0].sub_windows.size() == 2);
  CHECK(back.cpus[0].histogram.counts == c.histogram.counts);
  CHECK(back.fingerprint == b.fingerprint);
  CHECK(std::find(b.fingerprint.begin(), b.fingerprint.end(),
                  std::pair<std::string, std::string>{"hostname", "lab<1>"}) != b.fingerprint.end());
  // The posture probe's typed reading, by the one recipe: every field a file records.
  CHECK(b.fingerprint == baseline_fingerprint(s.probes[0]->result.machine->facts));
  CHECK(field_value(b.fingerprint, "governor") == "performance");
  CHECK(field_value(b.configuration, kFingerprintUnknownKey).empty());
}

TEST_CASE("a live baseline before the posture probe ran knows the hostname only, and says so", "[status_page]") {
  StatusSnapshot s = snapshot();
  s.probes.erase(s.probes.begin());
  const Baseline b = live_baseline(s, {});
  REQUIRE(b.fingerprint.size() == 1);
  CHECK(b.fingerprint[0] == std::pair<std::string, std::string>{"hostname", "lab<1>"});
  CHECK(field_value(b.configuration, kFingerprintUnknownKey).find("kernel, cmdline") == 0);
  CHECK(field_value(b.configuration, kFingerprintUnknownKey).find("the posture probe had not run") !=
        std::string::npos);
}

TEST_CASE("refresh is a whole number of seconds, bounded; 0 is off", "[status_page]") {
  CHECK(parse_refresh("0") == 0);
  CHECK(parse_refresh("10") == 10);
  CHECK(parse_refresh("1") == kMinRefreshSeconds);
  CHECK(parse_refresh("100000") == kMaxRefreshSeconds);
  CHECK(parse_refresh("99999999999999999999") == kMaxRefreshSeconds);
  CHECK_FALSE(parse_refresh(""));
  CHECK_FALSE(parse_refresh("-5"));
  CHECK_FALSE(parse_refresh("5s"));
  CHECK_FALSE(parse_refresh("x"));
}

TEST_CASE("a probe with a section of its own (the watch) sits under its heading after the samplers",
          "[status_page]") {
  StatusSnapshot s = snapshot();
  const ProbeFacts* facts = probe_facts("watch");
  REQUIRE(facts != nullptr);
  REQUIRE_FALSE(facts->status_heading.empty());
  ProbeStatus watch("watch");
  watch.ran = watch.success = true;
  watch.result.tables.push_back(
      {"watched CPUs, the last window (bpf)", {"cpu", "stolen_share"}, {{2, Cell(0.5, 3)}}});
  s.probes.push_back(std::make_shared<const ProbeStatus>(watch));
  const std::string page = status_html(s, "/m", 0);
  const auto own = page.find("<h2>" + html_escape(facts->status_heading) + "</h2>");
  const auto samplers = page.find("<h2>Samplers</h2>"), probes = page.find("<h2>Probes</h2>");
  REQUIRE(own != std::string::npos);
  CHECK(samplers < own);
  CHECK(own < probes);
  const auto section = page.find("id=\"probe-watch\"");
  CHECK(section > own);
  CHECK(section < probes);
  CHECK(page.find("id=\"probe-watch\"", probes) == std::string::npos);  // once, not among the probes too
  CHECK(page.find("id=\"probe-posture\"") > probes);
}

}  // namespace jitterd
