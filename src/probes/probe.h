// SPDX-License-Identifier: Apache-2.0
// The interface every periodic probe implements, and what it returns. A probe measures something
// once per run and hands back metric samples (plain data: only export/ knows prometheus-cpp) and
// tables of typed cells for `jitterd report`. The scheduler runs each probe on one of its two
// housekeeping threads (daemon/probe_scheduler.h: the readers' lane and the active probes'), so a
// probe's runs never overlap but two probes may run at once; work that must happen on a given CPU
// goes through ProbeContext::run_on_cpu, which pauses that CPU's sampler when it has one. run()
// may throw: a failure is reported as data, never fatal.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/affinity.h"
#include "host/host_reader.h"
#include "host/msr_pmu.h"
#include "host/posture.h"
#include "measure/counter_calibration.h"
#include "measure/cpu_figures.h"
#include "measure/histogram.h"
#include "measure/sampler_loop.h"
#include "measure/tick.h"
#include "measure/tick_scale.h"
#include "probes/stolen_series.h"
#include "watch/kernel_watch.h"
#include "watch/shared_bpf_watch.h"

namespace jitterd {

using ProbeLabels = std::vector<std::pair<std::string, std::string>>;

enum class ProbeMetricType { gauge, counter, histogram, summary };

struct ProbeMetric {
  std::string name;
  std::string help;
  ProbeMetricType type = ProbeMetricType::gauge;
  ProbeLabels labels;
  double value = 0;
  // Histograms: (upper bound in seconds, cumulative count); summaries: (quantile, value). Both
  // then count and sum of the observations.
  std::vector<std::pair<double, std::uint64_t>> buckets;
  std::vector<std::pair<double, double>> quantiles;
  std::uint64_t count = 0;
  double sum = 0;
};

// One cell of a report table, typed so that numbers stay numbers in JSON and CSV: nothing (a value
// that does not exist: null, an empty field, "-"), text, a boolean, an integer, or a number with
// the digits after the point a text table shows (JSON and CSV keep every digit). Probes never turn
// numbers into text for a table; cli/ renders cells.
struct Cell {
  enum class Kind { none, text, boolean, integer, number };
  Kind kind = Kind::none;
  std::string text;
  std::int64_t integer = 0;  // also a boolean's 0 or 1
  double number = 0;
  int decimals = 0;  // of a number, in a text table
  // The class of the cell's <td> on a page (report/html.h table_html), "" for none, when whoever
  // builds the table sets it (compare's verdicts: compare/comparison.h verdict_cell), in place of
  // the page's own ("num", "wrap"). Text, CSV and JSON ignore it.
  std::optional<std::string> html_class;

  bool is_number() const { return kind == Kind::integer || kind == Kind::number; }

  Cell() = default;
  Cell(std::string value) : kind(Kind::text), text(std::move(value)) {}
  Cell(const char* value) : kind(Kind::text), text(value) {}
  Cell(std::string_view value) : kind(Kind::text), text(value) {}
  explicit Cell(bool value) : kind(Kind::boolean), integer(value ? 1 : 0) {}
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) Cell(T value)
      : kind(Kind::integer), integer(static_cast<std::int64_t>(value)) {}
  Cell(double value, int digits) : kind(Kind::number), number(value), decimals(digits) {}

  bool operator==(const Cell&) const = default;
};

// How a page draws a table besides its cells (report/probe_section.h); the registry sets it from
// the probe's facts (probes/probe_registry.h shape_tables), so a page never asks which probe it is.
enum class TableShape {
  rows,          // the table alone
  checklist,     // its "status" column's PASS, WARN and FAIL coloured
  pair_heatmap,  // also a heatmap of its pairs (columns cpu_a, cpu_b, relation, median_ns)
};

struct ProbeTable {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  TableShape shape = TableShape::rows;  // not kept in files: shape_tables restores it
};

// The individual values behind quantiles a probe's table shows (a c2c pair's one-way latencies,
// an operation's costs, a pacer's lateness per send), kept so that `jitterd compare` can test one
// run against another (report/baseline_file.h saves them). `labels` are the key cells of the
// table row they belong to, by column ("op" = "fork_wait"; "cpu_a", "cpu_b", "relation"; "method",
// "target_per_s"); a row whose key cells are a subset of them (a c2c relation class) pools every
// matching record. `quantiles`: the columns these values back, each with the quantile it shows
// ("median_ns" = 0.5). Values are whole multiples of `unit_ns` nanoseconds (counter ticks, ticks
// per round trip, lateness bucket edges), each with how often it occurred, ascending.
struct ProbeSamples {
  ProbeLabels labels;
  std::vector<std::pair<std::string, double>> quantiles;
  double unit_ns = 1;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> values;
  bool operator==(const ProbeSamples&) const = default;
};

