// SPDX-License-Identifier: Apache-2.0
// The loops probe on a scratch directory: a loop the library writes is exported as a sampled
// CPU's families are, under jitterd_loop_ with its loop, cpu and own labels; a refused segment
// gives no series but its refusal count, and the table names it with why; users are resolved;
// the loops: section of the configuration.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "fake_kernel_watch.h"
#include "fixture_tree.h"
#include "jitterd/loop_probe.h"
#include "probes/loops_probe.h"
#include "probes/watch_glance.h"
#include "watch/bpf/watch_bpf.h"

using namespace jitterd;
using jitterd::testing::ScratchTree;

namespace {

const ProbeMetric* loop_metric(const ProbeResult& result, const std::string& name, const std::string& label = "",
                               const std::string& value = "") {
  for (const ProbeMetric& m : result.metrics) {
    if (m.name != name) continue;
    if (label.empty()) return &m;
    for (const auto& [k, v] : m.labels)
      if (k == label && v == value) return &m;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("loops probe: a loop is exported like a sampled CPU, a refused segment by its reason", "[loop]") {
  ScratchTree tree;
  jitterd_loop_options options{};
  const std::string dir = tree.root().string();
  options.directory = dir.c_str();
  options.counter = JITTERD_LOOP_COUNTER_CALLER;
  options.hertz = 1'000'000'000;
  jitterd_loop_probe* probe = jitterd_loop_open("rx0", 2, "nic=eth0", &options);
  REQUIRE(probe != nullptr);
  std::uint64_t now = 5000;
  for (int i = 0; i <= 8192; ++i) jitterd_loop_record_at(probe, now += 50);
  jitterd_loop_flush(probe);  // each gap is counted at the next call: the last one here
  tree.write(
      "proc/" + std::to_string(::getpid()) + "/stat", std::to_string(::getpid()) + " (t) R" + [&] {
        std::string fields;
        for (int f = 4; f <= 52; ++f)
          fields += " " + (f == 22 ? std::to_string(probe->segment->start_time) : std::string("0"));
        return fields;
      }() + "\n");
  std::ofstream(tree.root() / "jitterd-loop.bad") << std::string(4096, 'x');
  LoopSettings settings;
  settings.enabled = true;
  settings.directory = dir;
  LoopsProbe loops(settings);
  ProbeContext context;
  context.host = tree.reader();
  const ProbeResult first = loops.run(context);  // the window starts here
  for (int i = 0; i < 1024; ++i) jitterd_loop_record_at(probe, now += i == 100 ? 100'000 : 50);
  jitterd_loop_flush(probe);
  const ProbeResult result = loops.run(context);
  jitterd_loop_close(probe);

  const ProbeMetric* up = loop_metric(result, "jitterd_loop_up", "loop", "rx0");
  REQUIRE(up != nullptr);
  CHECK(up->value == 1);
  CHECK(up->labels == ProbeLabels{{"loop", "rx0"}, {"cpu", "2"}, {"nic", "eth0"}});
  const ProbeMetric* gaps = loop_metric(result, "jitterd_loop_gap_seconds");
  REQUIRE(gaps != nullptr);
  CHECK(gaps->count == 8192 + 1024);
  CHECK(loop_metric(result, "jitterd_loop_interruptions_total")->value == 1);
  CHECK(loop_metric(result, "jitterd_loop_stolen_seconds_total")->value == Approx(100e-6));
  const ProbeMetric* window_max = loop_metric(result, "jitterd_loop_window_max_gap_seconds");
  REQUIRE(window_max != nullptr);
  CHECK(window_max->value == Approx(100e-6));
  CHECK(loop_metric(result, "jitterd_loop_floor_seconds")->value == Approx(50e-9));
  CHECK(loop_metric(result, "jitterd_loop_interruption_threshold_seconds")->value == Approx(1e-6));
  const ProbeMetric* window = loop_metric(result, "jitterd_loop_window_gap_seconds");
  REQUIRE(window != nullptr);
  REQUIRE(window->quantiles.size() == 4);
  CHECK(window->quantiles[3].second == Approx(100e-6));  // p99.99 of 1024 gaps: the largest, capped by the max
  CHECK(window->quantiles[0].second <= 53e-9);           // p50: the 50-tick bucket's upper edge
  // The refused file: no loop series, one refusal, a row saying why.
  CHECK(loop_metric(result, "jitterd_loop_refused_total", "reason", "magic")->value == 1);
  CHECK(loop_metric(result, "jitterd_loop_refused_total", "reason", "owner")->value == 0);
  // The headline first (one row per accepted loop), then the segments with why.
  REQUIRE(result.tables.size() == 2);
  CHECK(result.tables[0].title.rfind(kLoopGlanceTitle, 0) == 0);
  REQUIRE(result.tables[0].rows.size() == 1);
  CHECK(result.tables[0].rows[0][0].text == "rx0");
  CHECK(result.tables[1].rows.size() == 2);
  bool logged = false;
  for (const std::string& line : first.warnings)  // logged once, when first refused
    logged = logged || (line.find("jitterd-loop.bad: refused (magic)") != std::string::npos);
  CHECK(logged);
  CHECK(result.warnings.empty());
  // The typed reading the status page shows: the window's figures as a sampled CPU's, and the
  // refused file with why.
  REQUIRE(result.loops.has_value());
  CHECK(result.loops->directory == dir);
  REQUIRE(result.loops->loops.size() == 1);
  const LoopView& rx = result.loops->loops[0];
  CHECK(rx.loop == "rx0");
  CHECK(rx.file == "jitterd-loop.rx0");
  CHECK(rx.cpu == 2);
  CHECK(rx.labels == ProbeLabels{{"nic", "eth0"}});
  CHECK(rx.pid == ::getpid());
  CHECK(rx.up);
  CHECK(rx.warmed_up);
  CHECK(rx.gaps == 8192 + 1024);
  CHECK(rx.interruptions == 1);
  CHECK(rx.ns_per_tick == 1);
  REQUIRE(rx.window.valid);
  CHECK(rx.window.samples == 1024);  // the gaps between the two runs
  CHECK(rx.window.span_seconds > 0);
  CHECK(rx.window.interruptions == 1);
  CHECK(rx.window.stolen_seconds == Approx(100e-6));
  CHECK(rx.window.max_ns == Approx(100'000));
  CHECK(rx.window.floor_ns == Approx(50));
  CHECK(rx.window.threshold_ns == Approx(1000));
  CHECK(rx.window_gaps.total() == 1024);
  REQUIRE(result.loops->refused.size() == 1);
  CHECK(result.loops->refused[0].file == "jitterd-loop.bad");
  CHECK(result.loops->refused[0].reason == "magic");
  CHECK_FALSE(result.loops->refused[0].why.empty());
  // The first run: no window yet.
  REQUIRE(first.loops.has_value());
  CHECK_FALSE(first.loops->loops.at(0).window.valid);
  // The stolen-time plot: one point for the run, the loop's 100 us as not attributed (its counter
  // is the caller's own, which cannot be matched with the engine's records), saying why.
  REQUIRE(first.stolen.size() == 1);
  CHECK(first.stolen[0].points.empty());
  REQUIRE(result.stolen.size() == 1);
  const StolenPlot& plot = result.stolen[0];
  CHECK(plot.loop == "rx0");
  CHECK(plot.cpu == 2);
  CHECK_FALSE(plot.named);
  CHECK(plot.note.rfind("not attributed: ", 0) == 0);
  REQUIRE(plot.points.size() == 1);
  double stolen = 0;
  for (double seconds : plot.points[0].stolen_seconds) stolen += seconds;
  CHECK(stolen == Approx(100e-6));
  CHECK(plot.points[0].stolen_seconds[*stolen_cause_index("not_attributed")] == Approx(100e-6));
  // Out of the time the loop recorded between the runs (its 1,024 gaps), not the daemon's interval.
  CHECK(plot.points[0].covered_seconds == Approx((1023 * 50 + 100'000) * 1e-9));
}

TEST_CASE("loops probe: users are uids, names from the user database, root and jitterd's by default", "[loop]") {
  std::vector<std::string> unknown;
  CHECK(loop_allowed_users({}, &unknown) == std::vector<uid_t>{0, ::geteuid()});
  CHECK(loop_allowed_users({"root", "1234", "no-such-user-here"}, &unknown) == std::vector<uid_t>{0, 1234});
  CHECK(unknown == std::vector<std::string>{"no-such-user-here"});
}

TEST_CASE("loops probe: the loops: section, strict as every section", "[loop]") {
  const Config none = parse_config("cpus: [0]\n", "test.yaml");
  CHECK_FALSE(none.probes.loops.enabled);
  const Config loops = parse_config(
      "sampler:\n  window: 30s\nloops:\n  directory: /run/app/loops\n  users: [root, 1001, trader]\n"
      "  stale_after: 5s\n  interval: 2s\n",
      "test.yaml");
  CHECK(loops.probes.loops.enabled);
  CHECK(loops.probes.loops.directory == "/run/app/loops");
  CHECK(loops.probes.loops.users == std::vector<std::string>{"root", "1001", "trader"});
  CHECK(loops.probes.loops.stale_after == std::chrono::seconds(5));
  CHECK(loops.probes.loops.interval == std::chrono::seconds(2));
  CHECK(loops.probes.loops.window == std::chrono::seconds(30));
  for (const char* bad :
       {"loops:\n  directory: relative/dir\n", "loops:\n  directory: /a/../b\n", "loops:\n  users: []\n",
        "loops:\n  users: [\"a b\"]\n", "loops:\n  stale_after: 10ms\n", "loops:\n  owner: root\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_config(bad, "test.yaml"), ConfigErrors);
  }
}

namespace {

// A loop on `cpu` whose counter is CLOCK_MONOTONIC nanoseconds (as on a machine without a TSC or
// arm64 counter: the engine's clock as it is), warmed up from `now`, its writer alive in the tree.
jitterd_loop_probe* steady_loop(ScratchTree& tree, const std::string& dir, const char* name, int cpu,
                                std::uint64_t& now) {
  jitterd_loop_options options{};
  options.directory = dir.c_str();
  options.counter = JITTERD_LOOP_COUNTER_CALLER;
  options.hertz = 1'000'000'000;
  jitterd_loop_probe* probe = jitterd_loop_open(name, cpu, "", &options);
  REQUIRE(probe != nullptr);
  probe->segment->counter = JITTERD_LOOP_COUNTER_STEADY_NS;
  for (int i = 0; i <= 8192; ++i) jitterd_loop_record_at(probe, now += 50);
  jitterd_loop_flush(probe);
  std::string fields;
  for (int f = 4; f <= 52; ++f) fields += " " + (f == 22 ? std::to_string(probe->segment->start_time) : "0");
  tree.write("proc/" + std::to_string(::getpid()) + "/stat",
             std::to_string(::getpid()) + " (t) R" + fields + "\n");
  return probe;
}

// A loops probe reading one loop (`name`, on `cpu`) in a scratch directory, its context's watch
// having published a tracepoints engine that watches cpu 3.
struct TracepointsLoop {
  ScratchTree tree;
  std::string dir = tree.root().string();
  std::uint64_t now = 1'000'000;
  jitterd_loop_probe* probe = nullptr;
  LoopsProbe loops{[this] {
    LoopSettings settings;
    settings.enabled = true;
    settings.directory = dir;
    return settings;
  }()};
  std::shared_ptr<jitterd::testing::FakeKernelWatch> engine =
      std::make_shared<jitterd::testing::FakeKernelWatch>();
  ProbeContext context;

  TracepointsLoop(const char* name, int cpu) {
    probe = steady_loop(tree, dir, name, cpu, now);
    engine->method_name = "tracepoints";
    engine->watched = {3};
    context.host = tree.reader();
    context.watch_engine = std::make_shared<WatchEngineSlot>();
    context.watch_engine->publish(engine);
  }
  ~TracepointsLoop() { jitterd_loop_close(probe); }
  TracepointsLoop(const TracepointsLoop&) = delete;
  TracepointsLoop& operator=(const TracepointsLoop&) = delete;
};

}  // namespace

TEST_CASE("loops probe: a loop on a cpu the watch's tracepoints engine pairs is matched with its records",
          "[loop]") {
  TracepointsLoop t("rx1", 3);
  t.loops.run(t.context);  // the loop is first seen: its ring is matched from here on
  REQUIRE(t.engine->wanted.count(3) == 1);
  CHECK(t.engine->wanted[3] == kSampledOutlierFloorNs);  // a quarter of the 1 us threshold, floored
  // Two gaps of 100 us: a stray task's preemption the engine paired inside the first, nothing in
  // the second.
  const std::uint64_t first_gap = t.now;
  jitterd_loop_record_at(t.probe, t.now += 100'000);
  for (int i = 0; i < 100; ++i) jitterd_loop_record_at(t.probe, t.now += 50);
  jitterd_loop_record_at(t.probe, t.now += 100'000);
  jitterd_loop_flush(t.probe);
  PairedOutlier preemption;
  preemption.start_ns = first_gap + 1'000;
  preemption.end_ns = first_gap + 99'000;
  preemption.duration_ns = 98'000;
  preemption.cpu = 3;
  preemption.source = JD_SRC_PREEMPT_STRAY;
  preemption.id = 4242;
  preemption.name = "noise";
  t.engine->records[3] = {preemption};
  const ProbeResult result = t.loops.run(t.context);

  const ProbeMetric* preempted =
      loop_metric(result, "jitterd_loop_interruptions_by_cause_total", "cause", "preempted");
  REQUIRE(preempted != nullptr);
  CHECK(preempted->value == 1);
  CHECK(loop_metric(result, "jitterd_loop_interruptions_by_cause_total", "cause", "unexplained")->value == 1);
  const ProbeTable* who = nullptr;
  for (const ProbeTable& table : result.tables)
    if (table.title.starts_with("what took the loops' interruptions (tracepoints)")) who = &table;
  REQUIRE(who != nullptr);
  REQUIRE(who->rows.size() == 1);
  CHECK(who->rows[0][4].text == "noise");
  for (const std::string& note : result.notes) CHECK(note.find("not attributed") == std::string::npos);
}

namespace {

// /proc/interrupts and /proc/softirqs of a machine with cpus 0 to 5: cpu 5 took `local_timer`
// timer interrupts, `resched` rescheduling IPIs and `net_rx` NET_RX softirqs.
void write_counts(ScratchTree& tree, int local_timer, int resched, int net_rx) {
  const auto row = [](const std::string& source, int cpu5, const std::string& name) {
    return source + ": 1 1 1 1 1 " + std::to_string(cpu5) + " " + name + "\n";
  };
  tree.write("proc/interrupts", "           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5\n" +
                                    row("LOC", local_timer, "Local timer interrupts") +
                                    row("RES", resched, "Rescheduling interrupts"));
  tree.write("proc/softirqs", "                    CPU0       CPU1       CPU2       CPU3       CPU4       CPU5\n" +
                                  row("NET_RX", net_rx, ""));
}

}  // namespace

TEST_CASE("loops probe: a loop on a cpu no engine pairs is estimated from its cpu's interrupt counts", "[loop]") {
  TracepointsLoop t("rx2", 5);
  // No /proc/interrupts: not attributed at all, saying which engine does not see the cpu and why
  // the estimate cannot be made either.
  const ProbeResult unread = t.loops.run(t.context);
  const std::string not_watched = "cpu 5 is not watched (watch.cpus), so the tracepoints engine does not see it";
  bool said = false;
  for (const std::string& note : unread.notes)
    said = said || note.starts_with("loop rx2: interruptions not attributed: " + not_watched +
                                    "; and cpu 5's "
                                    "interrupt counts cannot be read (");
  CHECK(said);
  CHECK(loop_metric(unread, "jitterd_loop_interruptions_by_cause_total") == nullptr);
  write_counts(t.tree, 1000, 50, 7);
  t.loops.run(t.context);  // the counts' and the loop's counters' first reading
  // `n` gaps of 100 us, each after 10 of 50 ns, published.
  const auto gaps = [&](int n) {
    for (int i = 0; i < n; ++i) {
      jitterd_loop_record_at(t.probe, t.now += 100'000);
      for (int j = 0; j < 10; ++j) jitterd_loop_record_at(t.probe, t.now += 50);
    }
    jitterd_loop_flush(t.probe);
  };
  // Four interruptions of 100 us over 8 timer interrupts and 2 rescheduling IPIs: shared 3 and 1
  // (largest remainder: 3.2 and 0.8), their time as their share; the softirqs get none.
  gaps(4);
  write_counts(t.tree, 1008, 52, 30);
  const ProbeResult result = t.loops.run(t.context);
  const auto count = [&](const char* name, const char* cause) {
    for (const ProbeMetric& m : result.metrics)
      if (m.name == name && std::find(m.labels.begin(), m.labels.end(),
                                      std::pair<std::string, std::string>{"cause", cause}) != m.labels.end())
        return m.value;
    FAIL("no " << name << " for " << cause);
    return -1.0;
  };
  CHECK(count("jitterd_loop_interruptions_by_cause_total", "timer") == 3);
  CHECK(count("jitterd_loop_interruptions_by_cause_total", "ipi_resched") == 1);
  CHECK(count("jitterd_loop_interruptions_by_cause_total", "softirq_net") == 0);
  CHECK(count("jitterd_loop_interruptions_by_cause_total", "unexplained") == 0);
  CHECK(count("jitterd_loop_stolen_seconds_by_cause_total", "timer") == Approx(300e-6));
  CHECK(count("jitterd_loop_stolen_seconds_by_cause_total", "ipi_resched") == Approx(100e-6));
  const ProbeMetric* method = loop_metric(result, "jitterd_loop_attribution_method_info");
  REQUIRE(method != nullptr);
  CHECK(method->labels == ProbeLabels{{"loop", "rx2"}, {"cpu", "5"}, {"method", "window_deltas"}});
  said = false;
  for (const std::string& note : result.notes)
    said = said || note == "loop rx2: interruptions estimated from cpu 5's interrupt counts (window_deltas): " +
                               not_watched;
  CHECK(said);
  CHECK(t.engine->wanted.empty());  // the engine is not asked for records of a cpu it does not see
  // The stolen-time plot: the run's 400 us by estimated cause, saying it is an estimate.
  REQUIRE(result.stolen.size() == 1);
  CHECK(result.stolen[0].note.starts_with("estimated: "));
  REQUIRE(result.stolen[0].points.size() == 1);
  CHECK(result.stolen[0].points[0].stolen_seconds[*stolen_cause_index("timer")] == Approx(300e-6));
  CHECK(result.stolen[0].points[0].stolen_seconds[*stolen_cause_index("ipi_resched")] == Approx(100e-6));
  // More interruptions than events: each cause gets all its events, the rest is unexplained.
  gaps(5);
  write_counts(t.tree, 1010, 52, 30);
  const ProbeResult more = t.loops.run(t.context);
  CHECK(loop_metric(more, "jitterd_loop_interruptions_by_cause_total", "cause", "timer")->value == 5);
  const auto unexplained = std::find_if(more.metrics.begin(), more.metrics.end(), [](const ProbeMetric& m) {
    return m.name == "jitterd_loop_interruptions_by_cause_total" &&
           std::find(m.labels.begin(), m.labels.end(),
                     std::pair<std::string, std::string>{"cause", "unexplained"}) != m.labels.end();
  });
  REQUIRE(unexplained != more.metrics.end());
  CHECK(unexplained->value == 3);
  // A run whose counts cannot be read attributes nothing and keeps the series; the next readable
  // run starts again (its counters and the counts would cover different spans), so neither run's
  // interruptions are shared out, and the plot shows their time as not attributed.
  const auto timer_now = [&](const ProbeResult& r) {
    return loop_metric(r, "jitterd_loop_interruptions_by_cause_total", "cause", "timer")->value;
  };
  const auto gap = [&] { gaps(1); };
  gap();
  t.tree.write("proc/interrupts", "garbage\n");
  const ProbeResult unreadable = t.loops.run(t.context);
  CHECK(timer_now(unreadable) == 5);
  gap();
  write_counts(t.tree, 1020, 52, 30);
  const ProbeResult restarted = t.loops.run(t.context);
  CHECK(timer_now(restarted) == 5);
  // The plot's points (readings this close share one): the two runs' 200 us as not attributed.
  const auto plotted = [](const ProbeResult& r, const char* cause) {
    double seconds = 0;
    for (const auto& point : r.stolen.at(0).points) seconds += point.stolen_seconds[*stolen_cause_index(cause)];
    return seconds;
  };
  CHECK(plotted(restarted, "not_attributed") - plotted(more, "not_attributed") == Approx(200e-6));
  gap();
  write_counts(t.tree, 1030, 52, 30);
  const ProbeResult again = t.loops.run(t.context);
  CHECK(timer_now(again) == 6);
  CHECK(plotted(again, "timer") - plotted(restarted, "timer") == Approx(100e-6));
  // Its cpu now paired by the engine: the method changes, the run that changes it matches nothing,
  // and no series goes backwards.
  t.engine->watched = {3, 5};
  gap();
  const ProbeResult switched = t.loops.run(t.context);
  CHECK(loop_metric(switched, "jitterd_loop_attribution_method_info")->labels.back().second == "tracepoints");
  CHECK(timer_now(switched) == 6);
  CHECK(plotted(switched, "not_attributed") - plotted(again, "not_attributed") == Approx(100e-6));
  gap();
  const ProbeResult matched = t.loops.run(t.context);
  CHECK(timer_now(matched) == 6);
  CHECK(loop_metric(matched, "jitterd_loop_interruptions_by_cause_total", "cause", "unexplained")->value ==
        unexplained->value + 1);
}
