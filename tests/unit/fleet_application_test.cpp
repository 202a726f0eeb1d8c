// SPDX-License-Identifier: Apache-2.0
// fleet's application side without a server (fleet/fleet_application.h, fleet/fleet_rows.h): the
// watched CPUs' and the loops' counters read at the range's two ends by the sampled CPUs' rules
// (exact increases; a fall, or a watch or loop that started again, reads the host in full), their
// figures per unit, the rows (worst and median watched CPU; a loop's one value per host, matched by
// name), the hosts and rows absent and why, a watched effect and a drifted loop found, and hostile
// loop names bounded and inert in every format.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "fleet/fleet_application.h"
#include "fleet/fleet_ends.h"
#include "fleet/fleet_report.h"
#include "fleet/fleet_rows.h"
#include "report/render.h"

using namespace jitterd;

namespace {

constexpr double kAppStart = 1'800'000'000, kAppEnd = kAppStart + 1000;
const TimeRange kAppRange{kAppStart, kAppEnd, "R"};

Json app_vector() { return Json{{"resultType", "vector"}, {"result", Json::array()}}; }

void app_sample(Json& answer, Json metric, double value) {
  if (answer.is_null()) answer = app_vector();
  answer["result"].push_back(
      Json{{"metric", std::move(metric)}, {"value", {kAppEnd, fmt::format("{:.17g}", value)}}});
}

// A host's watched cpu 4 at one end, `scale` times its counts at START; bpf: every cause of the
// stolen time, paired interruptions, the duration histogram and tick-stop failures too.
void watched_at(ApplicationAnswers& a, const std::string& instance, double scale, bool bpf) {
  const Json cpu = {{"instance", instance}, {"cpu", "4"}};
  const auto with = [&](const char* label, const char* value) {
    Json m = cpu;
    m[label] = value;
    return m;
  };
  app_sample(a.watch[kIrqs], with("cause", "timer"), 1000 * scale);
  app_sample(a.watch[kIrqs], with("cause", "device_irq"), 100 * scale);
  app_sample(a.watch[kSoftirqs], cpu, 50 * scale);
  app_sample(a.watch[kPreemptions], cpu, 20 * scale);
  app_sample(a.watch[kStolen], with("cause", "preempted"), 0.01 * scale);
  if (!bpf) return;
  app_sample(a.watch[kStolen], with("cause", "timer"), 0.002 * scale);
  app_sample(a.watch[kInterruptions], with("cause", "timer"), 1000 * scale);
  app_sample(a.watch[kInterruptions], with("cause", "preempted"), 20 * scale);
  app_sample(a.watch[kDurations], with("le", "1.6384e-05"), 1015 * scale);
  app_sample(a.watch[kDurations], with("le", "+Inf"), 1020 * scale);
  app_sample(a.watch[kTickStops], cpu, 5 * scale);
}

// A loop at one end: `gaps` gaps, half of them at or under 1 us, `seconds` of them.
void loop_at(ApplicationAnswers& a, const std::string& instance, const std::string& loop, double gaps,
             double seconds) {
  const Json m = {{"instance", instance}, {"loop", loop}};
  for (const auto& [le, share] : {std::pair{"1e-06", 0.5}, std::pair{"1e-05", 0.99}, std::pair{"+Inf", 1.0}}) {
    Json b = m;
    b["le"] = le;
    app_sample(a.loops.buckets, b, gaps * share);
  }
  app_sample(a.loops.sampled, m, seconds);
  app_sample(a.loops.interruptions, m, gaps / 100);
  app_sample(a.loops.stolen, m, seconds / 100);
}

Json started(const std::vector<std::string>& hosts, double t) {
  Json v = app_vector();
  for (const std::string& h : hosts) app_sample(v, {{"instance", h}}, t);
  return v;
}

EndsAnswers app_ends() {
  EndsAnswers a;
  for (BatchAnswers* b : {&a.start, &a.end}) b->buckets = b->sampled = b->interruptions = b->stolen = app_vector();
  return a;
}

}  // namespace

