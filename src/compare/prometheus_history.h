// SPDX-License-Identifier: Apache-2.0
// `jitterd compare --prometheus URL --instance I --before RANGE --after RANGE`: a second source
// of Baselines, read from what Prometheus scraped from a running jitterd instead of from files,
// so that compare's tests, verdicts and renderers stay the one mechanism.
//
// Per range one query, SELECTOR[D] evaluated at the range's end: the raw samples of the gap
// histogram's cumulative buckets, the sampled, interruption and stolen-time counters, the
// per-CPU gauges (floor, threshold, window max) and the _info series (tick, fingerprint,
// governor, clocksource, build). Counters become increments between consecutive scrapes, a
// drop being a restart from 0 (the rule of PromQL's increase(), without its extrapolation to the
// range's edges, so counts stay whole); the increments are summed per sub-window (by the scrape
// that ended them) and over the range. The histogram has the exported `le` bounds only
// (measure/gap_bounds.h gap_bounds_seconds()): quantiles are bucket upper bounds, and the tail
// thresholds are the exported bounds at or above the file's (20 us becomes 25 us).
// Pure functions apart from read_prometheus_ranges; called once from compare.
#pragma once

#include <string>
#include <vector>

#include "compare/prometheus_client.h"
#include "compare/time_range.h"
#include "report/baseline_file.h"

namespace jitterd {

// What one range's query answered (a "matrix" result), and where it came from.
struct RangeSamples {
  TimeRange range;
  std::string instance;
  std::string source;  // "URL instance I range R", compare's name for this side
  Json matrix;         // the result list: [{"metric": {labels}, "values": [[t, "v"], ...]}]
};

// The baseline of one range, and what compare should say about it (resets, a fingerprint that
// changed inside the range, series that are absent).
struct HistoryBaseline {
  Baseline baseline;
  std::vector<std::string> notes;
};

// The series one range reads, as a PromQL range selector for `instance` (label value escaped).
std::string history_selector(const std::string& instance, double seconds);

// Median time between scrapes of the sampled-seconds counters; 0 with fewer than 2 scrapes.
double scrape_interval_seconds(const RangeSamples& samples);

// `sub_window_seconds`: the same for both ranges. Throws BaselineError (65) naming the source
// when the range holds no sampled CPU, loop or watched CPU with two scrapes, its series have the wrong shape (a value
// that is not a finite number included), or it holds more than kBaselineMaxCpus CPUs.
HistoryBaseline baseline_from_samples(const RangeSamples& samples, double sub_window_seconds);

// The result list of a range query's `data` ({"resultType": "matrix", "result": [...]}), moved
// out of it. Throws BaselineError (65) naming `where` when it is not a matrix.
Json range_result(Json data, const std::string& where);

// The query of one range, with the checks that tell an unknown instance from an empty range.
// Throws BaselineError (69, 65; see prometheus_client.h).
RangeSamples read_range(const PrometheusClient& client, const std::string& instance, const TimeRange& range);

}  // namespace jitterd
