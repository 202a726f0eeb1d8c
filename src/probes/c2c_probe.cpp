// SPDX-License-Identifier: Apache-2.0
#include "probes/c2c_probe.h"

#include <algorithm>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "host/cache_topology.h"
#include "host/cpu_list.h"
#include "host/text.h"
#include "host/topology.h"
#include "measure/clock_ns.h"

namespace jitterd {
namespace {

std::string node_text(const std::optional<int>& node) { return node ? std::to_string(*node) : "unknown"; }
Cell node_cell(const std::optional<int>& node) { return node ? Cell(*node) : Cell("unknown"); }

// Nanoseconds with one decimal: a cell, or text for the matrix's "median±spread".
Cell ns(double seconds) { return Cell(seconds * 1e9, 1); }
std::string ns_text(double seconds) { return decimal_text(seconds * 1e9, 1); }

// Half the p10..p90 range: the spread printed after ± in the matrix.
double spread(const PairRecord& r) { return (r.p90 - r.p10) / 2; }

ProbeLabels pair_labels(const PairRecord& r) {
  return {{"cpu_a", std::to_string(r.pair.a)}, {"cpu_b", std::to_string(r.pair.b)}};
}

// The pair's metrics, and its samples where its last run kept them.
void add_pair_metrics(const PairRecord& r, ProbeResult& result) {
  ProbeLabels labels = pair_labels(r);
  labels.emplace_back("relation", std::string(to_string(r.pair.relation)));
  if (r.measured) {
    result.metrics.push_back(
        summary_metric("jitterd_c2c_latency_seconds",
                       "One-way core-to-core latency of a CPU pair (round trip / 2) over its last run's "
                       "samples (quantile 0 is the minimum).",
                       labels, {{0, r.min}, {0.1, r.p10}, {0.5, r.median}, {0.9, r.p90}}, r.samples, r.sum));
    ProbeLabels info = labels;
    info.insert(info.end(), {{"node_a", node_text(r.pair.node_a)},
                             {"node_b", node_text(r.pair.node_b)},
                             {"line_node", node_text(r.line_node)}});
    result.metrics.push_back(
        gauge("jitterd_c2c_pair_info",
              "Always 1: a measured CPU pair with its relation, the NUMA nodes of its CPUs and of the "
              "cache line (first-touched by cpu_a).",
              info, 1));
    result.metrics.push_back(gauge("jitterd_c2c_pair_last_measured_timestamp_seconds",
                                   "When the pair was last measured (Unix time).", pair_labels(r),
                                   r.unix_seconds));
    if (!r.sample_ticks.empty() && r.round_trips > 0 && r.counter_hertz > 0)
      result.samples.push_back({labels,
                                {{"p10_ns", 0.1}, {"median_ns", 0.5}, {"p90_ns", 0.9}},
                                1e9 / r.counter_hertz / (2.0 * static_cast<double>(r.round_trips)),
                                grouped_values(r.sample_ticks)});
  }
  result.metrics.push_back(
      counter("jitterd_c2c_pair_failures_total",
              "Attempts to measure the pair that failed (a side timed out or could not run on its CPU).",
              pair_labels(r), static_cast<double>(r.failures)));
}

// Every attempted pair has its cell: a pair whose every attempt failed reads "failed", so a CPU
// that could not be paired is shown, not dropped.
ProbeTable matrix_table(const std::vector<PairRecord>& records, const C2cSettings& settings) {
  std::vector<int> cpus;
  for (const PairRecord& r : records) cpus.insert(cpus.end(), {r.pair.a, r.pair.b});
  cpus = sorted_cpus(std::move(cpus));
  ProbeTable table{"one-way latency in ns, median ± half the p10..p90 spread (" +
                       std::string(to_string(settings.method)) + ", " + std::to_string(settings.samples) +
                       " samples × " + std::to_string(settings.round_trips) +
                       " round trips); row and column are the two CPUs",
                   {"cpu"},
                   {}};
  for (int cpu : cpus) table.columns.push_back(std::to_string(cpu));
  std::map<std::pair<int, int>, const PairRecord*> by_cpus;
  for (const PairRecord& r : records) by_cpus[{r.pair.a, r.pair.b}] = &r;
  // The lower triangle, as core-to-core-latency prints it: row b, column a < b.
  for (int row : cpus) {
    std::vector<Cell> cells{row};
    for (int column : cpus) {
      const auto it = column < row ? by_cpus.find({column, row}) : by_cpus.end();
      if (it == by_cpus.end())
        cells.push_back("");
      else if (!it->second->measured)
        cells.push_back("failed");
      else
        cells.push_back(ns_text(it->second->median) + "±" + ns_text(spread(*it->second)));
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

ProbeTable pairs_table(const std::vector<PairRecord>& records) {
  ProbeTable table{"pairs (line allocated and first touched by cpu_a, the initiator)",
                   {"cpu_a", "cpu_b", "relation", "node_a", "node_b", "line_node", "samples", "min_ns", "p10_ns",
                    "median_ns", "p90_ns", "pair_ms", "failures"},
                   {}};
  for (const PairRecord& r : records) {
    std::vector<Cell> row{r.pair.a, r.pair.b, to_string(r.pair.relation), node_cell(r.pair.node_a),
                          node_cell(r.pair.node_b)};
    if (r.measured) {
      row.insert(row.end(), {node_cell(r.line_node), r.samples, ns(r.min), ns(r.p10), ns(r.median), ns(r.p90),
                             Cell(r.duration_seconds * 1e3, 1)});
    } else {
      row.insert(row.end(), 7, Cell());
    }
    row.push_back(r.failures);
    table.rows.push_back(std::move(row));
  }
  return table;
}

void add_summary_notes(const std::vector<PairRecord>& measured, ProbeResult& result) {
  if (measured.empty()) return;
  const auto by_median = [](const PairRecord& l, const PairRecord& r) { return l.median < r.median; };
  const PairRecord& low = *std::min_element(measured.begin(), measured.end(), by_median);
  const PairRecord& high = *std::max_element(measured.begin(), measured.end(), by_median);
  const auto line = [](const char* what, const PairRecord& r) {
    return std::string(what) + " latency: " + ns_text(r.median) + " ns ±" + ns_text(spread(r)) + " cpus: (" +
           std::to_string(r.pair.a) + "," + std::to_string(r.pair.b) + ") " +
           std::string(to_string(r.pair.relation));
  };
  result.notes.push_back(line("min", low));
  result.notes.push_back(line("max", high));
  const double sum = std::accumulate(measured.begin(), measured.end(), 0.0,
                                     [](double s, const PairRecord& r) { return s + r.median; });
  result.notes.push_back("mean latency: " + ns_text(sum / static_cast<double>(measured.size())) + " ns over " +
                         std::to_string(measured.size()) + " pairs (mean of the pairs' medians)");
}

}  // namespace

std::vector<int> c2c_scope(const C2cSettings& settings, const std::vector<int>& sampled,
                           const std::vector<int>& online) {
  std::vector<int> scope = settings.cpus ? *settings.cpus : sampled;
  if (!settings.cpus && settings.allow_unsampled) scope.insert(scope.end(), online.begin(), online.end());
  return sorted_cpus(std::move(scope));
}

PairPlan plan_c2c_pairs(const C2cSettings& settings, const HostReader& host, const std::vector<int>& sampled,
                        std::vector<std::string>* problems) {
  const Topology topology = read_topology(host);
  const std::vector<CpuPlacement> placements = read_placements(host, topology, problems);
  const std::vector<int> scope = c2c_scope(settings, sampled, topology.online);
  // In a report every CPU in scope is reached the same way: all count as "sampled".
  return plan_pairs(settings.pairs, scope, settings.cpus ? scope : sampled, placements);
}

PairRecord measure_pair(ProbeContext& context, const CpuPair& pair, const PingPongSettings& settings) {
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<PingPongLines> lines;
  context.run_on_cpu(pair.a, [&] { lines = make_ping_pong_lines(); });
  // Both sides at once: the responder from a helper thread, the initiator from this one. Whichever
  // cannot run sets abort, so the other stops waiting at the barrier instead of timing out.
  bool responder_ok = false;
  std::exception_ptr responder_error;
  std::thread responder([&] {
    try {
      context.run_on_cpu(pair.b, [&] { responder_ok = ping_pong_responder(context.method, *lines, settings); });
    } catch (...) {
      responder_error = std::current_exception();
      lines->abort.store(true, std::memory_order_relaxed);
    }
  });
  std::optional<std::vector<std::uint64_t>> ticks;
  std::exception_ptr initiator_error;
  try {
    context.run_on_cpu(pair.a, [&] { ticks = ping_pong_initiator(context.method, *lines, settings); });
  } catch (...) {
    initiator_error = std::current_exception();
    lines->abort.store(true, std::memory_order_relaxed);
  }
  responder.join();
  const auto fail = [&](const std::string& why) {
    throw std::runtime_error(pair_name(pair.a, pair.b) + ": " + why);
  };
  for (const auto& [side, cpu, error] :
       {std::tuple{"initiator", pair.a, initiator_error}, {"responder", pair.b, responder_error}}) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      fail(std::string(side) + " on cpu " + std::to_string(cpu) + ": " + e.what());
    }
  }
  if (!ticks || !responder_ok) {
    fail("a side waited more than " + std::to_string(kC2cSideTimeout.count()) + " s for the other and gave up");
  }
  const OneWayLatency latency = one_way_latency(*ticks, settings.round_trips);
  const double hz = context.frequency.hertz;
  PairRecord record;
  record.pair = pair;
  record.samples = latency.samples;
  record.min = latency.min_ticks / hz;
  record.p10 = latency.p10_ticks / hz;
  record.median = latency.median_ticks / hz;
  record.p90 = latency.p90_ticks / hz;
  record.sum = latency.sum_ticks / hz;
  record.line_node = numa_node_of(lines.get());
  record.unix_seconds = unix_seconds();
  record.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  record.measured = true;
  record.sample_ticks.assign(ticks->begin() + (ticks->empty() ? 0 : 1), ticks->end());
  record.round_trips = settings.round_trips;
  record.counter_hertz = hz;
  return record;
}

std::vector<ClassSummary> summarize_classes(const std::vector<PairRecord>& records) {
  std::vector<ClassSummary> out;
  for (CpuRelation relation : kCpuRelations) {
    std::vector<double> medians;
    for (const PairRecord& r : records) {
      if (r.measured && r.pair.relation == relation) medians.push_back(r.median);
    }
    if (medians.empty()) continue;
    std::sort(medians.begin(), medians.end());
    // The lower middle for an even count: a value some pair actually had.
    out.push_back({relation, medians.size(), medians.front(), medians[(medians.size() - 1) / 2], medians.back(),
                   std::accumulate(medians.begin(), medians.end(), 0.0)});
  }
  return out;
}

ProbeResult c2c_result(const std::vector<PairRecord>& records, const C2cSettings& settings,
                       std::size_t planned_pairs, std::size_t probed_this_run) {
  ProbeResult result;
  std::vector<PairRecord> measured;
  for (const PairRecord& r : records) {
    add_pair_metrics(r, result);
    if (r.measured) measured.push_back(r);
  }
  ProbeTable classes{
      "relation classes (over the pairs' medians)", {"relation", "pairs", "min_ns", "median_ns", "max_ns"}, {}};
  for (const ClassSummary& c : summarize_classes(records)) {
    const std::string relation(to_string(c.relation));
    result.metrics.push_back(
        summary_metric("jitterd_c2c_class_pair_median_latency_seconds",
                       "Median one-way latencies of the measured pairs of a relation class, one "
                       "observation per pair (quantile 0 the smallest, 1 the largest).",
                       {{"relation", relation}}, {{0, c.min}, {0.5, c.median}, {1, c.max}}, c.pairs, c.sum));
    classes.rows.push_back({relation, c.pairs, ns(c.min), ns(c.median), ns(c.max)});
  }
  result.metrics.push_back(gauge("jitterd_c2c_planned_pairs",
                                 "CPU pairs the c2c probe plans to measure, over all its runs.", {},
                                 static_cast<double>(planned_pairs)));
  result.metrics.push_back(
      gauge("jitterd_c2c_measured_pairs",
            "CPU pairs with a result so far (planned pairs whose every attempt failed are not).", {},
            static_cast<double>(measured.size())));
  result.metrics.push_back(gauge("jitterd_c2c_last_run_attempted_pairs",
                                 "CPU pairs the c2c probe's last run attempted (at most its budget).", {},
                                 static_cast<double>(probed_this_run)));
  result.tables.push_back(matrix_table(records, settings));
  result.tables.push_back(pairs_table(records));
  result.tables.push_back(std::move(classes));
  add_summary_notes(measured, result);
  return result;
}

ProbeResult C2cProbe::run(ProbeContext& context) {
  if (!(context.frequency.hertz > 0)) throw std::runtime_error("no counter frequency: cannot time the pairs");
  if (!plan_) {
    std::vector<std::string> problems;
    PairPlan plan = plan_c2c_pairs(settings_, context.host, context.sampled, &problems);
    if (!plan.errors.empty())
      throw std::runtime_error("probes.c2c.pairs: " + joined_with(plan.error_texts(), "; "));
    plan.notes.insert(plan.notes.end(), problems.begin(), problems.end());
    plan_ = std::move(plan);
  }
  const std::size_t budget = settings_.cpus ? plan_->pairs.size() : settings_.budget;
  const std::vector<CpuPair> chosen = next_pairs(plan_->pairs, cursor_, budget);
  const PingPongSettings ping_pong{settings_.method, settings_.samples, settings_.round_trips,
                                   static_cast<std::uint64_t>(context.frequency.hertz * kC2cSideTimeout.count())};
  std::vector<std::string> failures;
  for (const CpuPair& pair : chosen) {
    context.check_cancelled();
    PairRecord& record = records_[{pair.a, pair.b}];
    try {
      const std::uint64_t failed_before = record.failures;
      record = measure_pair(context, pair, ping_pong);
      record.failures = failed_before;
    } catch (const std::exception& e) {
      record.pair = pair;
      ++record.failures;
      failures.push_back(e.what());
    }
  }
  std::vector<PairRecord> records;
  for (const auto& [cpus, record] : records_) records.push_back(record);
  ProbeResult result = c2c_result(records, settings_, plan_->pairs.size(), chosen.size());
  // Failed pairs are data (their counters and their last good numbers stay exported), not a
  // failed run: a run that threw would hide jitterd_c2c_pair_failures_total when it matters.
  for (const std::string& failure : failures) result.warnings.push_back("pair failed: " + failure);
  result.notes.insert(result.notes.end(), plan_->notes.begin(), plan_->notes.end());
  if (plan_->pairs.empty()) {
    result.notes.push_back(
        "no pair to measure: fewer than two CPUs in scope (set probes.c2c.allow_unsampled to pair "
        "sampled CPUs with the others)");
  }
  for (const std::string& failure : failures) result.notes.push_back("failed: " + failure);
  const double tick_ns = 1e9 / context.frequency.hertz;
  result.notes.push_back("resolution: one sample is " + std::to_string(settings_.round_trips) +
                         " round trips timed by the counter, so one-way values step by " +
                         decimal_text(tick_ns / (2.0 * static_cast<double>(settings_.round_trips)), 4) + " ns");
  return result;
}

}  // namespace jitterd