TEST_CASE("application side at the ends: exact increases, counted per second; falls and restarts read in full") {
  EndsAnswers a = app_ends();
  for (const char* host : {"steady:9", "counts:9", "fell:9", "rewatched:9", "relooped:9"}) {
    const bool bpf = std::string(host) != "counts:9";
    watched_at(a.application_start, host, 1, bpf);
    watched_at(a.application_end, host, std::string(host) == "fell:9" ? 0.5 : 3, bpf);
  }
  loop_at(a.application_start, "steady:9", "rx0", 1e6, 10);
  loop_at(a.application_end, "steady:9", "rx0", 5e6, 50);
  loop_at(a.application_start, "relooped:9", "rx0", 1e6, 10);
  loop_at(a.application_end, "relooped:9", "rx0", 5e6, 50);  // grew past START after a restart
  const std::vector<std::string> hosts{"counts:9", "fell:9", "relooped:9", "rewatched:9", "steady:9"};
  a.started_at_start = a.started_at_end = started(hosts, kAppStart - 86400);
  a.watch_restarts = app_vector();
  app_sample(a.watch_restarts, {{"instance", "rewatched:9"}}, 1);
  app_sample(a.watch_restarts, {{"instance", "steady:9"}}, 0);
  a.loop_restarts = app_vector();
  app_sample(a.loop_restarts, {{"instance", "relooped:9"}, {"loop", "rx0"}}, 2);
  std::vector<std::string> names;
  LoopNames loops(names);
  const EndsResult r = ends_increases(hosts, a, kAppRange, 45, "t", loops);
  // No sampled CPU on any of them: each is read by its application's side alone.
  CHECK(r.at_ends == 2);
  REQUIRE(r.in_full.size() == 3);
  CHECK(r.in_full[0].instance == "fell:9");
  CHECK_THAT(r.in_full[0].why, Catch::Contains("jitterd_watch_irqs_total of watched cpu 4") &&
                                   Catch::Contains("fell between the ends"));
  CHECK(r.in_full[1].instance == "relooped:9");
  CHECK_THAT(r.in_full[1].why, Catch::Contains("loop \"rx0\" started again") && Catch::Contains("2 times"));
  CHECK(r.in_full[2].instance == "rewatched:9");
  CHECK_THAT(r.in_full[2].why, Catch::Contains("its watch started again"));
  CHECK(r.counted.at("steady:9") == 1000);
  CHECK(r.application.watch[kIrqs].at({"steady:9", 4, "timer"}) == 2000);
  CHECK(r.application.watch[kIrqs].count({"fell:9", 4, "timer"}) == 0);
  REQUIRE(names == std::vector<std::string>{"rx0"});
  CHECK(r.application.loops.sampled.at({"steady:9", 0}) == 40);

  FleetHistory history;
  history.loop_names = names;
  for (const char* host : {"counts:9", "steady:9"}) history.hosts.push_back({host, {}, {}});
  for (FleetHost& h : history.hosts) h.counted_seconds = r.counted.at(h.instance);
  add_application_figures(history, r.application);
  const std::vector<std::string>& w = history.watched_figure_names;
  REQUIRE(w.size() == 8 + 1);  // the 16.384 us bound: at or above 10 us (and the largest finite one)
  CHECK(w[0] == "irqs_per_s");
  CHECK(w.back() == "interruptions_over_16.384us_per_s");
  const std::vector<double>& bpf = history.hosts[1].watched.at(4);
  CHECK(bpf[0] == Approx(2200.0 / 1000));  // irqs: every cause
  CHECK(bpf[1] == Approx(2.0));            // the tick: cause timer
  CHECK(bpf[2] == Approx(0.1));            // softirqs
  CHECK(bpf[3] == Approx(0.04));           // preemptions
  CHECK(bpf[4] == Approx(0.02 / 1000));    // preempted share
  CHECK(bpf[5] == Approx(0.024 / 1000));   // stolen share, every cause
  CHECK(bpf[6] == Approx(2.0));            // paired interruptions, preemptions apart
  CHECK(bpf[7] == Approx(0.01));           // tick-stop failures
  CHECK(bpf[8] == Approx(10.0 / 1000));    // at or above 16.384 us
  const std::vector<double>& counts = history.hosts[0].watched.at(4);
  CHECK(counts[4] == Approx(0.02 / 1000));                          // every method has the preempted share
  for (std::size_t f : {5, 6, 7, 8}) CHECK(std::isnan(counts[f]));  // counts: absent, not zero
  const std::vector<double>& loop = history.hosts[1].loops.at(0);
  REQUIRE(history.loop_figure_names.size() == loop.size());
  CHECK(history.loop_figure_names[1] == "p99_ns");
  CHECK(loop[0] == 1000);              // p50
  CHECK(loop[1] == 10000);             // p99
  CHECK(loop[4] == Approx(4e4 / 40));  // interruptions per sampled second
}