// (value, count) of each distinct value of `values`, ascending.
std::vector<std::pair<std::uint64_t, std::uint64_t>> grouped_values(std::vector<std::uint64_t> values);
// (highest value of the bucket, count) of each non-empty bucket: the edges quantile() returns.
std::vector<std::pair<std::uint64_t, std::uint64_t>> grouped_values(const HistogramSnapshot& histogram);

// What a probe is doing and why, which the operator should see once: the daemon logs it when it
// first appears and again only when it changes, across reloads too (a warning when the probe does
// less than the configuration asked for).
struct ProbeState {
  std::string line;  // "window_deltas (tracepoints: false in the configuration)"
  bool warning = false;
  bool operator==(const ProbeState&) const = default;
};

// What the posture probe read of the machine, typed: the facts every baseline's fingerprint is
// made of, and since when its fingerprint is unchanged. The status page and the live baseline
// read it here, not back from the exported metrics.
struct MachineReading {
  MachineFacts facts;
  double since_unix_seconds = 0;  // start-up, or the fingerprint's last change
  std::uint64_t changes = 0;      // fingerprint changes seen since jitterd started
};

// One application loop as the loops probe last read it (probes/loops_probe.h), typed: what the
// status page shows of it, read here and not back from the exported metrics.
struct LoopView {
  std::string file{};  // the segment's file name, jitterd-loop.NAME
  std::string loop{};  // its name, the `loop` label
  int cpu = 0;
  ProbeLabels labels{};  // the loop's own, besides loop and cpu
  std::int32_t pid = 0;
  bool up = false;
  std::string why{};                  // why it is down ("" while up)
  double last_seen_unix_seconds = 0;  // when its heartbeat last moved (0: never)
  bool warmed_up = false;             // its floor and threshold are known (in `window`)
  // Over the rolling window, as a sampled CPU's: span, quantiles, exact max, interruptions and
  // stolen time within it, floor and threshold. Not valid before two readings.
  CpuFigures window{};
  HistogramSnapshot window_gaps{};  // in the loop's counter ticks, within the window
  double ns_per_tick = 0;
  // Since the segment was made.
  std::uint64_t gaps = 0, interruptions = 0;
  double stolen_seconds = 0;
};

// A segment the loops probe refused, and why (docs/loops.md#refusals).
struct RefusedLoopSegment {
  std::string file{}, reason{}, why{};
};

struct LoopsReading {
  std::string directory{};
  std::vector<LoopView> loops{};  // by file name
  std::vector<RefusedLoopSegment> refused{};
  // Who took the loops' interruptions (the top preempters and sources, probes/watch_top.h), for
  // the loops' section of the status page; also among the probe's tables.
  std::vector<ProbeTable> who{};
  ProbeTable glance{};  // each loop's headline (probes/watch_glance.h), the top of the loops' section
};

struct ApplicationWindows;

struct ProbeResult {
  std::vector<ProbeMetric> metrics;
  std::vector<ProbeTable> tables;
  std::vector<std::string> notes;            // one line each: what the numbers mean, what was missing
  std::vector<std::string> warnings;         // one line each for the daemon's log: something changed
  std::map<std::string, ProbeState> states;  // by subject ("method"), each run
  std::vector<ProbeSamples> samples;         // what compare tests the table's quantiles with
  std::optional<MachineReading> machine;     // set by the posture probe only
  std::optional<LoopsReading> loops;         // set by the loops probe only
  // Set by the watch and loops probes: their per-reading figures over the samplers' window, for
  // the daemon's live baseline (probes/application_windows.h).
  std::shared_ptr<const ApplicationWindows> application_windows;
  // Set by the watch and loops probes: per watched CPU and per loop, the window's stolen time by
  // cause over time and its worst preempters, which the status page draws and /status.json holds.
  std::vector<StolenPlot> stolen;
};

// Thrown by ProbeContext::check_cancelled when the daemon is stopping.
struct ProbeCancelled : std::runtime_error {
  ProbeCancelled() : std::runtime_error("cancelled: the daemon is stopping") {}
};

struct SamplerCounterErrors {
  std::string smi, frequency;
};

