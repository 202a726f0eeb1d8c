// SPDX-License-Identifier: Apache-2.0
// The c2c probe: its statistics and exports on synthetic pair records, its scope rules, a real
// pair measured with both sides at once (skipped on a single CPU), and a pair whose side cannot
// run failing fast with the CPU named instead of hanging for the timeout.
#include "probes/c2c_probe.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>

#include "probe_result_lookup.h"
#include "sampling/sampling_plan.h"

using namespace jitterd;
using namespace std::chrono_literals;
using jitterd::testing::named;

namespace {

PairRecord record(int a, int b, CpuRelation relation, double median_ns, double spread_ns = 2) {
  PairRecord r;
  r.pair = CpuPair{a, b, relation, 0, b < 8 ? 0 : 1};
  r.samples = 100;
  r.median = median_ns * 1e-9;
  r.min = (median_ns - spread_ns) * 1e-9;
  r.p10 = (median_ns - spread_ns / 2) * 1e-9;
  r.p90 = (median_ns + spread_ns / 2) * 1e-9;
  r.sum = median_ns * 1e-9 * 100;
  r.line_node = 0;
  r.unix_seconds = 1.8e9;
  r.measured = true;
  return r;
}

std::map<std::string, std::string> labels_of(const ProbeMetric& m) { return {m.labels.begin(), m.labels.end()}; }

ProbeContext pinned_context() {
  ProbeContext c;
  c.method = default_tick_method();
  c.frequency = counter_frequency(c.method, 50ms);
  c.housekeeping = current_affinity();
  c.run_on_cpu = run_on_pinned_thread;
  return c;
}

PingPongSettings quick(const ProbeContext& c) {
  return PingPongSettings{PingPongMethod::cas, 20, 200, static_cast<std::uint64_t>(c.frequency.hertz)};
}

}  // namespace

TEST_CASE("class summaries: min, lower middle and max of the pairs' medians, per class present", "[c2c]") {
  const std::vector<PairRecord> records = {
      record(0, 8, CpuRelation::smt_sibling, 8), record(1, 9, CpuRelation::smt_sibling, 10),
      record(0, 1, CpuRelation::shared_l3, 40),  record(0, 2, CpuRelation::shared_l3, 30),
      record(1, 2, CpuRelation::shared_l3, 50),  record(0, 16, CpuRelation::cross_package, 140)};
  PairRecord failed = record(2, 16, CpuRelation::cross_package, 999);
  failed.measured = false;  // never measured: no part in any summary
  std::vector<PairRecord> with_failed = records;
  with_failed.push_back(failed);

  const std::vector<ClassSummary> classes = summarize_classes(with_failed);
  REQUIRE(classes.size() == 3);
  CHECK(classes[0].relation == CpuRelation::smt_sibling);
  CHECK(classes[0].pairs == 2);
  CHECK(classes[0].min == Approx(8e-9));
  CHECK(classes[0].median == Approx(8e-9));  // lower middle of two
  CHECK(classes[0].max == Approx(10e-9));
  CHECK(classes[0].sum == Approx(18e-9));
  CHECK(classes[1].relation == CpuRelation::shared_l3);
  CHECK(classes[1].median == Approx(40e-9));
  CHECK(classes[2].relation == CpuRelation::cross_package);
  CHECK(classes[2].pairs == 1);
  CHECK(classes[2].max == Approx(140e-9));
  CHECK(summarize_classes({}).empty());
}

TEST_CASE("c2c result: per-pair stats, info, failures and class series; matrix lower triangle", "[c2c]") {
  C2cSettings settings;
  PairRecord failed = record(2, 16, CpuRelation::cross_package, 0);
  failed.measured = false;
  failed.failures = 3;
  const std::vector<PairRecord> records = {record(0, 1, CpuRelation::shared_l3, 40),
                                           record(0, 16, CpuRelation::cross_package, 140), failed};
  const ProbeResult result = c2c_result(records, settings, 5, 2);

  const auto latency = named(result, "jitterd_c2c_latency_seconds");
  REQUIRE(latency.size() == 2);  // a summary for each measured pair, none for the failed one
  for (const ProbeMetric* m : latency) {
    CHECK(m->type == ProbeMetricType::summary);
    std::vector<double> quantiles;
    for (const auto& [q, v] : m->quantiles) quantiles.push_back(q);
    CHECK(quantiles == std::vector<double>{0, 0.1, 0.5, 0.9});
    CHECK(m->count == 100);
  }
  CHECK(labels_of(*latency[1]).at("relation") == "cross_package");
  CHECK(latency[1]->quantiles[2].second == Approx(140e-9));
  CHECK(latency[1]->quantiles[0].second == Approx(138e-9));
  CHECK(latency[1]->sum == Approx(140e-9 * 100));
  const auto info = named(result, "jitterd_c2c_pair_info");
  REQUIRE(info.size() == 2);
  CHECK(labels_of(*info[1]).at("node_b") == "1");
  CHECK(labels_of(*info[1]).at("line_node") == "0");
  const auto failures = named(result, "jitterd_c2c_pair_failures_total");
  REQUIRE(failures.size() == 3);
  CHECK(failures[2]->type == ProbeMetricType::counter);
  CHECK(failures[2]->value == 3);
  const auto classes = named(result, "jitterd_c2c_class_pair_median_latency_seconds");
  REQUIRE(classes.size() == 2);
  CHECK(classes[0]->type == ProbeMetricType::summary);
  CHECK(classes[0]->count == 1);  // one measured pair per class here
  CHECK(classes[1]->quantiles.back() == std::pair<double, double>{1, 140e-9});
  CHECK(named(result, "jitterd_c2c_class_pairs").empty());  // the summary's count says it
  CHECK(named(result, "jitterd_c2c_planned_pairs")[0]->value == 5);
  CHECK(named(result, "jitterd_c2c_measured_pairs")[0]->value == 2);
  CHECK(named(result, "jitterd_c2c_last_run_attempted_pairs")[0]->value == 2);
  CHECK(named(result, "jitterd_c2c_pair_last_measured_timestamp_seconds").size() == 2);

  REQUIRE(result.tables.size() == 3);
  const ProbeTable& matrix = result.tables[0];
  // The failed pair keeps its CPUs in the matrix, its cell saying so.
  CHECK(matrix.columns == std::vector<std::string>{"cpu", "0", "1", "2", "16"});
  REQUIRE(matrix.rows.size() == 4);
  CHECK(matrix.rows[0] == std::vector<Cell>{0, "", "", "", ""});
  CHECK(matrix.rows[1] == std::vector<Cell>{1, "40.0±1.0", "", "", ""});
  CHECK(matrix.rows[2] == std::vector<Cell>{2, "", "", "", ""});
  CHECK(matrix.rows[3] == std::vector<Cell>{16, "140.0±1.0", "", "failed", ""});
  CHECK(result.tables[1].rows.size() == 3);  // the failed pair is listed, without numbers
  CHECK(result.tables[1].rows[2][6] == Cell());
  const Cell& median = result.tables[1].rows[0][9];  // median_ns: a number, not text
  REQUIRE(median.kind == Cell::Kind::number);
  CHECK(median.number == Approx(40.0));
  CHECK(median.decimals == 1);
  REQUIRE(result.notes.size() >= 3);
  CHECK(result.notes[0] == "min latency: 40.0 ns ±1.0 cpus: (0,1) shared_l3");
  CHECK(result.notes[1] == "max latency: 140.0 ns ±1.0 cpus: (0,16) cross_package");
  CHECK(result.notes[2] == "mean latency: 90.0 ns over 2 pairs (mean of the pairs' medians)");
}