namespace {

FleetSelection app_selection() {
  FleetSelection s;
  s.range = kAppRange;
  s.by = "kernel";
  return s;
}

// 24 hosts on two kernels: no sampled CPU; two watched CPUs, each host's preemptions `effect`
// times higher on kernel b; loop "rx0" on all but every sixth host, host 7's p99.99 50x; host 11
// has no watch.
FleetHistory app_fleet(double effect, const std::string& loop_name = "rx0") {
  FleetHistory h;
  h.watched_figure_names = {"irqs_per_s",          "timer_irqs_per_s",        "softirqs_per_s",
                            "preemptions_per_s",   "preempted_share",         "stolen_share",
                            "interruptions_per_s", "tick_stop_failures_per_s"};
  h.loop_figure_names = {"p99_99_ns", "interruptions_per_s"};
  h.loop_names = {loop_name};
  for (int i = 0; i < 24; ++i) {
    const std::string kernel = i % 2 == 0 ? "a" : "b";
    FleetHost host{fmt::format("host-{:02d}", i), {{"kernel", kernel}, {"cpu_model", "X"}}, {}};
    const double spread = 1 + (i % 7) / 50.0, preemptions = 10 * spread * (kernel == "b" ? effect : 1);
    if (i != 11)
      for (int cpu : {4, 5})
        host.watched[cpu] = {1000 * spread, 100, 50, preemptions * (cpu == 5 ? 1.1 : 1), 1e-4, NAN, NAN, NAN};
    if (i % 6 != 0) host.loops[0] = {(i == 7 ? 50 : 1) * 20000.0 * spread, 5 * spread};
    h.hosts.push_back(std::move(host));
  }
  return h;
}

const CohortFigure* row(const FleetReport& r, const std::string& figure) {
  for (const auto& [cohort, c] : r.comparisons)
    if (c.figure == figure) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("fleet_rows: watched rows worst and median, a loop's one value, absent hosts and rows said") {
  const FleetHistory h = app_fleet(1);
  const FleetRows rows = fleet_rows(h, 1000, false);
  std::vector<std::string> names;
  for (const FigureSpec& s : rows.specs) names.push_back(s.name);
  // stolen_share, interruptions_per_s and tick_stop_failures_per_s: no host has them (counts method).
  CHECK(names ==
        std::vector<std::string>{"watched irqs_per_s (worst CPU)", "watched irqs_per_s (median CPU)",
                                 "watched timer_irqs_per_s (worst CPU)", "watched timer_irqs_per_s (median CPU)",
                                 "watched softirqs_per_s (worst CPU)", "watched softirqs_per_s (median CPU)",
                                 "watched preemptions_per_s (worst CPU)", "watched preemptions_per_s (median CPU)",
                                 "watched preempted_share (worst CPU)", "watched preempted_share (median CPU)",
                                 "loop rx0: p99_99_ns", "loop rx0: interruptions_per_s"});
  CHECK(rows.specs[6].cv == Approx(0.7));   // watch.preemptions_per_s
  CHECK(rows.specs[10].cv == Approx(0.5));  // loop.p99_99_ns
  CHECK(rows.specs[10].resolution == 0);
  CHECK(rows.values[1][6] == Approx(11 * 1.02));  // host-01's worst watched CPU: cpu 5
  CHECK(rows.values[1][7] == Approx(10.5 * 1.02));
  CHECK(std::isnan(rows.values[11][0]));  // no watch: absent
  CHECK(std::isnan(rows.values[0][10]));  // no loop: absent
  const std::string said = fmt::format("{}", fmt::join(rows.not_judged, "\n"));
  CHECK_THAT(said, Catch::Contains("watched CPUs: 1 of 24 hosts have none"));
  CHECK_THAT(said,
             Catch::Contains("watched stolen_share, interruptions_per_s, tick_stop_failures_per_s: no host"));
  CHECK_THAT(said, Catch::Contains("loop rx0: on 20 of 24 hosts"));
  FleetHistory bare;
  bare.hosts.push_back({"a:9", {}, {{1, {1.0}}}});
  bare.figure_names = {"p99_ns"};
  const FleetRows sampled_only = fleet_rows(bare, 1000, false);
  CHECK(sampled_only.specs.size() == 2);
  CHECK_THAT(fmt::format("{}", fmt::join(sampled_only.not_judged, "\n")),
             Catch::Contains("no watched rows") && Catch::Contains("no loop rows"));
}

TEST_CASE("analyse_fleet: a watched effect found with its direction, a drifted loop's host listed") {
  const FleetReport r = analyse_fleet(app_fleet(3), app_selection(), {});
  for (const char* figure : {"watched preemptions_per_s (worst CPU)", "watched preemptions_per_s (median CPU)"}) {
    const CohortFigure* c = row(r, figure);
    REQUIRE(c != nullptr);
    CHECK(c->finding == Finding::worse);
    CHECK(c->test.other == 11);  // host-11 has no watch: absent, not a zero
  }
  CHECK(row(r, "watched irqs_per_s (worst CPU)")->finding == Finding::no_change);
  CHECK(row(r, "loop rx0: p99_99_ns")->test.reference + row(r, "loop rx0: p99_99_ns")->test.other == 20);
  REQUIRE(r.drift.hosts.size() == 1);
  CHECK(r.drift.hosts[0].host == "host-07");
  REQUIRE(r.drift.hosts[0].figures.size() == 1);
  CHECK(r.drift.hosts[0].figures[0].figure == "loop rx0: p99_99_ns");
  CHECK(r.drift.hosts[0].figures[0].ratio > 10);
  const FleetReport null = analyse_fleet(app_fleet(1), app_selection(), {});
  for (const auto& [cohort, c] : null.comparisons) CHECK(c.finding == Finding::no_change);
}

TEST_CASE("hostile loop names: bounded in number and length, inert in every format") {
  std::vector<std::string> names;
  LoopNames loops(names);
  const auto sample = [](const std::string& name) {
    PromSample s;
    s.labels = {{"instance", "a:9"}, {"loop", name}};
    return s;
  };
  CHECK(loops.index_of(sample("rx0")) == 0);
  CHECK(loops.index_of(sample("rx0")) == 0);
  CHECK(loops.index_of(sample(std::string(kMostLoopNameBytes + 1, 'x'))) == -1);
  CHECK(loops.index_of(sample(std::string(kMostLoopNameBytes + 1, 'x'))) == -1);  // one name, seen twice
  CHECK(loops.index_of(sample("")) == -1);
  for (std::size_t i = 1; i < kMostLoopNames; ++i) CHECK(loops.index_of(sample(fmt::format("l{}", i))) >= 0);
  CHECK(loops.index_of(sample("one-too-many")) == -1);
  CHECK(names.size() == kMostLoopNames);
  CHECK_THAT(loops.passed_over(), Catch::Contains("1 loop name over 128 bytes") &&
                                      Catch::Contains("1 loop name beyond the first 64") &&
                                      Catch::Contains("without a loop label"));

  const std::string hostile = "<script>alert(1)</script>\x1b[2J=cmd|' /C calc'!A0\"\n\xe2\x80\xae";
  FleetHistory h = app_fleet(3, hostile);
  const FleetReport r = analyse_fleet(h, app_selection(), {});
  const std::string text = fleet_text(r), csv = fleet_csv(r), page = fleet_html(r), json = fleet_json(r);
  CHECK(page.find("<script") == std::string::npos);
  CHECK_THAT(page, Catch::Contains("loop &lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(page, Catch::Contains("its worst or its median sampled or watched CPU, or its loop"));
  for (const std::string* out : {&text, &csv, &page}) {
    CHECK(out->find('\x1b') == std::string::npos);
    CHECK(out->find("\xe2\x80\xae") == std::string::npos);
  }
  CHECK(Json::parse(json)["hosts"].size() == 24);
  CHECK_THAT(json, Catch::Contains("loop <script>"));  // JSON keeps the name, escaped as JSON
}