struct ProbeContext {
  HostReader host{"/sys", "/proc"};
  TickMethod method = TickMethod::steady_clock;
  CounterFrequency frequency;  // the one the samplers convert with
  std::vector<int> sampled;
  std::vector<int> watched;  // the application's CPUs (watch.cpus): never run on, only read about
  std::vector<int> housekeeping;
  // Runs `work` on `cpu` and returns when it is done (rethrowing what it threw): on that CPU's
  // sampler thread with sampling paused if the CPU is sampled, else on a temporary pinned thread.
  std::function<void(int cpu, const std::function<void()>& work)> run_on_cpu;
  // The running sampler of `cpu` (its counters and interruption ring, which any thread may read),
  // or nullptr when the CPU is not sampled or its sampler is not running. Unset outside the daemon.
  std::function<const SamplerShared*(int cpu)> sampler_of;
  // The running sampler of `cpu`: its thread and threshold (nullopt as for sampler_of).
  std::function<std::optional<SamplerThread>(int cpu)> sampler_thread_of;
  // Why the running sampler of `cpu` does not count its CPU's SMIs, or its APERF/MPERF, though the
  // msr PMU has the events (its perf_event_open refused), "" when it counts them or there is no
  // sampler.
  std::function<SamplerCounterErrors(int cpu)> sampler_counter_errors_of;
  // What the machine's msr PMU counts (SMIs, APERF/MPERF), read once with the sampling plan.
  MsrPmu msr_pmu;
  // The context's one BPF engine (watch/shared_bpf_watch.h), shared by the watch, loops and
  // attribution probes; null when none wants it. Probes keep a copy of the pointer while they use it.
  std::shared_ptr<SharedBpfWatch> bpf;
  // The engine the watch probe opened (bpf or tracepoints), which the loops probe also reads its
  // loops' CPUs through; empty while the watch has none open. Null outside a made context.
  std::shared_ptr<WatchEngineSlot> watch_engine;
  // Set when the daemon stops; probes look at it between their units of work (a rate, a
  // calibration, a window), so a stop waits for at most one unit.
  std::shared_ptr<const std::atomic<bool>> cancel;
  void check_cancelled() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw ProbeCancelled();
  }
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string_view name() const = 0;
  virtual std::chrono::nanoseconds interval() const = 0;
  virtual ProbeResult run(ProbeContext& context) = 0;
};

// A probe configured by its section of ProbesSettings (`S`, with an `interval`): holds the settings
// and runs at their interval.
template <typename S>
class SettingsProbe : public Probe {
 public:
  explicit SettingsProbe(S settings) : settings_(std::move(settings)) {}
  std::chrono::nanoseconds interval() const override { return settings_.interval; }

 protected:
  S settings_;
};

// One run of a probe as the scheduler and `jitterd report` record it.
struct ProbeStatus {
  explicit ProbeStatus(std::string probe_name = "") : name(std::move(probe_name)) {}
  std::string name;
  bool ran = false;
  bool success = false;
  double duration_seconds = 0;
  double last_run_unix_seconds = 0;
  std::string error;
  ProbeResult result;  // of the last successful run
};

// The probes' last runs as the scheduler hands them out: each run an immutable snapshot, replaced
// (never changed) when the probe runs again, so a scrape or the status page takes pointers, not a
// copy of 50,000 metrics.
using ProbeStatuses = std::vector<std::shared_ptr<const ProbeStatus>>;
ProbeStatuses share_statuses(std::vector<ProbeStatus> statuses);

// Runs `probe` once on the calling thread and records how it went; what it throws becomes the
// status's error.
ProbeStatus run_probe(Probe& probe, ProbeContext& context);

// Helpers for probe implementations.
ProbeMetric gauge(std::string name, std::string help, ProbeLabels labels, double value);
// The same, typed as a counter (a name ending in _total).
ProbeMetric counter(std::string name, std::string help, ProbeLabels labels, double value);
// A histogram in seconds from a snapshot in `scale` units, with the given upper bounds.
ProbeMetric histogram_seconds(std::string name, std::string help, ProbeLabels labels,
                              const HistogramSnapshot& snapshot, const TickScale& scale,
                              const std::vector<double>& bounds, double sum_seconds);
// A summary of `count` observations summing to `sum`, with precomputed quantiles: 0 for the
// minimum and 1 for the maximum, as Go's go_gc_duration_seconds does.
ProbeMetric summary_metric(std::string name, std::string help, ProbeLabels labels,
                           std::vector<std::pair<double, double>> quantiles, std::uint64_t count, double sum);

}  // namespace jitterd
