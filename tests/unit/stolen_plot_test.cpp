// SPDX-License-Identifier: Apache-2.0
// The stolen-time plot of a watched CPU or loop: the series' bounds (a point per reading or per
// step, the window's, the cap whatever the readings), the watch's causes adding up to its stolen
// time, the SVG's bands as high as the figures fed to it, names escaped, and the status page and
// /status.json carrying one plot per watched CPU.
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <regex>

#include "export/status_page.h"
#include "probes/stolen_plots.h"
#include "probes/watch_window.h"
#include "report/baseline_file.h"
#include "report/html.h"
#include "report/status_reader.h"
#include "report/stolen_plot.h"
#include "report/stolen_table.h"

namespace jitterd {
namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;

StolenNs stolen_of(std::initializer_list<std::pair<std::string_view, std::uint64_t>> causes) {
  StolenNs out{};
  for (const auto& [cause, ns] : causes) out[*stolen_cause_index(cause)] = ns;
  return out;
}

std::uint64_t total_of(const StolenSeries& series, std::string_view cause) {
  std::uint64_t sum = 0;
  for (const StolenPoint& p : series.points()) sum += p.stolen[*stolen_cause_index(cause)];
  return sum;
}

// Each <g data-cause="NAME">'s rects as (x, y, width, height).
std::map<std::string, std::vector<std::array<double, 4>>> bands_of(const std::string& svg) {
  std::map<std::string, std::vector<std::array<double, 4>>> out;
  const std::regex group("<g fill=\"[^\"]+\" data-cause=\"([a-z_]+)\">(.*?)</g>");
  const std::regex rect("<rect x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9.]+)\" height=\"([0-9.]+)\"/>");
  for (std::sregex_iterator g(svg.begin(), svg.end(), group), end; g != end; ++g) {
    const std::string rects = (*g)[2];
    for (std::sregex_iterator r(rects.begin(), rects.end(), rect); r != end; ++r)
      out[(*g)[1]].push_back({std::stod((*r)[1]), std::stod((*r)[2]), std::stod((*r)[3]), std::stod((*r)[4])});
  }
  return out;
}

}  // namespace

TEST_CASE("stolen series: a point per reading at the default window, its causes as fed", "[stolen]") {
  StolenSeries series(60 * kSecond);
  CHECK(series.step_ns() == kSecond);
  for (std::uint64_t i = 1; i <= 200; ++i)
    series.add(1000 * kSecond + i * kSecond, kSecond, stolen_of({{"preempted", i}, {"timer", 2 * i}}));
  // The window's readings only: the last 60 and the one that straddles its start.
  REQUIRE(series.points().size() <= 61);
  CHECK(series.points().size() >= 60);
  CHECK(series.points().back().end_ns == 1200 * kSecond);
  CHECK(series.points().front().end_ns + 60 * kSecond >= series.points().back().end_ns);
  for (const StolenPoint& p : series.points()) {
    CHECK(p.covered_ns == kSecond);
    CHECK(p.stolen[*stolen_cause_index("timer")] == 2 * p.stolen[*stolen_cause_index("preempted")]);
  }
  CHECK(series.points().back().stolen[*stolen_cause_index("preempted")] == 200);
  // Out of order or empty readings change nothing.
  const std::deque<StolenPoint> before = series.points();
  series.add(1100 * kSecond, kSecond, stolen_of({{"preempted", 5}}));
  series.add(1300 * kSecond, 0, stolen_of({{"preempted", 5}}));
  CHECK(series.points() == before);
}

