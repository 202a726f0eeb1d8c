// SPDX-License-Identifier: Apache-2.0
// "Who took my CPU?" on literal readings: the bounded tally of names (top by time and by count,
// "other" and "unnamed" adding up to the totals, a flood of new names never pushing out the top
// ones, the window's parts merged and aged out), and the watch's top preempters and sources built
// from the engine's figures and outliers, as tables and bounded series.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "probe_result_lookup.h"
#include "probes/name_tally.h"
#include "probes/watch_glance.h"
#include "probes/watch_top.h"

using namespace jitterd;
using jitterd::testing::named;

namespace {

std::size_t top_source(std::string_view name) {
  for (std::size_t s = 0; s < watch_source_count(); ++s)
    if (watch_source_name(s) == name) return s;
  FAIL("no source " << name);
  return 0;
}

PairedCpuFigures top_cpu(int cpu) {
  PairedCpuFigures c;
  c.cpu = cpu;
  c.sources.resize(watch_source_count());
  return c;
}

const ProbeTable& top_table(const ProbeResult& r, std::string_view start) {
  for (const ProbeTable& t : r.tables)
    if (t.title.rfind(start, 0) == 0) return t;
  FAIL("no table " << start);
  return r.tables.front();
}

}  // namespace

TEST_CASE("name tally: the top by time and by count, the rest in other, adding up", "[watch][top]") {
  NameTally tally(4);
  tally.add("long", {1, 5'000'000});
  tally.add("often", {100, 1'000'000});
  for (int i = 0; i < 10; ++i) tally.add("small" + std::to_string(i), {1, 1000});
  tally.add_unnamed({50, 100'000});
  tally.trim();
  CHECK(tally.names().size() == 4);
  CHECK(tally.names().count("long") == 1);   // first by time
  CHECK(tally.names().count("often") == 1);  // first by count
  CHECK(tally.total().count == 1 + 100 + 10 + 50);
  CHECK(tally.total().ns == 5'000'000 + 1'000'000 + 10'000 + 100'000);

  const TopTally top = top_of(tally, 1);
  REQUIRE(top.rows.size() == 2);
  CHECK(top.rows[0].name == "long");
  CHECK(top.rows[0].rank_by_time == 1);
  CHECK(top.rows[0].rank_by_count == 0);
  CHECK(top.rows[1].name == "often");
  CHECK(top.rows[1].rank_by_count == 1);
  CHECK(top.other.count == 10);
  CHECK(top.unnamed.count == 50);
  CHECK(top.rows[0].figures.count + top.rows[1].figures.count + top.other.count + top.unnamed.count ==
        top.total.count);
}

TEST_CASE("name tally: a flood of names never grows it nor pushes the top out", "[watch][top]") {
  NameTally since(kTallyNames);
  NameTally part(kPartNames);
  part.add("noise_injector", {500, 100'000'000, 77, 78});
  since.merge(part);
  for (int second = 0; second < 100; ++second) {
    NameTally churn(kPartNames);
    for (int i = 0; i < 1000; ++i) churn.add("churn" + std::to_string(second * 1000 + i), {1, 20'000});
    since.merge(churn);
    CHECK(since.names().size() <= kTallyNames);
  }
  REQUIRE(since.names().count("noise_injector") == 1);
  CHECK(since.names().at("noise_injector").count == 500);
  CHECK(since.names().at("noise_injector").pid == 77);
  CHECK(since.total().count == 500 + 100 * 1000);
  CHECK(top_of(since).rows.front().name == "noise_injector");
}

TEST_CASE("rolling tally: parts merged over the window, older ones gone", "[watch][top]") {
  RollingTally window(10'000'000'000);  // 10 s
  for (std::uint64_t second = 1; second <= 30; ++second) {
    NameTally part(kPartNames);
    part.add(second <= 15 ? "early" : "late", {1, 1000});
    window.push(second * 1'000'000'000, std::move(part));
  }
  CHECK(window.parts() == 10);
  const NameTally merged = window.merged();
  CHECK(merged.names().count("early") == 0);
  CHECK(merged.names().at("late").count == 10);
}

TEST_CASE("watch top: preempters named from the outliers, the rest unnamed; sources exact", "[watch][top]") {
  PairedReading before, now;
  before.cpus = {top_cpu(1)};
  now.cpus = {top_cpu(1)};
  PairedCpuFigures& c = now.cpus.front();
  c.sources[top_source("preempt_stray")] = {12, 2'600'000, 200'000, {}};
  c.sources[top_source("preempt_kernel_percpu")] = {3, 9000, 3000, {}};
  c.sources[top_source("local_timer")] = {250, 1'250'000, 9000, {}};
  c.sources[top_source("device_irq")] = {4, 40'000, 10'000, {}};
  c.device_irqs[36] = {4, 40'000, 10'000};
  for (int i = 0; i < 12; ++i) {
    PairedOutlier o;
    o.cpu = 1;
    o.source = top_source("preempt_stray");
    o.name = i < 10 ? "noise_injector" : "evil\nname";
    o.id = 4242;
    o.tgid = 4241;
    o.duration_ns = i < 10 ? 200'000 : 300'000;
    now.outliers.push_back(o);
  }
  WatchReading counts;
  WatchedCpu watched;
  watched.cpu = 1;
  watched.device_irqs[{"36", "virtio0-input"}] = 4;
  counts.cpus = {watched};

  WatchTop top(60'000'000'000);
  top.add(now, before, counts, 1'000'000'000);
  ProbeResult result;
  add_top_result(top, "bpf", HostReader("/nonexistent", "/nonexistent"), 10'000, result);

  const ProbeTable& preempters = top_table(result, "who preempted the application");
  std::uint64_t window_count = 0;
  std::set<std::string> tasks;
  for (const auto& row : preempters.rows) {
    if (row[1].text != "window") continue;
    window_count += static_cast<std::uint64_t>(row[5].integer);
    tasks.insert(row[2].text);
    CHECK(row[4].kind == Cell::Kind::none);  // no such task runs here: no pid shown
  }
  CHECK(window_count == 15);  // every preemption, named or not
  CHECK(tasks.count("noise_injector") == 1);
  CHECK(tasks.count("evil\\nname") == 1);  // escaped: a task names itself
  CHECK(preempters.rows.front()[2].text == "noise_injector");
  CHECK(preempters.rows.front()[7].number == Approx(2'000'000.0 / 2'609'000.0).epsilon(1e-3));

  const ProbeTable& sources = top_table(result, "what interrupted the watched CPUs");
  std::set<std::string> names;
  std::uint64_t interruptions = 0;
  for (const auto& row : sources.rows)
    if (row[1].text == "window") {
      names.insert(row[2].text);
      interruptions += static_cast<std::uint64_t>(row[4].integer);
    }
  CHECK(names == std::set<std::string>{"local_timer", "irq 36 virtio0-input"});
  CHECK(interruptions == 254);

  // Bounded series: ranks by time, then other and unnamed, adding up to the window's preempted time.
  double seconds = 0;
  std::set<std::string> ranks;
  for (const ProbeMetric* m : named(result, "jitterd_watch_top_preempter_seconds")) {
    seconds += m->value;
    ranks.insert(jitterd::testing::label(*m, "rank"));
  }
  CHECK(seconds == Approx(2.609e-3));
  CHECK(ranks == std::set<std::string>{"1", "2", "other", "unnamed"});
}

TEST_CASE("watch glance: each watched CPU's headline over the window", "[watch][top]") {
  std::deque<std::vector<WatchWindow>> windows;
  for (int i = 0; i < 4; ++i) {
    WatchWindow w;
    w.cpu = 1;
    w.seconds = 0.5;
    w.preemptions = 10;
    w.stolen_seconds = 0.005;
    if (i == 2) w.longest_ns = 250'000;
    windows.push_back({w});
  }
  WatchReading last;
  last.window_seconds = 0.5;
  WatchedCpu c;
  c.cpu = 1;
  c.online = true;
  c.window_timer_interrupts = 125;
  last.cpus = {c};

  const ProbeTable counts = watch_glance_table(windows, last, nullptr, "counts");
  REQUIRE(counts.rows.size() == 1);
  const std::vector<Cell>& row = counts.rows[0];
  CHECK(row[1].number == Approx(2.0));   // window_s
  CHECK(row[2].number == Approx(0.01));  // stolen share: 20 ms of 2 s
  CHECK(row[3].number == Approx(20.0));  // preemptions per second
  CHECK(row[4].text == "(not named by counts)");
  CHECK(row[6].number == Approx(250.0));  // longest, us
  CHECK(row[7].number == Approx(250.0));  // timer per second, the last reading

  PairedReading before, now;
  before.cpus = {top_cpu(1)};
  now.cpus = {top_cpu(1)};
  now.cpus[0].sources[top_source("preempt_stray")] = {2, 300'000, 200'000, {}};
  PairedOutlier o;
  o.cpu = 1;
  o.source = top_source("preempt_stray");
  o.name = "noise_injector";
  o.duration_ns = 200'000;
  now.outliers = {o};
  WatchTop top(60'000'000'000);
  top.add(now, before, last, 1'000'000'000);
  const ProbeTable bpf = watch_glance_table(windows, last, &top, "bpf");
  CHECK(bpf.rows[0][4].text == "noise_injector (stray)");
  CHECK(bpf.rows[0][5].number == Approx(200.0 / 300.0).epsilon(1e-3));
}

TEST_CASE("loop top: a matched record by its task or its source, none as unexplained", "[watch][top]") {
  NameTally preempters(kPartNames), sources(kPartNames);
  PairedOutlier task;
  task.source = top_source("preempt_stray");
  task.name = "noise_injector";
  task.id = 12;
  task.tgid = 11;
  PairedOutlier irq;
  irq.source = top_source("device_irq");
  irq.id = 36;
  irq.name = "virtio0-input";
  tally_matched(&task, 220'000, preempters, sources);
  tally_matched(&task, 210'000, preempters, sources);
  tally_matched(&irq, 9'000, preempters, sources);
  tally_matched(nullptr, 30'000, preempters, sources);
  const TallyRow top = top_of(preempters).rows.at(0);
  CHECK(preempter_of(top.name) == std::pair<std::string, std::string>{"noise_injector", "stray"});
  CHECK(top.figures == Tallied{2, 430'000, 11, 12});
  CHECK(sources.names().at("irq 36 virtio0-input").count == 1);
  CHECK(sources.names().at("unexplained").ns == 30'000);
  ProbeTable table = sources_table("what else", {"loop", "cpu"});
  add_source_rows(table, {Cell("rx0"), Cell(1)}, "window", top_of(sources));
  for (const auto& row : table.rows)
    if (row[3].text == "unexplained") CHECK(row[4].text == "unexplained");  // its own cause
}
