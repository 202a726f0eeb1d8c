// SPDX-License-Identifier: Apache-2.0
// Baselines and compare: the file format round-trips and refuses what it cannot read (with the
// file and the reason), compare refuses baselines that cannot be compared, and on synthetic runs
// the verdicts are right: one distribution twice is "no significant change" (false alarms counted
// over many seeded repetitions), a heavier tail is "worse", a lighter one "better".
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include "cli/baseline.h"
#include "compare/comparison.h"
#include "compare/comparison_html.h"
#include "host/text.h"
#include "measure/op_cost.h"
#include "report/baseline_file.h"
#include "report/html.h"
#include "report/render.h"

using namespace jitterd;

namespace {

constexpr double kHertz = 2'000'000'000.0;  // 0.5 ns per tick
// The synthetic runs' sub-window: their noise model (20,000 base gaps and rate x length
// interruptions per sub-window) is tuned for it, whatever length a recorded baseline has.
constexpr double kSyntheticWindowSeconds = 0.5;

// A run's noise: how many interruptions per second and how long they last. Each run draws its own
// rate around `rate_per_s` (run-to-run variation) and each sub-window its count around that.
struct Noise {
  double rate_per_s = 200;
  double duration_scale = 1;  // multiplies every interruption's duration
};

Baseline synthetic_run(std::mt19937_64& random, const Noise& noise, int cpu = 1, int windows = 16) {
  Baseline b;
  b.fingerprint = {{"kernel", "6.1.0"}, {"hostname", "box"}, {"cpu_model", "Example CPU"}};
  b.configuration = {{"cpus", std::to_string(cpu)}};
  b.tick_method = "lfence_rdtsc";
  b.counter_hertz = kHertz;
  b.duration_seconds = windows * kSyntheticWindowSeconds;
  b.sub_window_seconds = kSyntheticWindowSeconds;
  BaselineCpu c;
  c.cpu = cpu;
  // Runs of an unchanged machine differ: 15% relative spread in the rate, inside the 20% compare
  // assumes.
  std::gamma_distribution<double> run_rate(45, noise.rate_per_s / 45);
  const double rate = run_rate(random);
  std::uniform_int_distribution<std::uint64_t> base_gap(60, 70);
  std::lognormal_distribution<double> interruption_ns(std::log(20'000.0), 1.0);
  for (int w = 0; w < windows; ++w) {
    HistogramSnapshot window;
    std::uint64_t ticks = 0, stolen = 0, interruptions = 0;
    for (int i = 0; i < 20'000; ++i) {
      const std::uint64_t gap = base_gap(random);
      window.counts[histogram_bucket_index(gap)] += 1;
      ticks += gap;
    }
    std::poisson_distribution<int> count(rate * kSyntheticWindowSeconds);
    for (int i = count(random); i > 0; --i) {
      const auto gap = static_cast<std::uint64_t>(interruption_ns(random) * noise.duration_scale * kHertz / 1e9);
      window.counts[histogram_bucket_index(gap)] += 1;
      ticks += gap, stolen += gap, ++interruptions;
      c.max_ns = std::max(c.max_ns, static_cast<double>(gap) * 1e9 / kHertz);
    }
    c.sub_windows.push_back(sub_window_of(window, 1e9 / kHertz, kSyntheticWindowSeconds, interruptions,
                                          static_cast<double>(stolen) / kHertz, kTailThresholdsNs));
    c.histogram.add(window);
    c.interruptions += interruptions;
    c.sampled_seconds += kSyntheticWindowSeconds;
    c.stolen_seconds += static_cast<double>(stolen) / kHertz;
  }
  c.samples = c.histogram.total();
  b.cpus.push_back(c);
  return b;
}

int verdicts(const Comparison& comparison, std::string_view verdict) {
  return static_cast<int>(std::count_if(comparison.figures.begin(), comparison.figures.end(),
                                        [&](const FigureComparison& f) { return f.verdict == verdict; }));
}

const FigureComparison& figure(const Comparison& comparison, std::string_view name) {
  for (const FigureComparison& f : comparison.figures)
    if (f.figure == name) return f;
  FAIL("no figure " << name);
  throw;
}

std::string temporary_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("jitterd_compare_test_" + name)).string();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

int exit_code_of(const std::function<void()>& action, std::string* message) {
  try {
    action();
  } catch (const BaselineError& e) {
    *message = e.what();
    return e.exit_code();
  }
  return 0;
}

// Probe runs with samples (format 1.1): kernel_cost with two operations, c2c with two pairs of one
// relation class and one of another (and the class table), pacing at one rate. Each sample is
// lognormal around its figure's median times `scale`, times a per-run factor (5% run-to-run
// spread, inside what compare allows every probe); the tables' quantiles are the samples'.
struct ProbeNoise {
  double scale = 1;
  double run_spread = 0.05;
};

std::pair<Cell, ProbeSamples> drawn(std::mt19937_64& random, double median_ns, double sigma, double unit_ns,
                                    int samples, ProbeLabels labels,
                                    std::vector<std::pair<std::string, double>> quantiles, double run_factor) {
  std::lognormal_distribution<double> value(std::log(median_ns * run_factor), sigma);
  std::vector<std::uint64_t> units;
  for (int i = 0; i < samples; ++i)
    units.push_back(static_cast<std::uint64_t>(std::llround(value(random) / unit_ns)));
  std::sort(units.begin(), units.end());
  ProbeSamples s{std::move(labels), std::move(quantiles), unit_ns, grouped_values(units)};
  return {Cell(static_cast<double>(nearest_rank(units, 0.5)) * unit_ns, 1), std::move(s)};
}

std::vector<BaselineProbe> probe_runs(std::mt19937_64& random, const ProbeNoise& noise) {
  std::lognormal_distribution<double> run(0, noise.run_spread);
  std::vector<BaselineProbe> probes;
  BaselineProbe kernel{
      "kernel_cost", true, "", {{"kernel operation costs on cpu 0", {"op", "median_ns"}, {}}}, {}, {}, true};
  for (const auto& [op, ns] : {std::pair{"syscall_getppid", 150.0}, {"fork_wait", 90'000.0}}) {
    auto [cell, samples] = drawn(random, ns * noise.scale, 0.1, 0.5, op == std::string("fork_wait") ? 20 : 1000,
                                 {{"op", op}}, {{"median_ns", 0.5}}, run(random));
    kernel.tables[0].rows.push_back({op, cell});
    kernel.samples.push_back(std::move(samples));
  }
  probes.push_back(std::move(kernel));
  BaselineProbe c2c{"c2c",
                    true,
                    "",
                    {{"pairs (line allocated and first touched by cpu_a, the initiator)",
                      {"cpu_a", "cpu_b", "relation", "median_ns"},
                      {}},
                     {"relation classes (over the pairs' medians)", {"relation", "pairs", "median_ns"}, {}}},
                    {},
                    {},
                    true};
  std::map<std::string, std::vector<double>> class_medians;
  for (const auto& [a, b, relation, ns] :
       {std::tuple{0, 1, "shared_l3", 40.0}, {0, 2, "shared_l3", 42.0}, {0, 3, "cross_package", 120.0}}) {
    auto [cell, samples] =
        drawn(random, ns * noise.scale, 0.05, 0.25 / 1000, 100,
              {{"cpu_a", std::to_string(a)}, {"cpu_b", std::to_string(b)}, {"relation", relation}},
              {{"median_ns", 0.5}}, run(random));
    c2c.tables[0].rows.push_back({a, b, relation, cell});
    class_medians[relation].push_back(cell.number);
    c2c.samples.push_back(std::move(samples));
  }
  for (auto& [relation, medians] : class_medians) {
    std::sort(medians.begin(), medians.end());
    c2c.tables[1].rows.push_back(
        {relation, static_cast<int>(medians.size()), Cell(medians[(medians.size() - 1) / 2], 1)});
  }
  probes.push_back(std::move(c2c));
  BaselineProbe pacing{"pacing",
                       true,
                       "",
                       {{"pacing on cpu 0, no-op per send, 0.500 s per rate",
                         {"method", "target_per_s", "p50_late_ns", "ratio"},
                         {}}},
                       {},
                       {},
                       true};
  auto [late, samples] =
      drawn(random, 60 * noise.scale, 0.3, 1, 5000, {{"method", "counter"}, {"target_per_s", "10000"}},
            {{"p50_late_ns", 0.5}}, run(random));
  pacing.tables[0].rows.push_back({"counter", Cell(10000.0, 0), late, Cell(0.999, 6)});
  pacing.samples.push_back(std::move(samples));
  probes.push_back(std::move(pacing));
  return probes;
}

Baseline run_with_probes(std::mt19937_64& random, const ProbeNoise& noise) {
  Baseline b = synthetic_run(random, {});
  b.probes = probe_runs(random, noise);
  return b;
}

std::vector<const FigureComparison*> probe_figures(const Comparison& c) {
  std::vector<const FigureComparison*> out;
  for (const FigureComparison& f : c.figures)
    if (f.scope.rfind("probe ", 0) == 0) out.push_back(&f);
  return out;
}

}  // namespace

TEST_CASE("baseline file: written whole and read back the same") {
  std::mt19937_64 random(1);
  Baseline b = synthetic_run(random, {});
  b.probes.push_back(
      {"kernel_cost", true, "", {{"costs", {"op", "median_ns"}, {{"syscall", Cell(150.5, 1)}}}}, {}, {}, true});
  const std::string path = temporary_path("round_trip.json");
  write_baseline(b, path);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
  const Baseline read = read_baseline(path);
  CHECK(read.format_version == "1.2");
  CHECK(read.fingerprint == b.fingerprint);
  REQUIRE(read.cpus.size() == 1);
  CHECK(read.cpus[0].histogram.counts == b.cpus[0].histogram.counts);
  CHECK(read.cpus[0].sub_windows.size() == b.cpus[0].sub_windows.size());
  CHECK(read.cpus[0].sub_windows[3].over_threshold == b.cpus[0].sub_windows[3].over_threshold);
  CHECK(read.cpus[0].sub_windows[3].p9999_ns == b.cpus[0].sub_windows[3].p9999_ns);
  REQUIRE(read.probes.size() == 1);
  CHECK(read.probes[0].tables[0].rows[0][1].number == 150.5);
  std::filesystem::remove(path);
}

TEST_CASE("baseline file: refuses what it cannot read, naming the file and the reason") {
  std::mt19937_64 random(2);
  const Json good = baseline_json(synthetic_run(random, {}));
  const std::string path = temporary_path("bad.json");
  std::string message;
  const auto read_text = [&](const std::string& text) {
    write_text(path, text);
    return exit_code_of([&] { read_baseline(path); }, &message);
  };

  SECTION("missing file: 66") {
    CHECK(exit_code_of([&] { read_baseline(path + ".absent"); }, &message) == kExitUnreadableBaseline);
    CHECK_THAT(message, Catch::Contains(path + ".absent") && Catch::Contains("cannot read"));
  }
  SECTION("truncated: 65") {
    const std::string text = good.dump();
    CHECK(read_text(text.substr(0, text.size() / 2)) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains(path) && Catch::Contains("not valid JSON"));
  }
  SECTION("foreign JSON: 65") {
    CHECK(read_text(R"({"status": "success", "data": []})") == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("not a jitterd baseline"));
  }
  SECTION("newer major version: 65, saying so") {
    Json newer = good;
    newer["format_version"] = "2.0";
    CHECK(read_text(newer.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("2.0 is newer") && Catch::Contains("1.x"));
  }
  SECTION("older or newer minor version: read") {
    Json minor = good;
    minor["format_version"] = "1.7";
    minor["a_field_from_1_7"] = 1;
    CHECK(read_text(minor.dump()) == 0);
    minor["format_version"] = "0.9";
    CHECK(read_text(minor.dump()) == 0);
  }
  SECTION("hand-edited: a histogram that does not add up, a count that is negative") {
    Json edited = good;
    edited["cpus"][0]["samples"] = 12;
    CHECK(read_text(edited.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("cpus[0]") && Catch::Contains("samples is 12"));
    edited = good;
    edited["cpus"][0]["sub_windows"][2]["interruptions"] = -3;
    CHECK(read_text(edited.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("cpus[0].sub_windows[2].interruptions"));
    edited = good;
    edited["cpus"][0].erase("histogram_ticks");
    CHECK(read_text(edited.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("missing field \"histogram_ticks\""));
  }
  std::filesystem::remove(path);
}

TEST_CASE("baseline file: bounded, and strict about what a forged or edited file could say twice") {
  std::mt19937_64 random(21);
  Baseline two_cpus = synthetic_run(random, {});
  two_cpus.cpus.push_back(synthetic_run(random, {}, 2).cpus[0]);
  two_cpus.probes.push_back({"kernel_cost", true, "", {}, {}, {}, true});
  const Json good = baseline_json(two_cpus);
  const std::string path = temporary_path("strict.json");
  std::string message;
  const auto read_text = [&](const std::string& text) {
    write_text(path, text);
    return exit_code_of([&] { read_baseline(path); }, &message);
  };
  REQUIRE(read_text(good.dump()) == 0);

  SECTION("larger than 64 MiB: refused before reading, naming the bound") {
    write_text(path, "");
    std::filesystem::resize_file(path, kBaselineMaxBytes + 1);
    CHECK(exit_code_of([&] { read_baseline(path); }, &message) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains(path) && Catch::Contains("more than the limit of 67108864"));
    CHECK(exit_code_of([&] { read_baseline("/dev/zero"); }, &message) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("/dev/zero") && Catch::Contains("more than the limit of 67108864"));
  }
  SECTION("more than 8192 CPUs") {
    Json many = good;
    many["cpus"] = Json::array();
    for (int i = 0; i <= 8192; ++i) many["cpus"].push_back(Json::object());
    CHECK(read_text(many.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("cpus: 8193 CPUs, more than the limit of 8192"));
  }
  SECTION("a CPU, a probe or a histogram bucket given twice") {
    Json twice = good;
    twice["cpus"][1]["cpu"] = twice["cpus"][0]["cpu"];
    CHECK(read_text(twice.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("cpus[1].cpu: cpu 1 is given twice (also cpus[0])"));
    twice = good;
    twice["probes"].push_back(twice["probes"][0]);
    CHECK(read_text(twice.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("probes[1].name: probe \"kernel_cost\" is given twice"));
    twice = good;
    Json& buckets = twice["cpus"][0]["histogram_ticks"];
    buckets.push_back(Json::array({buckets[0][0], 0}));
    CHECK(read_text(twice.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("is given twice"));
  }
  SECTION("a key given twice in one object: refused, not the last one kept") {
    std::string text = good.dump();
    text.replace(text.find("\"created\""), 0, "\"format_version\":\"9.0\",");
    CHECK(read_text(text) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains(path + ": the top level: the key \"format_version\" is given twice"));
    text = good.dump();
    text.replace(text.find("\"samples\""), 0, "\"cpu\":7,");
    CHECK(read_text(text) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("cpus[0]: the key \"cpu\" is given twice"));
  }
  SECTION("a number beyond a double: 65 naming the file and the field") {
    for (const char* number : {"1e999", "-1e999"}) {
      std::string text = good.dump();
      const std::size_t at = text.find("\"max_ns\":") + 9;
      text.replace(at, text.find(',', at) - at, number);
      CHECK(read_text(text) == kExitBadBaseline);
      CHECK_THAT(message, Catch::Contains(path + ": cpus[0].max_ns: the number " + number + " is out of range"));
    }
  }
  SECTION("format_version: two plain whole numbers, no sign, blank or leading zero") {
    for (const char* bad : {"01.1", "1.01", "+1.1", "-1.1", " 1.1", "1.1 ", "1. 1", "1", "1.", ".1", "1.1.1",
                            "99999.1", "1.1\n", "0x1.1", ""}) {
      Json edited = good;
      edited["format_version"] = bad;
      CHECK(read_text(edited.dump()) == kExitBadBaseline);
      CHECK_THAT(message, Catch::Contains("format_version: must be MAJOR.MINOR"));
    }
    for (const char* fine : {"1.10", "0.9", "1.0"}) {
      Json edited = good;
      edited["format_version"] = fine;
      CHECK(read_text(edited.dump()) == 0);
    }
  }
  SECTION("nesting and objects beyond what a baseline needs") {
    Json edited = good;
    std::string deep = "1";
    for (int i = 0; i < 100; ++i) deep = "[" + deep + "]";
    std::string text = good.dump();
    text.replace(text.find("\"created\""), 0, "\"deep\":" + deep + ",");
    CHECK(read_text(text) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("deep") && Catch::Contains("nested deeper than 64 levels"));
    Json wide = Json::object();
    for (int i = 0; i < 100; ++i) wide["k" + std::to_string(i)] = i;
    edited["fingerprint_extra"] = wide;
    CHECK(read_text(edited.dump()) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("fingerprint_extra: an object with more than 64 keys"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("compare: refuses baselines that cannot be compared") {
  std::mt19937_64 random(3);
  const Baseline before = synthetic_run(random, {});
  Baseline after = synthetic_run(random, {});
  std::string message;
  const auto refused = [&](const Baseline& other) {
    return exit_code_of([&] { compare_baselines(before, "a.json", other, "b.json"); }, &message);
  };
  SECTION("another machine") {
    after.fingerprint[1].second = "other-box";
    CHECK(refused(after) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("a.json and b.json") && Catch::Contains("different machines"));
  }
  SECTION("another tick source") {
    after.tick_method = "rdtscp";
    CHECK(refused(after) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("different tick sources"));
    after.tick_method = before.tick_method;
    after.counter_hertz *= 1.5;
    CHECK(refused(after) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("counter frequencies differ"));
  }
  SECTION("durations more than 2x apart") {
    after.duration_seconds = before.duration_seconds * 3;
    CHECK(refused(after) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("durations more than 2x apart"));
  }
  SECTION("no CPU in common") {
    after = synthetic_run(random, {}, 2);
    CHECK(refused(after) == kExitBadBaseline);
    CHECK_THAT(message, Catch::Contains("no sampled CPU in common"));
  }
}

TEST_CASE("compare: different CPU sets compare the intersection and name the CPUs left out") {
  std::mt19937_64 random(4);
  Baseline before = synthetic_run(random, {});
  Baseline after = synthetic_run(random, {});
  before.cpus.push_back(synthetic_run(random, {}, 2).cpus[0]);
  after.cpus.push_back(synthetic_run(random, {}, 3).cpus[0]);
  const Comparison c = compare_baselines(before, "a.json", after, "b.json");
  CHECK(std::all_of(c.figures.begin(), c.figures.end(),
                    [](const FigureComparison& f) { return f.scope == "cpu 1"; }));
  CHECK(c.notes == std::vector<std::string>{"cpu 2: left out, sampled only in a.json",
                                            "cpu 3: left out, sampled only in b.json"});
}

TEST_CASE("compare: what changed lists fingerprint and configuration differences") {
  std::mt19937_64 random(5);
  const Baseline before = synthetic_run(random, {});
  Baseline after = synthetic_run(random, {});
  after.fingerprint[0].second = "6.1.0-10";
  const Comparison c = compare_baselines(before, "a.json", after, "b.json");
  REQUIRE(c.changed.size() == 1);
  CHECK(c.changed[0] == std::vector<std::string>{"fingerprint.kernel", "6.1.0", "6.1.0-10"});
  CHECK_THAT(format_comparison_table(c), Catch::Contains("fingerprint.kernel"));
  CHECK_THAT(format_comparison_json(c), Catch::Contains("\"verdict\":\"no significant change\""));
}

TEST_CASE("compare: a fingerprint field only one file records is a note, not a change of the machine") {
  std::mt19937_64 random(5);
  Baseline before = synthetic_run(random, {});
  Baseline after = synthetic_run(random, {});
  // a.json from a jitterd that did not record the hypervisor flag yet.
  REQUIRE(std::none_of(before.fingerprint.begin(), before.fingerprint.end(),
                       [](const auto& field) { return field.first == "hypervisor"; }));
  after.fingerprint.emplace_back("hypervisor", "no");
  const Comparison c = compare_baselines(before, "a.json", after, "b.json");
  CHECK(c.changed.empty());
  CHECK(std::count(
            c.notes.begin(), c.notes.end(),
            "fingerprint.hypervisor: recorded only in b.json (\"no\"; a file from an older jitterd lacks it): "
            "not compared") == 1);
  // Recorded in both, a field that differs is a change as before.
  before.fingerprint.emplace_back("hypervisor", "yes");
  const Comparison both = compare_baselines(before, "a.json", after, "b.json");
  REQUIRE(both.changed.size() == 1);
  CHECK(both.changed[0] == std::vector<std::string>{"fingerprint.hypervisor", "yes", "no"});
}

TEST_CASE("compare: one distribution twice is no significant change in at least 99% of pairs") {
  std::mt19937_64 random(6);
  constexpr int kPairs = 300;
  int false_alarms = 0;
  for (int r = 0; r < kPairs; ++r) {
    const Comparison c = compare_baselines(synthetic_run(random, {}), "a", synthetic_run(random, {}), "b");
    if (verdicts(c, "worse") + verdicts(c, "better") > 0) {
      ++false_alarms;
      for (const FigureComparison& f : c.figures)
        if (f.verdict != "no significant change")
          UNSCOPED_INFO(f.figure << " " << f.before << " " << f.after << " p=" << f.p_value);
    }
  }
  INFO(false_alarms << " of " << kPairs << " pairs had a verdict other than no significant change");
  CHECK(false_alarms < kPairs / 100);
}

TEST_CASE("compare: a heavier tail is worse, a lighter one better") {
  std::mt19937_64 random(7);
  constexpr int kPairs = 50;
  int heavier_found = 0, lighter_found = 0;
  const Noise quiet{200, 1}, noisy{800, 2};
  for (int r = 0; r < kPairs; ++r) {
    const Comparison heavier =
        compare_baselines(synthetic_run(random, quiet), "a", synthetic_run(random, noisy), "b");
    if (figure(heavier, "gaps_over_10us_per_s").verdict == "worse" &&
        figure(heavier, "stolen_share").verdict == "worse" && verdicts(heavier, "better") == 0)
      ++heavier_found;
    const Comparison lighter =
        compare_baselines(synthetic_run(random, noisy), "a", synthetic_run(random, quiet), "b");
    if (figure(lighter, "gaps_over_10us_per_s").verdict == "better" && verdicts(lighter, "worse") == 0)
      ++lighter_found;
  }
  CHECK(heavier_found >= kPairs * 95 / 100);
  CHECK(lighter_found >= kPairs * 95 / 100);
}

TEST_CASE("compare: a verdict needs both the within-run and the run-to-run test, and both p-values are shown") {
  std::mt19937_64 random(8);
  const Noise quiet{200, 1}, noisy{800, 2};
  const ChangeCriteria criteria;
  const Comparison c =
      compare_baselines(synthetic_run(random, quiet), "a", synthetic_run(random, noisy), "b", criteria);
  int judged = 0;
  for (const FigureComparison& f : c.figures) {
    INFO(f.figure << " " << f.before << " -> " << f.after << " p=" << f.p_value << " verdict " << f.verdict);
    REQUIRE(f.run_to_run_p.has_value());
    // Each figure against its allowance (the table's, shown); the max takes both tests from the
    // tail rate it names; p99.99 has its own, wider allowance.
    const std::string name =
        "gaps." + (f.figure.rfind("gaps_over_", 0) == 0 ? std::string("tail_rates") : f.figure);
    REQUIRE(f.allowance.has_value());
    if (f.test.rfind("as ", 0) != 0) {
      CHECK(*f.allowance == allowance_for(name, false, {}).cv);
      CHECK(*f.run_to_run_p == Approx(run_to_run_p(f.before, f.after, *f.allowance)));
    }
    if (f.verdict != "no significant change") {
      ++judged;
      CHECK(f.p_value < criteria.alpha);
      CHECK(*f.run_to_run_p < criteria.alpha);
    } else if (f.p_value < criteria.alpha && std::fabs(f.change) >= criteria.min_effect) {
      CHECK(*f.run_to_run_p >= criteria.alpha);
    }
  }
  CHECK(judged > 0);
  // p99.99 tripled between two runs is within its run-to-run allowance (about 10x), p99.9 is not.
  CHECK(run_to_run_p(100, 300, *allowance_for("gaps.p99_99_ns", false, {}).cv) > criteria.alpha);
  CHECK(run_to_run_p(100, 300, *allowance_for("gaps.p99_9_ns", false, {}).cv) < criteria.alpha);
  const ProbeTable table = figures_table(c);
  const auto column = std::find(table.columns.begin(), table.columns.end(), "p_run_to_run");
  REQUIRE(column != table.columns.end());
  CHECK(std::find(table.columns.begin(), table.columns.end(), "p_value") != table.columns.end());
}

TEST_CASE("compare: a verdict cell carries its class for a page, and the figures table holds such cells") {
  CHECK(verdict_cell("worse").html_class == "worse");
  CHECK(verdict_cell("better").html_class == "better");
  CHECK(verdict_cell("no significant change").html_class == "same");
  CHECK(verdict_cell("not tested (baseline without samples)").html_class == "");
  CHECK(cell_text(verdict_cell("worse")) == "worse");
  Comparison c{
      "b", "a", {}, {}, {{"cpu 1", "p99_ns", 1, 3, 2, "t", 0.0001, "worse", std::nullopt, std::nullopt, 2.5}}};
  const ProbeTable table = figures_table(c);
  REQUIRE(table.columns.at(table.columns.size() - 2) == "verdict");
  CHECK(table.rows.at(0).at(table.columns.size() - 2) == verdict_cell("worse"));
  CHECK(table_html(table).find("<td class=\"worse\">worse</td>") != std::string::npos);
}

TEST_CASE("compare --format html: what changed first, then per CPU the plot and the verdicts, c2c heatmaps") {
  std::mt19937_64 random(8);
  Baseline before = synthetic_run(random, {200, 1});
  Baseline after = synthetic_run(random, {800, 2});
  after.fingerprint[0].second = "6.1.0 </td><script>x</script>";
  const auto c2c = [](double median) {
    BaselineProbe p{"c2c", true, "", {}, {}, {}, true};
    p.tables.push_back({"pairs (line allocated and first touched by cpu_a, the initiator)",
                        {"cpu_a", "cpu_b", "relation", "median_ns"},
                        {{0, 1, "shared_l3", Cell(median, 1)}},
                        TableShape::pair_heatmap});
    return p;
  };
  before.probes.push_back(c2c(28.0));
  after.probes.push_back(c2c(31.5));
  const Comparison c = compare_baselines(before, "before <1>.json", after, "after.json");
  const std::string page = comparison_html(c, before, after);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK_THAT(page, Catch::Contains("before &lt;1&gt;.json"));
  CHECK_THAT(page, Catch::Contains("6.1.0 &lt;/td&gt;&lt;script&gt;x&lt;/script&gt;"));
  const auto changed = page.find("<h2>What changed</h2>");
  const auto per_cpu = page.find("<h2>What it did, per CPU</h2>");
  const auto heatmaps = page.find("<h2>Core-to-core latency</h2>");
  REQUIRE(changed != std::string::npos);
  CHECK(changed < per_cpu);
  CHECK(per_cpu < heatmaps);
  CHECK(heatmaps != std::string::npos);
  CHECK(page.find("<h3>cpu 1</h3>") != std::string::npos);
  CHECK(page.find("<polyline", per_cpu) < heatmaps);              // the exceedance plot
  CHECK_THAT(page, Catch::Contains("stroke-dasharray=\"7 4\""));  // after, dashed
  CHECK_THAT(page, Catch::Contains("<td>gaps_over_10us_per_s</td>"));
  CHECK_THAT(page, Catch::Contains("<td class=\"worse\">worse</td>"));
  CHECK_THAT(page, Catch::Contains("cpu 0 - cpu 1: +3.5 ns (shared_l3)"));  // the difference heatmap
}

TEST_CASE("baseline file: the probes' samples round-trip; a 1.0 file without them still reads") {
  std::mt19937_64 random(20);
  const Baseline b = run_with_probes(random, {});
  const std::string path = temporary_path("samples.json");
  write_baseline(b, path);
  const Baseline read = read_baseline(path);
  REQUIRE(read.probes.size() == b.probes.size());
  for (std::size_t i = 0; i < b.probes.size(); ++i) {
    CHECK(read.probes[i].has_samples);
    CHECK(read.probes[i].samples == b.probes[i].samples);
  }
  Json old = baseline_json(b);
  old["format_version"] = "1.0";
  for (Json& probe : old["probes"]) probe.erase("samples");
  write_text(path, old.dump());
  const Baseline older = read_baseline(path);
  CHECK(older.format_version == "1.0");
  for (const BaselineProbe& p : older.probes) {
    CHECK_FALSE(p.has_samples);
    CHECK(p.samples.empty());
  }
  Json bad = baseline_json(b);
  bad["probes"][0]["samples"][1]["values"][0] = {-4, 1};
  write_text(path, bad.dump());
  std::string message;
  CHECK(exit_code_of([&] { read_baseline(path); }, &message) == kExitBadBaseline);
  CHECK_THAT(message, Catch::Contains("probes[0].samples[1].values[0][0]"));
  bad = baseline_json(b);
  bad["probes"][0]["samples"][0]["quantiles"]["median_ns"] = 1.5;
  write_text(path, bad.dump());
  CHECK(exit_code_of([&] { read_baseline(path); }, &message) == kExitBadBaseline);
  CHECK_THAT(message, Catch::Contains("probes[0].samples[0].quantiles.median_ns"));
  std::filesystem::remove(path);
}

TEST_CASE("compare: probe quantiles with samples are tested; one distribution twice has no verdict") {
  std::mt19937_64 random(21);
  constexpr int kPairs = 200;
  int false_alarms = 0;
  std::size_t tested = 0;
  for (int r = 0; r < kPairs; ++r) {
    const Comparison c = compare_baselines(run_with_probes(random, {}), "a", run_with_probes(random, {}), "b");
    bool alarm = false;
    for (const FigureComparison* f : probe_figures(c)) {
      if (f->test.rfind("quantile", 0) == 0) ++tested;
      if (f->verdict == "worse" || f->verdict == "better") {
        alarm = true;
        UNSCOPED_INFO(f->figure << " " << f->before << " -> " << f->after << " p=" << f->p_value);
      }
    }
    false_alarms += alarm ? 1 : 0;
  }
  // Per run: two operations, three pairs, two classes, one pacing rate.
  CHECK(tested == kPairs * 8u);
  INFO(false_alarms << " of " << kPairs << " pairs had a probe verdict");
  CHECK(false_alarms < kPairs / 100);
}

TEST_CASE("compare: probe samples scaled up are worse, scaled down better; relation classes pool their pairs") {
  std::mt19937_64 random(22);
  constexpr int kPairs = 30;
  // 1.2x the smallest change the probes' run-to-run allowance lets through at alpha (z 3.29):
  // the runs' own 5% spread must not pull it back under.
  const double cv = std::max({*allowance_for("c2c.median_ns", false, {}).cv,
                              *allowance_for("kernel_cost.median_ns", false, {}).cv,
                              *allowance_for("pacing.p50_late_ns", false, {}).cv});
  const double factor = 1.2 * std::exp(3.2905 * std::sqrt(2.0) * cv);
  int worse_found = 0, better_found = 0;
  for (int r = 0; r < kPairs; ++r) {
    const Baseline base = run_with_probes(random, {}), scaled = run_with_probes(random, {factor});
    const Comparison slower = compare_baselines(base, "a", scaled, "b");
    const Comparison faster =
        compare_baselines(run_with_probes(random, {factor}), "a", run_with_probes(random, {}), "b");
    const auto all = [](const Comparison& c, std::string_view verdict) {
      const auto figures = probe_figures(c);
      return std::all_of(figures.begin(), figures.end(), [&](const FigureComparison* f) {
        INFO(f->figure << " " << f->before << " -> " << f->after << " p=" << f->p_value << " "
                       << f->run_to_run_p.value_or(-1) << " " << f->verdict);
        return f->test.rfind("quantile", 0) != 0 || f->verdict == verdict;
      });
    };
    worse_found += all(slower, "worse") ? 1 : 0;
    better_found += all(faster, "better") ? 1 : 0;
    if (r == 0) {
      const FigureComparison& shared = figure(slower, "relation: relation=shared_l3 median_ns");
      CHECK_THAT(shared.test, Catch::Contains("200 vs 200 samples") && Catch::Contains("pooled 2 vs 2 records"));
      CHECK(shared.verdict == "worse");
      CHECK(figure(slower, "pacing: method=counter target_per_s=10000 ratio").verdict == "not tested");
      CHECK(figure(slower, "kernel: op=fork_wait median_ns").test == "quantile 0.5 (20 vs 20 samples)");
      CHECK_THAT(format_comparison_json(slower), Catch::Contains("\"verdict\":\"worse\""));
      CHECK_THAT(format_comparison_csv(slower), Catch::Contains("kernel: op=syscall_getppid median_ns"));
      const std::string page = comparison_html(slower, base, scaled);
      const auto kernel = page.find("<h2>Kernel costs</h2>");
      REQUIRE(kernel != std::string::npos);
      CHECK(page.find("<td class=\"worse\">worse</td>", kernel) != std::string::npos);
      CHECK(page.find("quantile 0.5 (1000 vs 1000 samples)", kernel) != std::string::npos);
    }
  }
  CHECK(worse_found >= kPairs * 95 / 100);
  CHECK(better_found >= kPairs * 95 / 100);
}

TEST_CASE("compare: a pacer that fell behind its schedule in either run is shown, not tested") {
  std::mt19937_64 random(31);
  // p99 lateness against one slot of the 10000/s pacer (100 us): 2 us kept it, 0.5 s did not.
  const auto with_p99 = [](Baseline run, double p99_ns) {
    for (BaselineProbe& probe : run.probes) {
      if (probe.name != "pacing") continue;
      probe.tables[0].columns.push_back("p99_late_ns");
      for (auto& row : probe.tables[0].rows) row.push_back(Cell(p99_ns, 0));
    }
    return run;
  };
  const FigureComparison kept = figure(compare_baselines(with_p99(run_with_probes(random, {}), 2000), "a",
                                                         with_p99(run_with_probes(random, {}), 3000), "b"),
                                       "pacing: method=counter target_per_s=10000 p50_late_ns");
  CHECK(kept.test.rfind("quantile", 0) == 0);
  const Comparison behind = compare_baselines(with_p99(run_with_probes(random, {}), 2000), "a",
                                              with_p99(run_with_probes(random, {100}), 5e8), "b");
  const FigureComparison& p50 = figure(behind, "pacing: method=counter target_per_s=10000 p50_late_ns");
  CHECK(p50.verdict == "not tested (pacer fell behind its schedule)");
  CHECK(p50.test ==
        "none (the pacer fell behind its schedule; after: p99_late_ns 500000000 ns > one slot 100000 ns)");
  CHECK_FALSE(p50.run_to_run_p.has_value());
  CHECK(p50.before < p50.after);  // still shown
  // Other probes are judged as before.
  CHECK(figure(behind, "kernel: op=fork_wait median_ns").test.rfind("quantile", 0) == 0);
}

TEST_CASE("compare: an operation whose CPU was shared with other tasks in either run is shown, not tested") {
  std::mt19937_64 random(37);
  // cpu_shared of fork_wait's row (the other rows' cell empty, as the probe leaves them).
  const auto with_shared = [](Baseline run, double fork_share) {
    for (BaselineProbe& probe : run.probes) {
      if (probe.name != "kernel_cost") continue;
      ProbeTable& table = probe.tables[0];
      const auto op = std::find(table.columns.begin(), table.columns.end(), "op") - table.columns.begin();
      table.columns.push_back("cpu_shared");
      for (auto& row : table.rows)
        row.push_back(cell_text(row[static_cast<std::size_t>(op)]) == "fork_wait" ? Cell(fork_share, 3) : Cell());
    }
    return run;
  };
  const FigureComparison kept = figure(compare_baselines(with_shared(run_with_probes(random, {}), 0.01), "a",
                                                         with_shared(run_with_probes(random, {}), 0.05), "b"),
                                       "kernel: op=fork_wait median_ns");
  CHECK(kept.test.rfind("quantile", 0) == 0);
  const Comparison shared = compare_baselines(with_shared(run_with_probes(random, {}), 0.5), "a",
                                              with_shared(run_with_probes(random, {3}), 0.01), "b");
  const FigureComparison& fork = figure(shared, "kernel: op=fork_wait median_ns");
  CHECK(fork.verdict == "not tested (operation's CPU was shared with other tasks)");
  CHECK(fork.test == "none (the operation's CPU was shared with other tasks; before: cpu_shared 0.500 > 0.100)");
  CHECK_FALSE(fork.run_to_run_p.has_value());
  // A row without the cell (the cheap operations, an older baseline) is judged as before.
  CHECK(figure(shared, "kernel: op=syscall_getppid median_ns").test.rfind("quantile", 0) == 0);
}

TEST_CASE("compare: a baseline without samples (format 1.0) shows its probe quantiles as not tested") {
  std::mt19937_64 random(23);
  const Baseline before = run_with_probes(random, {});
  Baseline after = run_with_probes(random, {3});
  for (BaselineProbe& p : after.probes) {
    p.samples.clear();
    p.has_samples = false;
  }
  const Comparison c = compare_baselines(before, "a", after, "b");
  const FigureComparison& op = figure(c, "kernel: op=syscall_getppid median_ns");
  CHECK(op.verdict == "not tested (baseline without samples)");
  CHECK_FALSE(op.run_to_run_p.has_value());
  CHECK(op.change > 1);  // shown all the same
  CHECK(figure(c, "pacing: method=counter target_per_s=10000 ratio").verdict == "not tested");
  CHECK(verdicts(c, "worse") == 0);
}

TEST_CASE("allowances: one row per tested figure, a guest's wider or not tested, --allowance over both") {
  for (const FigureAllowance& row : figure_allowances()) {
    INFO(row.name);
    const AppliedAllowance bare = allowance_for(row.name, false, {}), guest = allowance_for(row.name, true, {});
    CHECK(bare.cv == row.cv);
    if (!row.cv) {  // never tested: no setting changes that
      CHECK_THAT(bare.untested, Catch::StartsWith("not tested ("));
      CHECK_FALSE(allowance_for(row.name, true, {{std::string(row.name.substr(0, row.name.find('.'))), 0.3}}).cv);
      continue;
    }
    if (row.guest_cv) {
      CHECK(*guest.cv == *row.guest_cv);
      CHECK(*row.guest_cv >= *row.cv);  // a guest spreads at least as much
    } else {
      CHECK_FALSE(guest.cv);
      CHECK_THAT(guest.untested, Catch::StartsWith("not tested (in a VM the run-to-run spread of"));
    }
    // The group's setting, then the row's own, win over the table, in a guest too.
    const std::string group(row.name.substr(0, row.name.find('.')));
    CHECK(allowance_for(row.name, true, {{group, 0.7}}).cv == 0.7);
    CHECK(allowance_for(row.name, false, {{group, 0.7}, {std::string(row.name), 0.4}}).cv == 0.4);
    CHECK(allowance_for(row.name, true, {{group, 0.7}}).source == "--allowance " + group);
  }
  CHECK(allowance_groups() == std::vector<std::string>{"gaps", "loop", "watch", "c2c", "kernel_cost", "pacing"});
  CHECK_FALSE(allowance_for("clock.offset_ns", false, {}).cv);
}

TEST_CASE("compare: under a hypervisor the guest allowances apply, and the comparison says so") {
  std::mt19937_64 random(41);
  // c2c 2x slower: beyond the bare-metal allowance (cv 0.08: 1.45x), within a guest's.
  Baseline before = run_with_probes(random, {}), after = run_with_probes(random, {});
  for (BaselineProbe& p : after.probes)
    if (p.name == "c2c")
      for (ProbeSamples& s : p.samples) s.unit_ns *= 2;
  for (BaselineProbe& p : after.probes)
    if (p.name == "c2c")
      for (ProbeTable& t : p.tables)
        for (auto& row : t.rows) row.back().number *= 2;
  const std::string pair = "pairs: cpu_a=0 cpu_b=1 relation=shared_l3 median_ns";
  const Comparison bare = compare_baselines(before, "a", after, "b");
  CHECK(figure(bare, pair).verdict == "worse");
  CHECK(figure(bare, pair).allowance == allowance_for("c2c.median_ns", false, {}).cv);
  for (const std::string& note : bare.notes) CHECK_THAT(note, !Catch::Contains("hypervisor"));

  after.fingerprint.emplace_back("hypervisor", "yes");
  const Comparison guest = compare_baselines(before, "a", after, "b");
  CHECK(figure(guest, pair).verdict == "no significant change");
  CHECK(figure(guest, pair).allowance == allowance_for("c2c.median_ns", true, {}).cv);
  CHECK(figure(guest, pair).p_value < 0.001);  // the samples moved; the run-to-run allowance holds it
  CHECK(std::any_of(guest.notes.begin(), guest.notes.end(), [](const std::string& n) {
    return n.find("in a VM (b ran under a hypervisor") != std::string::npos;
  }));
  CHECK_THAT(format_comparison_table(guest), Catch::Contains("allowance"));
  // Either side in a VM is enough; "no" is bare metal.
  std::swap(before, after);
  CHECK(figure(compare_baselines(before, "a", after, "b"), pair).allowance ==
        allowance_for("c2c.median_ns", true, {}).cv);
  before.fingerprint.back().second = "no";
  CHECK(figure(compare_baselines(before, "a", after, "b"), pair).allowance ==
        allowance_for("c2c.median_ns", false, {}).cv);
  std::swap(before, after);
  after.fingerprint.back().second = "yes";

  // --allowance: the user's cv in place of the guest's, and said so.
  const Comparison set = compare_baselines(before, "a", after, "b", {}, {{"c2c", 0.08}});
  CHECK(figure(set, pair).verdict == "worse");
  CHECK(figure(set, pair).allowance == 0.08);
  CHECK(std::any_of(set.notes.begin(), set.notes.end(), [](const std::string& n) {
    return n.find("allowances set with --allowance c2c=0.08") != std::string::npos;
  }));
  // Kernel costs unchanged: still tested, no verdict.
  CHECK(figure(guest, "kernel: op=syscall_getppid median_ns").test.rfind("quantile", 0) == 0);
}

TEST_CASE("compare: a figure not tested in a VM is shown with its reason; a column without a row is not tested") {
  std::mt19937_64 random(42);
  const auto with_p90 = [&](const ProbeNoise& noise, bool guest) {
    Baseline b = run_with_probes(random, noise);
    for (BaselineProbe& p : b.probes)
      if (p.name == "c2c") {
        // The pair's samples back a p90 column as well.
        p.tables[0].columns.push_back("p90_ns");
        for (auto& row : p.tables[0].rows) row.push_back(Cell(row[3].number * 1.1, 1));
        for (ProbeSamples& s : p.samples) s.quantiles.emplace_back("p90_ns", 0.9);
      }
    if (guest) b.fingerprint.emplace_back("hypervisor", "yes");
    return b;
  };
  const std::string p90 = "pairs: cpu_a=0 cpu_b=1 relation=shared_l3 p90_ns";
  const FigureComparison bare = figure(compare_baselines(with_p90({}, false), "a", with_p90({}, false), "b"), p90);
  CHECK(bare.test.rfind("quantile 0.9", 0) == 0);
  const AppliedAllowance guest_p90 = allowance_for("c2c.p90_ns", true, {});
  if (!guest_p90.cv) {
    const FigureComparison vm = figure(compare_baselines(with_p90({}, false), "a", with_p90({}, true), "b"), p90);
    CHECK(vm.verdict == guest_p90.untested);
    CHECK(vm.test == "none (its run-to-run spread in a VM)");
    CHECK_FALSE(vm.run_to_run_p.has_value());
    CHECK_FALSE(vm.allowance.has_value());
    // --allowance tests it again.
    const FigureComparison set = figure(
        compare_baselines(with_p90({}, false), "a", with_p90({}, true), "b", {}, {{"c2c.p90_ns", 0.5}}), p90);
    CHECK(set.test.rfind("quantile 0.9", 0) == 0);
    CHECK(set.allowance == 0.5);
  }
  // A probe whose samples back a column no row of the table declares.
  Baseline before = run_with_probes(random, {}), after = run_with_probes(random, {3});
  before.probes[0].name = after.probes[0].name = "kernel_cost_elsewhere";
  const FigureComparison undeclared =
      figure(compare_baselines(before, "a", after, "b"), "kernel: op=syscall_getppid median_ns");
  CHECK(undeclared.verdict == "not tested (no run-to-run allowance)");
  CHECK(undeclared.change > 1);
}

TEST_CASE("compare: a max that rose never reads better, whatever the tail rate above it did") {
  std::mt19937_64 random(21);
  // Before: many gaps over 1 ms. After: few, but one stall of 5.4 s (a CPU going offline).
  Baseline before = synthetic_run(random, {800, 30}), after = synthetic_run(random, {200, 1});
  after.cpus[0].max_ns = 5.4e9;
  const Comparison c = compare_baselines(before, "a", after, "b");
  REQUIRE(figure(c, "gaps_over_1000us_per_s").verdict == "better");
  const FigureComparison& max = figure(c, "max_ns");
  CHECK(max.after > 100 * max.before);
  CHECK(max.verdict == "no significant change");
  CHECK_THAT(max.test, Catch::Contains("that rate fell, the max rose: not called"));
  // The other way round: a max that fell never reads worse.
  const Comparison back = compare_baselines(after, "b", before, "a");
  REQUIRE(figure(back, "gaps_over_1000us_per_s").verdict == "worse");
  CHECK(figure(back, "max_ns").verdict == "no significant change");
  // Where the max and the tail agree, the max keeps the tail's verdict.
  Baseline calm = synthetic_run(random, {200, 1});
  const Comparison agree = compare_baselines(before, "a", calm, "c");
  if (figure(agree, "max_ns").after < figure(agree, "max_ns").before)
    CHECK(figure(agree, "max_ns").verdict == figure(agree, "gaps_over_1000us_per_s").verdict);
}

TEST_CASE("compare: each tested row says the smallest change its allowance can call") {
  ChangeCriteria criteria;
  criteria.run_to_run_cv = 0.2;
  CHECK(smallest_called_ratio(criteria) == Approx(std::exp(3.2905 * std::sqrt(2.0) * 0.2)).epsilon(1e-3));
  CHECK(smallest_called_ratio(criteria) == Approx(2.54).epsilon(0.01));
  criteria.run_to_run_cv = 0.001;
  CHECK(smallest_called_ratio(criteria) == Approx(1.10));  // the practical effect, min_effect
  // A move just inside "needs" is never called, just outside it can be.
  criteria.run_to_run_cv = 0.2;
  const double needs = smallest_called_ratio(criteria);
  CHECK(judge(100, 100 * needs * 0.99, 1e-9, criteria) == Verdict::no_change);
  CHECK(judge(100, 100 * needs * 1.01, 1e-9, criteria) == Verdict::worse);
  CHECK(judge(100, 100 / (needs * 1.01), 1e-9, criteria) == Verdict::better);
  std::mt19937_64 random(22);
  const Comparison c = compare_baselines(synthetic_run(random, {}), "a", synthetic_run(random, {}), "b");
  for (const FigureComparison& f : c.figures) {
    REQUIRE(f.allowance);
    REQUIRE(f.needs);
    ChangeCriteria at = criteria;
    at.run_to_run_cv = *f.allowance;
    CHECK(*f.needs == Approx(smallest_called_ratio(at)));
  }
  const ProbeTable table = figures_table(c);
  CHECK(table.columns.back() == "needs");  // added after the existing columns: CSV and JSON keep theirs
}

TEST_CASE("compare's text: a summary line first, the verdict beside the change, 120 columns; --wide all") {
  std::mt19937_64 random(23);
  const ProbeNoise same;
  Baseline before = run_with_probes(random, same), after = run_with_probes(random, {});
  for (Baseline* b : {&before, &after}) {
    b->fingerprint.push_back({"hypervisor", "yes"});  // the guest allowances: some rows not tested, with reasons
    for (BaselineCpu& cpu : b->cpus) {
      cpu.max_ns *= 1000;  // long numbers, as a stall of seconds gives
      cpu.cpu = 127;
    }
  }
  Comparison c = compare_baselines(before, "/var/lib/before.json", after, "/var/lib/after.json");
  c.figures.push_back({"probe pacing", "pacing: method=counter target_per_s=100000 p50_late_ns", 10, 20, 1,
                       "none (pacer fell behind its schedule)", 1, "not tested (pacer fell behind its schedule)",
                       std::nullopt, std::nullopt, std::nullopt});
  const std::string text = format_comparison_table(c);
  CHECK(text.rfind("summary: ", 0) == 0);
  CHECK_THAT(text, Catch::Contains("worse,") && Catch::Contains("better,") && Catch::Contains("unchanged,") &&
                       Catch::Contains("not tested"));
  std::size_t longest = 0;
  bool in_table = false;
  for (const std::string_view line : split_lines(text)) {
    if (line.rfind("what it did", 0) == 0) in_table = true;
    if (line.rfind("note: ", 0) == 0) in_table = false;
    if (in_table) longest = std::max(longest, line.size());
    if (in_table && line.rfind("figure", 0) == 0) {
      // The verdict right after the change.
      CHECK(line.find("change") < line.find("verdict"));
      CHECK(line.find("verdict") < line.find("needs"));
      CHECK(line.find("p_value") == std::string_view::npos);
    }
  }
  CHECK(longest <= 120);
  CHECK_THAT(text,
             Catch::Contains("\n[1] not tested (pacer fell behind its schedule)\n"));  // a reason as a footnote
  CHECK_THAT(text, Catch::Contains("\ncpu 127\n  p50_ns "));  // the scope a heading over its rows
  const std::string wide = format_comparison_table(c, true);
  CHECK_THAT(wide, Catch::Contains("p_run_to_run") && Catch::Contains("p_value"));
}

TEST_CASE("compare: a CPU not sampled for part of a run (offline) is a note on that CPU") {
  std::mt19937_64 random(24);
  Baseline before = synthetic_run(random, {}), after = synthetic_run(random, {});
  after.cpus[0].sampled_seconds -= 3;  // 3 s of 8 without sub-windows: the CPU was away
  const Comparison c = compare_baselines(before, "a", after, "b");
  const auto note = std::find_if(c.notes.begin(), c.notes.end(), [](const std::string& n) {
    return n.rfind("cpu 1: not sampled for 3.0 s", 0) == 0;
  });
  REQUIRE(note != c.notes.end());
  CHECK_THAT(*note, Catch::Contains("of the 8 s of b"));
  CHECK(std::none_of(c.notes.begin(), c.notes.end(),
                     [](const std::string& n) { return n.find(" of a ") != std::string::npos; }));
  // A sampler in bursts samples its duty cycle's share of the run: that is no CPU gone, but a
  // shortfall beyond the share still is.
  for (const char* duty : {"0.5", "1:0.5 2:0.1"}) {
    Baseline bursts = synthetic_run(random, {});
    bursts.configuration.emplace_back("duty_cycle", duty);
    bursts.cpus[0].sampled_seconds = 0.5 * bursts.duration_seconds;
    const auto notes = compare_baselines(before, "a", bursts, "b").notes;
    CHECK(std::none_of(notes.begin(), notes.end(),
                       [](const std::string& n) { return n.find("not sampled for") != std::string::npos; }));
    bursts.cpus[0].sampled_seconds = 0.1 * bursts.duration_seconds;  // 3.2 s of the 4 s planned missing
    const auto short_notes = compare_baselines(before, "a", bursts, "b").notes;
    CHECK(std::any_of(short_notes.begin(), short_notes.end(),
                      [](const std::string& n) { return n.rfind("cpu 1: not sampled for", 0) == 0; }));
  }
}
