// SPDX-License-Identifier: Apache-2.0
// Core-to-core (c2c) latency probe: the one-way cache-coherence latency between pairs of CPUs,
// measured by ping-pong on fresh cache lines (measure/ping_pong.h) with both sides running at once
// on the two CPUs' own threads (a sampled CPU's sampler, paused; any other CPU, when allowed, a
// temporary pinned thread). Pairs come from probes/c2c_pairs.h, labelled by topology relation; one
// run probes at most `budget` of them and the next run continues where it stopped, so the probe
// keeps the latest result of every pair it has measured and exports all of them each run.
// A C2cProbe is used by one thread at a time (the probe scheduler's); the free functions are pure
// apart from measure_pair, which runs threads through the context.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "measure/ping_pong.h"
#include "probes/c2c_pairs.h"
#include "probes/probe.h"

namespace jitterd {

// The probe's settings, as the `probes.c2c` section of the configuration sets them.
struct C2cSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::minutes(5)};
  PingPongMethod method = PingPongMethod::cas;
  std::size_t samples = 100;       // timed samples per pair, after one discarded warm-up
  std::size_t round_trips = 1000;  // per sample
  PairRequest pairs;
  std::size_t budget = 64;  // pairs per run
  bool allow_unsampled = false;
  // `jitterd report c2c`: exactly these CPUs are in scope, all treated as reachable.
  std::optional<std::vector<int>> cpus;
  bool operator==(const C2cSettings&) const = default;
};

// A side that waits this long for the other (at the start barrier or for one handoff) gives up,
// so a borrowed sampler is never held for ever: far above any handoff, even a vCPU preemption.
inline constexpr std::chrono::seconds kC2cSideTimeout{1};

// The CPUs the probe may pair: settings.cpus when given; else the sampled CPUs, plus every other
// online CPU when allow_unsampled.
std::vector<int> c2c_scope(const C2cSettings& settings, const std::vector<int>& sampled,
                           const std::vector<int>& online);

// Pairs planned for `settings` on this machine, read through `host`; errors name bad list entries.
PairPlan plan_c2c_pairs(const C2cSettings& settings, const HostReader& host, const std::vector<int>& sampled,
                        std::vector<std::string>* problems);

// The latest result of one pair, in seconds.
struct PairRecord {
  CpuPair pair;
  std::size_t samples = 0;
  double min = 0, p10 = 0, median = 0, p90 = 0;  // one-way latency, seconds
  double sum = 0;                                // of the samples' one-way latencies, seconds
  std::optional<int> line_node;                  // NUMA node of the line's page; nullopt if the kernel can't say
  double unix_seconds = 0;                       // when it was measured
  double duration_seconds = 0;                   // how long the pair took, line allocation included
  std::uint64_t failures = 0;                    // failed attempts since the probe started
  bool measured = false;                         // false while every attempt so far has failed
  // Each timed sample's ticks for 2 * round_trips one-way handoffs, warm-up dropped: compare
  // tests the pair's quantiles with them.
  std::vector<std::uint64_t> sample_ticks;
  std::size_t round_trips = 0;
  double counter_hertz = 0;
};

// Measures one pair: a fresh line allocated and first-touched on CPU a (the initiator), then the
// initiator on a and the responder on b at once. Throws std::runtime_error naming the pair when a
// side fails, times out or cannot be placed on its CPU.
PairRecord measure_pair(ProbeContext& context, const CpuPair& pair, const PingPongSettings& settings);

// Across the measured pairs of one relation class: the smallest, middle and largest median.
struct ClassSummary {
  CpuRelation relation = CpuRelation::cross_package;
  std::size_t pairs = 0;
  double min = 0, median = 0, max = 0;  // of the pairs' medians, seconds
  double sum = 0;                       // of the pairs' medians, seconds
};
std::vector<ClassSummary> summarize_classes(const std::vector<PairRecord>& records);

// The report's tables and the metrics for a set of records (measured ones only).
ProbeResult c2c_result(const std::vector<PairRecord>& records, const C2cSettings& settings,
                       std::size_t planned_pairs, std::size_t probed_this_run);

class C2cProbe : public SettingsProbe<C2cSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "c2c"; }
  ProbeResult run(ProbeContext& context) override;

 private:
  std::optional<PairPlan> plan_;  // made on the first run, kept until the probe is replaced
  PairCursor cursor_;
  std::map<std::pair<int, int>, PairRecord> records_;
};

}  // namespace jitterd