TEST_CASE(
    "stolen series: time beyond a reading began before it and goes back to the points before, as far as "
    "each has room",
    "[stolen]") {
  StolenSeries series(60 * kSecond);
  series.add(101 * kSecond, kSecond, stolen_of({{"timer", kSecond / 10}}));
  series.add(102 * kSecond, kSecond, stolen_of({{"preempted", kSecond / 2}}));
  // A preemption of 2.2 s booked when it ended, with 0.2 s of timer in the reading: 1.4 s over.
  series.add(103 * kSecond, kSecond, stolen_of({{"preempted", 2'200'000'000}, {"timer", 200'000'000}}));
  REQUIRE(series.points().size() == 3);
  const auto& p = series.points();
  for (const StolenPoint& point : p) {
    std::uint64_t sum = 0;
    for (std::uint64_t ns : point.stolen) sum += ns;
    CHECK(sum <= point.covered_ns);
  }
  // The newest point full, the one before it filled (0.5 s), the oldest given the last 0.9 s.
  CHECK(p[2].stolen[*stolen_cause_index("preempted")] + p[2].stolen[*stolen_cause_index("timer")] == kSecond);
  CHECK(p[1].stolen[*stolen_cause_index("preempted")] + p[1].stolen[*stolen_cause_index("timer")] == kSecond);
  CHECK(p[0].stolen[*stolen_cause_index("preempted")] + p[0].stolen[*stolen_cause_index("timer")] ==
        kSecond / 10 + 900'000'000);
  // Nothing lost, and each cause keeps its total: moved in proportion to the reading's causes.
  CHECK(total_of(series, "preempted") == kSecond / 2 + 2'200'000'000);
  CHECK(total_of(series, "timer") == kSecond / 10 + 200'000'000);
  CHECK(p[0].stolen[*stolen_cause_index("preempted")] >
        10 * (p[0].stolen[*stolen_cause_index("timer")] - kSecond / 10));
  // With no room before it, a reading keeps what it has: nothing is dropped.
  StolenSeries alone(60 * kSecond);
  alone.add(10 * kSecond, kSecond, stolen_of({{"preempted", 3 * kSecond}}));
  CHECK(total_of(alone, "preempted") == 3 * kSecond);
}

TEST_CASE("stolen series: an hour read every 100 ms holds a step's readings per point, not 36,000", "[stolen]") {
  StolenSeries series(3600 * kSecond);
  CHECK(series.step_ns() == 30 * kSecond);  // the hour in kStolenColumns steps
  const std::uint64_t interval = kSecond / 10;
  std::uint64_t fed = 0;
  for (std::uint64_t i = 1; i <= 2 * 36'000; ++i) {  // two hours
    series.add(i * interval, interval, stolen_of({{"softirq_net", 7}}));
    if (i * interval > 3600 * kSecond) fed += 7;
    REQUIRE(series.points().size() <= kMaxStolenPoints);
  }
  CHECK(series.points().size() <= kStolenColumns + 2);
  CHECK(series.points().size() >= kStolenColumns);
  // Nothing is lost inside the window: a point holds every reading it took.
  for (const StolenPoint& p : series.points())
    CHECK(p.stolen[*stolen_cause_index("softirq_net")] == 7 * (p.covered_ns / interval));
  CHECK(total_of(series, "softirq_net") >= fed - 7 * 300);  // at most the straddling point's readings differ
  CHECK(series.memory_bytes() <= sizeof(StolenSeries) + kMaxStolenPoints * sizeof(StolenPoint));
  CHECK(sizeof(StolenPoint) == 144);  // docs/watch.md: 35 KB per series at most
}

TEST_CASE("stolen series: a gap (the CPU offline) starts a new point; irregular readings stay capped",
          "[stolen]") {
  StolenSeries series(60 * kSecond);
  series.add(10 * kSecond, kSecond / 2, stolen_of({{"timer", 1}}));
  series.add(20 * kSecond, kSecond / 2, stolen_of({{"timer", 1}}));  // 9.5 s after the last ended
  REQUIRE(series.points().size() == 2);
  CHECK(series.points()[1].start_ns == 19 * kSecond + kSecond / 2);
  // Readings that alternate a nanosecond and a step: each its own point, and never more than the cap.
  StolenSeries odd(3600 * kSecond);
  std::uint64_t now = 0;
  for (int i = 0; i < 10'000; ++i) {
    const std::uint64_t length = i % 2 ? 1 : 31 * kSecond;
    odd.add(now += length, length, stolen_of({{"tlb", 1}}));
  }
  CHECK(odd.points().size() <= kMaxStolenPoints);
}

TEST_CASE("the watch's causes add up to its stolen time, every source booked to one", "[stolen]") {
  PairedReading before, now;
  before.cpus.push_back({});
  before.cpus[0].cpu = 3;
  before.cpus[0].sources.resize(watch_source_count());
  now = before;
  for (std::size_t s = 0; s < watch_source_count(); ++s) {
    REQUIRE(stolen_cause_index(watch_source_cause(s)));
    before.cpus[0].sources[s].ns = 100 * s;
    now.cpus[0].sources[s].ns = 100 * s + 1000 + s;
    now.cpus[0].sources[s].count = 1;
  }
  const StolenNs by_cause = paired_stolen_by_cause(now.cpus[0], before.cpus[0]);
  const std::vector<WatchWindow> windows = paired_windows(now, before, 1.0, 10'000, {});
  std::uint64_t sum = 0;
  for (std::uint64_t ns : by_cause) sum += ns;
  CHECK(static_cast<double>(sum) * 1e-9 == Approx(windows.at(0).stolen_seconds));
  CHECK(by_cause[*stolen_cause_index("not_attributed")] == 0);
  WatchedCpu was, is;
  was.wait_ns = 5'000;
  is.wait_ns = 12'000;
  CHECK(counts_stolen_by_cause(is, was) == stolen_of({{"preempted", 7'000}}));
}

TEST_CASE("the plot stacks one band per cause, each as high as its share of the reading", "[stolen]") {
  StolenPlot plot;
  plot.cpu = 3;
  plot.window_seconds = 60;
  plot.step_seconds = 1;
  // Three readings of 1 s ending at 100, 101 and 102 s: 2 ms preempted, 1 ms timer, 0.5 ms net in
  // the first; 4 ms preempted in the second; nothing in the third.
  const std::vector<std::array<double, 3>> figures = {{2e-3, 1e-3, 0.5e-3}, {4e-3, 0, 0}, {0, 0, 0}};
  for (std::size_t i = 0; i < figures.size(); ++i) {
    StolenPlotPoint p{99.0 + static_cast<double>(i), 100.0 + static_cast<double>(i), 1.0, {}};
    p.stolen_seconds[*stolen_cause_index("preempted")] = figures[i][0];
    p.stolen_seconds[*stolen_cause_index("timer")] = figures[i][1];
    p.stolen_seconds[*stolen_cause_index("softirq_net")] = figures[i][2];
    plot.points.push_back(p);
  }
  CHECK(stolen_plot_peak(plot) == Approx(4e-3));
  const std::string svg = stolen_plot_svg(plot);
  const auto bands = bands_of(svg);
  REQUIRE(bands.size() == 3);  // the causes with time, no band for the others
  REQUIRE(bands.at("preempted").size() == 2);
  REQUIRE(bands.at("timer").size() == 1);
  REQUIRE(bands.at("softirq_net").size() == 1);
  // The axis spans 0 to 0.5% (4 ms of 1 s rounded up to 5 x 10^-3): 180 px.
  const double px_per_share = 180 / 5e-3;
  const auto& preempted = bands.at("preempted");
  CHECK(preempted[0][3] == Approx(2e-3 * px_per_share).margin(0.01));
  CHECK(preempted[1][3] == Approx(4e-3 * px_per_share).margin(0.01));
  CHECK(bands.at("timer")[0][3] == Approx(1e-3 * px_per_share).margin(0.01));
  CHECK(bands.at("softirq_net")[0][3] == Approx(0.5e-3 * px_per_share).margin(0.01));
  // Stacked: timer on preempted, net on timer, in the same column; the bottom on the axis (y 214).
  CHECK(preempted[0][1] + preempted[0][3] == Approx(214).margin(0.02));
  CHECK(bands.at("timer")[0][1] + bands.at("timer")[0][3] == Approx(preempted[0][1]).margin(0.02));
  CHECK(bands.at("softirq_net")[0][1] + bands.at("softirq_net")[0][3] ==
        Approx(bands.at("timer")[0][1]).margin(0.02));
  CHECK(bands.at("timer")[0][0] == preempted[0][0]);
  // Each bar as wide as its reading: 1 s of 60 s over 560 px.
  CHECK(preempted[0][2] == Approx(560.0 / 60).margin(0.06));
  // Axes with units, and a legend entry per cause with its total.
  CHECK(svg.find("% of each reading taken") != std::string::npos);
  CHECK(svg.find("seconds before the last reading") != std::string::npos);
  CHECK(svg.find(">0.5%<") != std::string::npos);
  CHECK(svg.find("data-legend=\"preempted\">preempted 6 ms<") != std::string::npos);
  CHECK(svg.find("data-legend=\"softirq_net\">softirq_net 500 µs<") != std::string::npos);
  CHECK(svg.find("data-legend=\"timer\"") != std::string::npos);
}

TEST_CASE("the plot's caption names the worst preempters, every name escaped", "[stolen]") {
  const std::string hostile =
      "<script>&\xE2\x80\xAE"
      "evil";  // '<', '&' and U+202E, a bidi override
  TopTallies top(60 * kSecond);
  NameTally preempters(kPartNames), sources(kPartNames);
  preempters.add(preempter_key(hostile, "stray"), {3, 3'000'000, 41, 42});
  preempters.add(preempter_key("kworker/3:1", "kernel_percpu"), {1, 1'000'000, 0, 0});
  preempters.add_unnamed({5, 1'000'000});
  top.push(100 * kSecond, std::move(preempters), std::move(sources));
  StolenSeries series(60 * kSecond);
  series.add(100 * kSecond, kSecond, stolen_of({{"preempted", 5'000'000}}));
  const StolenPlot plot = stolen_plot(series, 3, "", &top, 1.7e9, "");
  REQUIRE(plot.preempters.size() == 2);
  CHECK(plot.preempters[0].task == hostile);
  CHECK(plot.preempted_seconds == Approx(5e-3));
  const std::string figure = stolen_plot_figure(plot, "stolen-cpu3");
  CHECK(figure.find("<script") == std::string::npos);
  CHECK(figure.find("\xE2\x80\xAE") == std::string::npos);  // the override shown, never applied
  CHECK(
      figure.find("<strong>&lt;script&gt;&amp;\\u202eevil</strong> (stray) 60.0% of the preempted time, 3 ms in 3 "
                  "preemptions") != std::string::npos);
  CHECK(figure.find("<strong>kworker/3:1</strong> (kernel_percpu) 20.0%") != std::string::npos);
  CHECK(figure.find("20.0% not named") != std::string::npos);
  // A loop's name goes through the same escaping, in the title and the id.
  StolenPlot loop = plot;
  loop.loop = "rx<0>";
  const std::string loop_figure = stolen_plot_figure(loop, "stolen-loop-rx<0>");
  CHECK(loop_figure.find("rx<0>") == std::string::npos);
  CHECK(loop_figure.find("loop rx&lt;0&gt; (cpu 3): time taken by cause") != std::string::npos);
}

TEST_CASE("the status page draws a plot per watched CPU and /status.json holds its points", "[stolen]") {
  StatusSnapshot s;
  s.unix_seconds = 1.7e9;
  ProbeStatus watch("watch");
  watch.ran = watch.success = true;
  watch.last_run_unix_seconds = 1.7e9;
  for (int cpu : {2, 3}) {
    StolenSeries series(60 * kSecond);
    series.add(10 * kSecond, kSecond, stolen_of({{"preempted", 2'000'000}, {"device_irq", 1'000}}));
    watch.result.stolen.push_back(stolen_plot(series, cpu, "", nullptr, 1.7e9 - 10, "counts: why"));
  }
  s.probes.push_back(std::make_shared<const ProbeStatus>(watch));
  const std::string page = status_html(s, "/metrics", 0);
  const auto section = page.find("id=\"probe-watch\"");
  REQUIRE(section != std::string::npos);
  CHECK(page.find("<figure class=\"stolen\" id=\"stolen-cpu2\">", section) != std::string::npos);
  CHECK(page.find("<figure class=\"stolen\" id=\"stolen-cpu3\">", section) != std::string::npos);
  CHECK(page.find("counts: why.</figcaption>", section) != std::string::npos);
  const Json j = status_json(s, "/metrics");
  const Json& stolen = j["probes"][0]["stolen"];
  REQUIRE(stolen.size() == 2);
  CHECK(stolen[0]["cpu"] == 2);
  CHECK(stolen[0]["loop"].is_null());
  CHECK(stolen[0]["window_seconds"] == 60);
  CHECK(stolen[0]["causes"] == Json::array({"preempted", "device_irq"}));
  REQUIRE(stolen[0]["points"].size() == 1);
  CHECK(stolen[0]["points"][0]["end_unix_seconds"] == Approx(1.7e9));
  CHECK(stolen[0]["points"][0]["seconds"] == Approx(1.0));
  CHECK(stolen[0]["points"][0]["stolen_seconds"] == Json::array({2e-3, 1e-6}));
  CHECK(stolen[0]["preempters_named"] == false);
  CHECK(stolen[0]["note"] == "counts: why");
}

TEST_CASE("report watch --from reads the plots back as a table with a sparkline; a wrong one is named",
          "[stolen]") {
  StatusSnapshot s;
  s.unix_seconds = 1.7e9;
  ProbeStatus watch("watch");
  watch.ran = watch.success = true;
  watch.last_run_unix_seconds = 1.7e9;
  watch.result.tables.push_back({"read this first", {"cpu"}, {{3}}});
  TopTallies top(60 * kSecond);
  NameTally preempters(kPartNames), sources(kPartNames);
  preempters.add(preempter_key("evil\x1b[2J", "stray"), {2, 6'000'000, 0, 0});
  top.push(4 * kSecond, std::move(preempters), std::move(sources));
  StolenSeries series(60 * kSecond);
  for (std::uint64_t i = 1; i <= 4; ++i)
    series.add(i * kSecond, kSecond, stolen_of({{"preempted", i == 3 ? 6'000'000 : 0}, {"timer", 1'000'000}}));
  watch.result.stolen.push_back(stolen_plot(series, 3, "", &top, 1.7e9 - 4, ""));
  s.probes.push_back(std::make_shared<const ProbeStatus>(watch));
  const std::string url = "http://127.0.0.1:9978/status.json";
  Json document = parse_status_document(json_text(status_json(s, "/metrics")), url);
  const StatusTopic topic = status_topic(document, url, "watch", true);
  REQUIRE(topic.tables.size() == 2);
  const ProbeTable& table = topic.tables[1];  // after the headline
  CHECK(table.title.rfind("stolen time over the window", 0) == 0);
  REQUIRE(table.rows.size() == 1);
  const std::vector<Cell>& row = table.rows[0];
  CHECK(row[0] == Cell(3));
  CHECK(row[1].kind == Cell::Kind::none);
  CHECK(row[3].number == Approx(10e-3 / 4));  // 10 ms of 4 s
  CHECK(row[4].number == Approx(7e-3));
  CHECK(row[5].text == "preempted");
  CHECK(row[6].text.find('\x1b') == std::string::npos);  // made printable
  CHECK(row[7].number == Approx(1.0));
  CHECK(row[8].text == "▂▂█▂");
  // A figure that is not a number is named by its path.
  document["probes"][0]["stolen"][0]["points"][1]["stolen_seconds"][0] = "x";
  try {
    status_topic(document, url, "watch", true);
    FAIL("a wrong figure was read");
  } catch (const BaselineError& e) {
    CHECK(e.exit_code() == kExitBadBaseline);
    CHECK(std::string(e.what()).find("probes[0].stolen[0].points[1].stolen_seconds[0]") != std::string::npos);
  }
}

}  // namespace jitterd