TEST_CASE("c2c scope: sampled CPUs only unless unsampled ones are allowed; a report's CPUs as given", "[c2c]") {
  C2cSettings settings;
  CHECK(c2c_scope(settings, {3, 1}, {0, 1, 2, 3}) == std::vector<int>{1, 3});
  settings.allow_unsampled = true;
  CHECK(c2c_scope(settings, {3, 1}, {0, 1, 2, 3}) == std::vector<int>{0, 1, 2, 3});
  settings.cpus = std::vector<int>{5, 4};
  CHECK(c2c_scope(settings, {3, 1}, {0, 1, 2, 3}) == std::vector<int>{4, 5});
}

TEST_CASE("c2c: a real pair, both sides at once, gives a plausible one-way latency", "[c2c][concurrency]") {
  const std::vector<int> cpus = current_affinity();
  if (cpus.size() < 2) {
    WARN("skipped: this process may run on only " << cpus.size() << " CPU(s); a pair needs two");
    return;
  }
  ProbeContext context = pinned_context();
  for (const PingPongMethod method : {PingPongMethod::cas, PingPongMethod::two_lines}) {
    PingPongSettings settings = quick(context);
    settings.method = method;
    const PairRecord r = measure_pair(context, CpuPair{cpus[0], cpus[1], CpuRelation::shared_l3, 0, 0}, settings);
    INFO(to_string(method) << " median " << r.median * 1e9 << " ns");
    CHECK(r.measured);
    CHECK(r.samples == 20);
    // A cache-line transfer takes tens to hundreds of ns; under emulation or a loaded host up to
    // microseconds. Zero or milliseconds would mean the two sides never really met.
    CHECK(r.median > 1e-9);
    CHECK(r.median < 100e-6);
    CHECK(r.min <= r.p10);
    CHECK(r.p10 <= r.median);
    CHECK(r.median <= r.p90);
    CHECK(r.duration_seconds > 0);
  }
}

TEST_CASE("c2c: a side that cannot run on its CPU fails the pair at once, naming the CPU", "[c2c][concurrency]") {
  const std::vector<int> cpus = current_affinity();
  ProbeContext context = pinned_context();
  const int missing = 1000;  // no machine this runs on has it online
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(
      measure_pair(context, CpuPair{cpus[0], missing, CpuRelation::cross_package, 0, 0}, quick(context)),
      Catch::Contains("pair (" + std::to_string(cpus[0]) + ", 1000): responder on cpu 1000"));
  // The initiator saw the abort instead of waiting out the 1 s timeout.
  CHECK(std::chrono::steady_clock::now() - started < 900ms);
}

TEST_CASE("c2c probe: runs every planned pair of a report at once and exports them", "[c2c][concurrency]") {
  const std::vector<int> cpus = current_affinity();
  if (cpus.size() < 2) {
    WARN("skipped: this process may run on only " << cpus.size() << " CPU(s); a pair needs two");
    return;
  }
  ProbeContext context = pinned_context();
  C2cSettings settings;
  settings.samples = 10;
  settings.round_trips = 100;
  settings.pairs.selection = PairSelection::all;
  settings.cpus = std::vector<int>{cpus[0], cpus[1]};
  C2cProbe probe(settings);
  const ProbeResult result = probe.run(context);
  CHECK(named(result, "jitterd_c2c_latency_seconds").size() == 1);
  CHECK(named(result, "jitterd_c2c_planned_pairs")[0]->value == 1);
  CHECK(named(result, "jitterd_c2c_measured_pairs")[0]->value == 1);
}
