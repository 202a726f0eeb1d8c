// SPDX-License-Identifier: Apache-2.0
// Baselines of the application's side (format 1.2): watched CPUs and loops. Ground truth is
// constructed: cumulative watch readings (counts and bpf) with known counts per sub-window go
// through the same functions `jitterd baseline` uses (probes/watch_window.h, the recorder), the
// file and compare; the figures must come out as put in, an unchanged run "no significant change",
// injected preemptions "worse". The file's new arrays are refused as hostile input like the rest.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "compare/comparison.h"
#include "export/live_baseline.h"
#include "fake_kernel_watch.h"
#include "probes/application_windows.h"
#include "probes/watch_paired_result.h"
#include "probes/watch_window.h"
#include "report/baseline_file.h"
#include "report/baseline_reader.h"
#include "report/baseline_recorder.h"

using namespace jitterd;

namespace {

constexpr double kHertz = 1'000'000'000.0;

std::size_t source_where(bool preemption) {
  for (std::size_t s = 0; s < watch_source_count(); ++s)
    if (watch_source_task_class(s).empty() != preemption) return s;
  FAIL("no such source");
  return 0;
}

Baseline empty_run(int windows = 16) {
  Baseline b;
  b.fingerprint = {{"kernel", "6.1.0"}, {"hostname", "box"}, {"cpu_model", "Example CPU"}};
  b.tick_method = "lfence_rdtsc";
  b.counter_hertz = kHertz;
  b.duration_seconds = windows;
  b.sub_window_seconds = 1;
  // One sampled CPU, quiet: compare needs one in common.
  BaselineCpu c;
  c.cpu = 1;
  for (int w = 0; w < windows; ++w) {
    HistogramSnapshot window;
    window.counts[histogram_bucket_index(1000)] = 1000;
    c.sub_windows.push_back(sub_window_of(window, 1, 1e-3, 0, 0, kTailThresholdsNs));
    c.histogram.add(window);
    c.sampled_seconds += 1e-3;
  }
  c.samples = c.histogram.total();
  b.cpus.push_back(c);
  return b;
}

// What the bpf engine would have read on cpu 3 over `windows` one-second readings: per second,
// Poisson interruptions (5 us each) and preemptions (30 us each, every one an outlier at the
// default 10 us outlier threshold), cumulative as the program counts them.
struct WatchNoise {
  double interruptions_per_s = 1000;
  double preemptions_per_s = 50;
};

BaselineWatched bpf_watched_run(std::mt19937_64& random, const WatchNoise& noise, int windows = 16) {
  std::vector<BaselineWatched> watched;
  PairedReading previous;
  PairedCpuFigures cpu;
  cpu.cpu = 3;
  cpu.sources.resize(watch_source_count());
  previous.cpus.push_back(cpu);
  std::gamma_distribution<double> run_factor(400, 1.0 / 400);  // 5% run-to-run spread
  const double factor = run_factor(random);
  for (int w = 0; w < windows; ++w) {
    PairedReading now;
    std::poisson_distribution<int> interruptions(noise.interruptions_per_s * factor),
        preemptions(noise.preemptions_per_s * factor);
    const int i = interruptions(random), p = preemptions(random);
    SourceFigures& irq = cpu.sources[source_where(false)];
    irq.count += static_cast<std::uint64_t>(i);
    irq.ns += static_cast<std::uint64_t>(i) * 5'000;
    irq.max_ns = std::max<std::uint64_t>(irq.max_ns, i > 0 ? 5'000 : 0);
    SourceFigures& preempt = cpu.sources[source_where(true)];
    preempt.count += static_cast<std::uint64_t>(p);
    preempt.ns += static_cast<std::uint64_t>(p) * 30'000;
    preempt.max_ns = std::max<std::uint64_t>(preempt.max_ns, p > 0 ? 30'000 : 0);
    now.cpus.push_back(cpu);
    for (int k = 0; k < p; ++k)
      now.outliers.push_back({0, 0, 30'000, 3, source_where(true), 0, 0, false, false, false, ""});
    add_watch_windows(watched, paired_windows(now, previous, 1.0, 10'000, kTailThresholdsNs), kWatchMethodBpf,
                      10'000);
    previous = now;
  }
  REQUIRE(watched.size() == 1);
  set_watched_totals(watched[0]);
  return watched[0];
}

const FigureComparison* find_figure(const Comparison& c, std::string_view scope, std::string_view name) {
  for (const FigureComparison& f : c.figures)
    if (f.scope == scope && f.figure == name) return &f;
  return nullptr;
}

bool has_note(const Comparison& c, std::string_view part) {
  for (const std::string& note : c.notes)
    if (note.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("watch windows: counts from two readings, known figures in and out", "[application_baseline]") {
  WatchedCpu before;
  before.cpu = 3;
  before.online = true;
  before.interrupts = {{"timer", 100}, {"device_irq", 7}};
  before.softirqs = {{"softirq_rcu", 10}};
  before.preemptions = 4;
  before.wait_ns = 1'000'000;
  WatchReading now;
  now.window_seconds = 2.0;
  now.cpus.push_back(before);
  now.cpus[0].interrupts = {{"timer", 350}, {"device_irq", 9}};
  now.cpus[0].softirqs = {{"softirq_rcu", 13}};
  now.cpus[0].preemptions = 24;
  now.cpus[0].wait_ns = 4'000'000;
  const std::vector<WatchWindow> windows = counts_windows(now, {before}, kTailThresholdsNs);
  REQUIRE(windows.size() == 1);
  CHECK(windows[0].seconds == 2.0);
  CHECK(windows[0].interruptions == 250 + 2 + 3);
  CHECK(windows[0].preemptions == 20);
  CHECK(windows[0].stolen_seconds == Approx(0.003));
  CHECK_FALSE(windows[0].longest_ns);
  CHECK(windows[0].over_threshold == std::vector<std::optional<std::uint64_t>>(kTailThresholdsNs.size()));
  CHECK(windows[0].tail_unknown == "the counts method measures no lengths");
  // No previous reading of the CPU, or the CPU offline: no window.
  CHECK(counts_windows(now, {}, kTailThresholdsNs)[0].seconds == 0);
  now.cpus[0].online = false;
  CHECK(counts_windows(now, {before}, kTailThresholdsNs)[0].seconds == 0);
}

TEST_CASE("watch windows: bpf interruptions, preemptions, the longest and exact tail counts",
          "[application_baseline]") {
  PairedCpuFigures cpu;
  cpu.cpu = 5;
  cpu.sources.resize(watch_source_count());
  PairedReading before;
  before.cpus.push_back(cpu);
  cpu.sources[source_where(false)] = {40, 40 * 2'000, 2'000, {}};
  cpu.sources[source_where(true)] = {3, 3 * 25'000 + 150'000, 150'000, {}};
  PairedReading now;
  now.cpus.push_back(cpu);
  now.outliers = {{0, 0, 25'000, 5, source_where(true), 0, 0, false, false, false, ""},
                  {0, 0, 25'000, 5, source_where(true), 0, 0, false, false, false, ""},
                  {0, 0, 150'000, 5, source_where(true), 0, 0, false, false, false, ""},
                  {0, 0, 99'000, 6, source_where(false), 0, 0, false, false, false, ""}};  // another CPU's
  std::vector<WatchWindow> w = paired_windows(now, before, 1.0, 10'000, kTailThresholdsNs);
  REQUIRE(w.size() == 1);
  CHECK(w[0].interruptions == 40);
  CHECK(w[0].preemptions == 3);
  CHECK(w[0].stolen_seconds == Approx((80'000 + 225'000) * 1e-9));
  CHECK(w[0].longest_ns == 150'000);
  // 10, 20, 50, 100 us and 1 ms.
  CHECK(w[0].over_threshold == std::vector<std::optional<std::uint64_t>>{3, 3, 1, 1, 0});
  CHECK(w[0].tail_unknown.empty());

  SECTION("an outlier threshold above a tail threshold: that count is unknown, and why") {
    w = paired_windows(now, before, 1.0, 30'000, kTailThresholdsNs);
    CHECK(w[0].over_threshold == std::vector<std::optional<std::uint64_t>>{std::nullopt, std::nullopt, 1, 1, 0});
    CHECK(w[0].tail_unknown.find("watch.outlier_threshold (30000 ns) is above the 10000 ns tail threshold") !=
          std::string::npos);
  }
  SECTION("an outlier lost in the window: every tail count is unknown") {
    now.cpus[0].outliers_lost = 2;
    w = paired_windows(now, before, 1.0, 10'000, kTailThresholdsNs);
    CHECK(w[0].over_threshold == std::vector<std::optional<std::uint64_t>>(kTailThresholdsNs.size()));
    CHECK(w[0].tail_unknown == "2 outliers lost (the ring was full)");
  }
  SECTION("no outlier and no new longest: the longest is unknown (below the outlier threshold)") {
    now.outliers.clear();
    before.cpus[0].sources[source_where(true)].max_ns = 150'000;
    w = paired_windows(now, before, 1.0, 10'000, kTailThresholdsNs);
    CHECK_FALSE(w[0].longest_ns);
    CHECK(w[0].over_threshold == std::vector<std::optional<std::uint64_t>>{0, 0, 0, 0, 0});
  }
}

TEST_CASE("the recorder: sub-windows per watched CPU and totals from them", "[application_baseline]") {
  std::vector<BaselineWatched> watched;
  WatchWindow a{{1.0, 10, 2, 0.001, 20'000.0, {2, 1, 0, 0, 0}}, 3, ""};
  WatchWindow b{
      {1.0, 12, 4, 0.002, std::nullopt, {std::nullopt, 0, 0, 0, 0}}, 3, "1 outliers lost (the ring was full)"};
  WatchWindow none{{0, 0, 0, 0, std::nullopt, {}}, 4, "no window"};
  add_watch_windows(watched, {a, none}, kWatchMethodBpf, 10'000);
  add_watch_windows(watched, {b}, kWatchMethodBpf, 10'000);
  REQUIRE(watched.size() == 1);  // cpu 4 had no window
  set_watched_totals(watched[0]);
  const BaselineWatched& w = watched[0];
  CHECK(w.sub_windows.size() == 2);
  CHECK(w.seconds == 2.0);
  CHECK(w.interruptions == 22);
  CHECK(w.preemptions == 6);
  CHECK(w.stolen_seconds == Approx(0.003));
  CHECK(w.longest_ns == 20'000.0);
  CHECK(w.over_threshold == std::vector<std::optional<std::uint64_t>>{std::nullopt, 1, 0, 0, 0});
  CHECK(w.tail_unknown == "1 outliers lost (the ring was full)");
  CHECK(w.outlier_threshold_ns == 10'000);
}

TEST_CASE("baseline file 1.2: loops and watched CPUs round-trip; a 1.1 file reads without them",
          "[application_baseline]") {
  std::mt19937_64 random(7);
  Baseline b = empty_run();
  b.watched.push_back(bpf_watched_run(random, {}));
  BaselineLoop loop;
  static_cast<BaselineCpu&>(loop) = b.cpus[0];
  loop.name = "rx0";
  loop.cpu = 3;
  loop.counter_hertz = 2.5e9;
  b.loops.push_back(loop);
  const std::string text = baseline_json(b).dump();
  const Baseline read = parse_baseline(text, "b.json");
  CHECK(read.format_version == "1.2");
  REQUIRE(read.loops.size() == 1);
  CHECK(read.loops[0].name == "rx0");
  CHECK(read.loops[0].counter_hertz == 2.5e9);
  CHECK(read.loops[0].histogram.counts == loop.histogram.counts);
  REQUIRE(read.watched.size() == 1);
  CHECK(read.watched[0].method == "bpf");
  CHECK(read.watched[0].preemptions == b.watched[0].preemptions);
  CHECK(read.watched[0].sub_windows.size() == 16);
  CHECK(read.watched[0].sub_windows[4].over_threshold == b.watched[0].sub_windows[4].over_threshold);
  CHECK(baseline_json(read).dump() == text);

  Json older = Json::parse(text);
  older["format_version"] = "1.1";
  older.erase("loops");
  older.erase("watched");
  const Baseline old = baseline_from_json(older, "old.json");
  CHECK(old.loops.empty());
  CHECK(old.watched.empty());
}

TEST_CASE("baseline file 1.2: loops and watched CPUs are hostile input", "[application_baseline]") {
  std::mt19937_64 random(8);
  Baseline b = empty_run(2);
  b.watched.push_back(bpf_watched_run(random, {}, 2));
  BaselineLoop loop;
  static_cast<BaselineCpu&>(loop) = b.cpus[0];
  loop.name = "rx0";
  loop.counter_hertz = 1e9;
  b.loops.push_back(loop);
  const Json good = baseline_json(b);
  const auto refusal = [](const Json& document) {
    try {
      baseline_from_json(document, "bad.json");
    } catch (const BaselineError& e) {
      CHECK(e.exit_code() == kExitBadBaseline);
      return std::string(e.what());
    }
    return std::string("read");
  };
  Json j = good;
  j["loops"].push_back(good["loops"][0]);
  CHECK(refusal(j) == "bad.json: loops[1].name: loop \"rx0\" is given twice (also loops[0])");
  j = good;
  j["watched"].push_back(good["watched"][0]);
  CHECK(refusal(j) == "bad.json: watched[1].cpu: watched cpu 3 is given twice (also watched[0])");
  j = good;
  j["watched"][0]["method"] = "guess";
  CHECK(refusal(j) ==
        "bad.json: watched[0].method: must be \"bpf\", \"tracepoints\" or \"counts\", got \"guess\"");
  j = good;
  j["watched"][0]["method"] = "counts";
  CHECK(refusal(j).find("the counts method measures no lengths") != std::string::npos);
  j = good;
  j["watched"][0]["sub_windows"][1]["preemptions"] = -1;
  CHECK(refusal(j) == "bad.json: watched[0].sub_windows[1].preemptions: must be a whole number >= 0");
  j = good;
  j["watched"][0]["sub_windows"][0]["over_threshold"] = Json::array({1, 2});
  CHECK(refusal(j).find("watched[0].sub_windows[0].over_threshold: must have one count") != std::string::npos);
  j = good;
  j["watched"] = Json::object();
  CHECK(refusal(j) == "bad.json: .watched: must be an array");
  j = good;
  j["loops"][0]["counter_hertz"] = 0;
  CHECK(refusal(j) == "bad.json: loops[0].counter_hertz: must be above 0");
  j = good;
  j["loops"][0].erase("name");
  CHECK(refusal(j) == "bad.json: loops[0]: missing field \"name\"");
  j = good;
  j["loops"] = Json::array();
  for (std::size_t i = 0; i <= kBaselineMaxLoops; ++i) j["loops"].push_back(0);
  CHECK(refusal(j).find("bad.json: loops: 257 loops, more than the limit of 256") == 0);
}

TEST_CASE("compare: a watched CPU unchanged is no change; injected preemptions are worse",
          "[application_baseline]") {
  // Doubling is below the 21x the measured 0.70 allowance lets through, so the doubling is judged
  // with watch.preemptions_per_s=0.08 (1.45x), and 40 times the preemptions with the default.
  const std::vector<AllowanceSetting> tight{{"watch.preemptions_per_s", 0.08}};
  int false_alarms = 0, doubled_found = 0, forty_times_found = 0;
  const int pairs = 40;
  for (int seed = 0; seed < pairs; ++seed) {
    std::mt19937_64 random(100 + seed);
    Baseline before = empty_run(), same = empty_run(), doubled = empty_run(), forty_times = empty_run();
    before.watched.push_back(bpf_watched_run(random, {}));
    same.watched.push_back(bpf_watched_run(random, {}));
    doubled.watched.push_back(bpf_watched_run(random, {1000, 100}));
    forty_times.watched.push_back(bpf_watched_run(random, {1000, 2000}));
    const Comparison unchanged = compare_baselines(before, "a", same, "b", {}, tight);
    for (const FigureComparison& f : unchanged.figures)
      if (f.scope == "watched cpu 3" && (f.verdict == "worse" || f.verdict == "better")) ++false_alarms;
    const Comparison doubled_comparison = compare_baselines(before, "a", doubled, "b", {}, tight);
    const FigureComparison* d = find_figure(doubled_comparison, "watched cpu 3", "preemptions_per_s");
    REQUIRE(d != nullptr);
    CHECK(d->after == Approx(2 * d->before).epsilon(0.3));
    doubled_found += d->verdict == "worse";
    const Comparison c = compare_baselines(before, "a", forty_times, "b");
    forty_times_found += find_figure(c, "watched cpu 3", "preemptions_per_s")->verdict == "worse";
    // Every preemption is 30 us: the rate above 20 us is 40 times too, above 50 us there is none.
    CHECK(find_figure(c, "watched cpu 3", "interruptions_over_20us_per_s")->verdict == "worse");
    CHECK(find_figure(c, "watched cpu 3", "interruptions_over_50us_per_s")->verdict == "no significant change");
    CHECK(find_figure(c, "watched cpu 3", "interruptions_per_s")->verdict == "no significant change");
    CHECK(find_figure(c, "watched cpu 3", "longest_ns")->verdict == "worse");  // as the 20 us rate
  }
  CHECK(false_alarms == 0);
  CHECK(doubled_found >= pairs * 95 / 100);
  CHECK(forty_times_found >= pairs * 95 / 100);
}

TEST_CASE("compare: watched CPUs by another method, in one file only, or with unknown tails are left out",
          "[application_baseline]") {
  std::mt19937_64 random(9);
  Baseline before = empty_run(), after = empty_run();
  before.watched.push_back(bpf_watched_run(random, {}));
  after.watched.push_back(bpf_watched_run(random, {}));
  after.watched[0].method = kWatchMethodCounts;
  Comparison c = compare_baselines(before, "a.json", after, "b.json");
  CHECK(has_note(c, "watched cpu 3: left out, watched by bpf in a.json and by counts in b.json"));
  CHECK(find_figure(c, "watched cpu 3", "preemptions_per_s") == nullptr);

  after.watched[0].method = kWatchMethodBpf;
  after.watched[0].cpu = 4;
  c = compare_baselines(before, "a.json", after, "b.json");
  CHECK(has_note(c, "watched cpu 3: left out, watched only in a.json"));
  CHECK(has_note(c, "watched cpu 4: left out, watched only in b.json"));

  after.watched[0].cpu = 3;
  after.watched[0].sub_windows[2].over_threshold[0].reset();
  after.watched[0].tail_unknown = "1 outliers lost (the ring was full)";
  c = compare_baselines(before, "a.json", after, "b.json");
  CHECK(has_note(c,
                 "watched cpu 3: interruptions_over_10us_per_s left out, its count is unknown in b.json: 1 "
                 "outliers lost (the ring was full)"));
  CHECK(find_figure(c, "watched cpu 3", "interruptions_over_10us_per_s") == nullptr);
  CHECK(find_figure(c, "watched cpu 3", "interruptions_over_20us_per_s") != nullptr);
  CHECK(find_figure(c, "watched cpu 3", "preemptions_per_s") != nullptr);
}

TEST_CASE("compare: a loop is compared by name as a sampled CPU, in its own counter", "[application_baseline]") {
  // A loop counting at 3 GHz: its gaps of 1 us are 3,000 ticks; the file's counter is 1 GHz.
  const auto loop_run = [](double interruption_ns, double hertz) {
    BaselineLoop loop;
    loop.name = "rx0";
    loop.cpu = 3;
    loop.counter_hertz = hertz;
    for (int w = 0; w < 16; ++w) {
      GapCountsTicks added;
      const auto ticks = [&](double ns) { return static_cast<std::uint64_t>(ns * hertz / 1e9); };
      added.gaps.counts[histogram_bucket_index(ticks(1000))] += 100'000;
      added.gaps.counts[histogram_bucket_index(ticks(interruption_ns))] += 50;
      added.sampled_ticks = ticks(1000) * 100'000 + ticks(interruption_ns) * 50;
      added.interruptions = 50;
      added.interrupted_ticks = ticks(interruption_ns) * 50;
      add_sub_window(loop, added, hertz);
      GapCountsTicks total;
      for (int k = 0; k <= w; ++k) total.add(added);
      set_totals(loop, total, hertz);
    }
    loop.max_ns = interruption_ns;
    return loop;
  };
  Baseline before = empty_run(), after = empty_run();
  before.loops.push_back(loop_run(15'000, 3e9));
  after.loops.push_back(loop_run(60'000, 3e9));
  Comparison c = compare_baselines(before, "a", after, "b");
  const FigureComparison* p9999 = find_figure(c, "loop rx0", "p99_99_ns");
  REQUIRE(p9999 != nullptr);
  CHECK(p9999->before == Approx(15'000).epsilon(0.07));  // in ns through the loop's counter
  CHECK(p9999->after == Approx(60'000).epsilon(0.07));
  CHECK(find_figure(c, "loop rx0", "gaps_over_50us_per_s")->verdict == "worse");
  CHECK(find_figure(c, "loop rx0", "gaps_over_10us_per_s")->verdict == "no significant change");
  CHECK(find_figure(c, "loop rx0", "max_ns")->after == 60'000);

  after.loops[0].counter_hertz = 2e9;
  c = compare_baselines(before, "a", after, "b");
  CHECK(has_note(c, "loop rx0: left out, its counter frequencies differ by more than 1%"));
  after.loops[0].name = "tx0";
  c = compare_baselines(before, "a", after, "b");
  CHECK(has_note(c, "loop rx0: left out, recorded only in a"));
  CHECK(has_note(c, "loop tx0: left out, recorded only in b"));
}

TEST_CASE("the live download holds the watch and loops probes' history as a file holds them",
          "[application_baseline]") {
  StatusSnapshot s;
  s.build = {"1.0", "rev", "x86_64", "gcc"};
  s.hostname = "box";
  s.unix_seconds = 1.7e9;
  s.frequency = {1e9, "test", 0};
  ProbeStatus watch("watch");
  watch.ran = watch.success = true;
  ApplicationWindows watched;
  watched.watch_method = kWatchMethodBpf;
  watched.outlier_threshold_ns = 10'000;
  for (std::uint64_t i = 0; i < 3; ++i)
    watched.watch.push_back({WatchWindow{{1.0, 100 + i, 5 + i, 0.001, 30'000.0, {5 + i, 5 + i, 0, 0, 0}}, 3, ""}});
  watch.result.application_windows = std::make_shared<const ApplicationWindows>(watched);
  ProbeStatus loops("loops");
  loops.ran = loops.success = true;
  ApplicationWindows looped;
  LoopStepCounts added;  // a loop's history is sparse: the buckets that changed
  added.buckets = {{static_cast<std::uint32_t>(histogram_bucket_index(3000)), 1000}};  // 1 us at 3 GHz
  added.sampled_ticks = 3'000'000;
  // Its max in its ticks: 6,000 at 3 GHz, 2 us by the file's rule.
  looped.loops.push_back({"rx0", 3, 3e9, {added, added}, 300, 6000, 6000, "", "jitterd-loop.rx0"});
  looped.loops.push_back(
      {"rx0", 4, 3e9, {added}, 300, 6000, 6000, "", "jitterd-loop.rx0b"});  // a second file of that name
  loops.result.application_windows = std::make_shared<const ApplicationWindows>(looped);
  s.probes = share_statuses({watch, loops});
  const Baseline b = live_baseline(s, {});
  REQUIRE(b.watched.size() == 1);
  const BaselineWatched& w = b.watched[0];
  CHECK(w.cpu == 3);
  CHECK(w.method == "bpf");
  CHECK(w.sub_windows.size() == 3);
  CHECK(w.preemptions == 5 + 6 + 7);
  CHECK(w.interruptions == 303);
  CHECK(w.over_threshold[0] == 18u);
  CHECK(w.longest_ns == 30'000.0);
  REQUIRE(b.loops.size() == 1);  // a file holds each name once: the first
  const BaselineLoop& l = b.loops[0];
  CHECK(l.name == "rx0");
  CHECK(l.cpu == 3);
  CHECK(l.sub_windows.size() == 2);
  CHECK(l.samples == 2000);
  CHECK(l.sampled_seconds == Approx(0.002));
  CHECK(l.floor_ns == Approx(100));
  CHECK(l.threshold_ns == Approx(2000));
  CHECK(l.max_ns == Approx(2000));
  CHECK(l.error.empty());
  // It reads back as a file does.
  const Baseline back = baseline_from_json(baseline_json(b), "live");
  CHECK(back.watched.size() == 1);
  CHECK(back.loops.size() == 1);
  // `jitterd baseline` records the same history by the same function, and logs the name's second file.
  Baseline recorded;
  std::vector<std::string> left_out;
  add_application_windows(recorded, looped, left_out);
  REQUIRE(recorded.loops.size() == 1);
  CHECK(recorded.loops[0].max_ns == l.max_ns);
  REQUIRE(left_out.size() == 1);
  CHECK(left_out[0] ==
        "loop rx0: also in jitterd-loop.rx0b, left out of the baseline (recorded from jitterd-loop.rx0)");
}

TEST_CASE("the watch's glance table shows the typed figures a baseline records", "[application_baseline]") {
  PairedCpuFigures cpu;
  cpu.cpu = 5;
  cpu.sources.resize(watch_source_count());
  PairedReading before;
  before.cpus.push_back(cpu);
  cpu.sources[source_where(false)] = {40, 40 * 2'000, 2'000, {}};
  cpu.sources[source_where(true)] = {6, 6 * 25'000, 25'000, {}};
  PairedReading now;
  now.cpus.push_back(cpu);
  WatchReading counts;
  counts.window_seconds = 2;
  ProbeResult result;
  add_paired_result(now, &before, counts, {}, jitterd::testing::FakeKernelWatch{}, result);
  const auto glance = std::find_if(result.tables.begin(), result.tables.end(), [](const ProbeTable& t) {
    return t.title == "watched CPUs, the last window (bpf)";
  });
  REQUIRE(glance != result.tables.end());
  REQUIRE(glance->rows.size() == 1);
  const WatchWindow w = paired_windows(now, before, 2, 10'000, kTailThresholdsNs)[0];
  CHECK(glance->rows[0][1].number == Approx(w.stolen_seconds / 2));
  CHECK(glance->rows[0][2].number == Approx(20.0));  // 40 in 2 s
  CHECK(glance->rows[0][3].number == Approx(3.0));   // 6 in 2 s
  CHECK(w.interruptions == 40);
  CHECK(w.preemptions == 6);
}
