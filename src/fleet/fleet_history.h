// SPDX-License-Identifier: Apache-2.0
// The hosts of `jitterd fleet` read from Prometheus (docs/fleet.md, "How fleet reads Prometheus"):
// who is in the fleet (the jitterd_fingerprint_info series matching --where, seen at up to 100
// instants of the range), and each host's per-CPU figures over the range, from queries batched
// over up to 250 hosts (an `instance=~"a|b|..."` matcher), never one query per host. The cost does
// not grow with the scrapes in the range: each counter is read at the range's two ends
// (fleet/fleet_ends.h: last_over_time(...[LOOKBACK]) at START and at END, LOOKBACK three scrape
// intervals, the interval inferred from the fingerprint series of up to three hosts in the range's
// last hour), and only the hosts whose ends cannot be trusted (a restart, a counter that
// fell, a missing start time, a clock ahead of Prometheus's, scrapes that stop or begin inside the
// range) are read in full, as before:
//   sum by (instance, cpu, le) (increase(jitterd_sampler_gap_seconds_bucket{...}[RANGE]))
//   sum by (instance, cpu) (increase(jitterd_sampler_{sampled_seconds,interruptions,stolen_seconds}_total{...}[RANGE]))
// increase() counts a counter reset as compare --prometheus does, and extrapolates to the range's
// edges (so counts are not whole; the quantiles are ratios of counts and do not move by it). Per
// CPU: p50/p99/p99.9/p99.99 as the exported bucket upper bound holding the rank (the largest finite
// bound for the +Inf bucket), interruptions per sampled second, stolen seconds per sampled second,
// and the gaps over each tail threshold (the exported bound at or above each of
// report/baseline_file.h kTailThresholdsNs) per sampled second.
// A full read's batch is sized so that the samples it loads stay under Prometheus's default
// --query.max-samples (50 million); a batch the server still refuses as too big
// (compare/prometheus_client.h QueryTooLarge: Prometheus' too many samples, VictoriaMetrics'
// samples or series limits) is halved and asked again.
// Throws BaselineError: 65 no host in the range, a host's series of the wrong shape, a refusal at
// one host, a query form the server does not evaluate; 64 a --by or --class field no fingerprint
// series has; 69 (prometheus_client.h).
// Pure functions apart from read_fleet_history; call from one thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "compare/prometheus_client.h"
#include "compare/time_range.h"
#include "report/baseline_file.h"  // BaselineError

namespace jitterd {

// What to read: the range, the fingerprint selection, the cohort and class fields.
struct FleetSelection {
  TimeRange range;
  std::string by;                         // the cohort field (a label of jitterd_fingerprint_info)
  std::string where;                      // PromQL label matchers, as inside {...}; "" for every host
  std::vector<std::string> class_fields;  // with cpu_model: the drift classes
};

inline constexpr const char* kFingerprintSeries = "jitterd_fingerprint_info";
inline constexpr int kExitFleetUsage = 64;  // a field the fingerprint series has not

struct FleetHost {
  std::string instance;
  std::map<std::string, std::string> fingerprint;  // every label but __name__ and instance
  std::map<int, std::vector<double>> cpus;         // per sampled CPU, one value per figure name
  // The application's side (fleet/fleet_application.h), absent where the host has none: per
  // watched CPU, one value per watched figure name; per loop (its index in loop_names), one value
  // per loop figure name.
  std::map<int, std::vector<double>> watched = {};
  std::map<int, std::vector<double>> loops = {};
  // The wall-clock seconds its counters counted over the range (END - START, or from its
  // samplers' start when they started inside it): the watched CPUs' per-second figures' time.
  double counted_seconds = 0;
};

// A host read in full (increase() over the range) rather than at the range's ends, and why.
struct FleetRead {
  std::string instance, why;
};

// How the hosts were read.
struct FleetReads {
  double scrape_interval = 0;      // seconds, inferred
  double lookback = 0;             // seconds, of each read at an end
  std::size_t at_ends = 0;         // hosts read at the ends
  std::size_t started_inside = 0;  // of those, hosts whose samplers started inside the range
  std::vector<FleetRead> in_full;
};

struct FleetHistory {
  std::vector<FleetHost> hosts;                   // by instance
  std::vector<std::string> figure_names;          // p50_ns, ..., gaps_over_25us_per_s
  std::vector<std::string> watched_figure_names;  // irqs_per_s, ... (fleet/fleet_application.h)
  std::vector<std::string> loop_figure_names;     // a sampled CPU's: p50_ns, ...
  std::vector<std::string> loop_names;            // every loop name read, in the order first seen
  std::vector<std::string> left_out;              // "host: why" (changed cohort inside the range, no samples)
  std::vector<std::string> notes;
  std::size_t queries = 0;
  double most_scrapes = 0;  // of one fingerprint series: the instants of the range it was seen at
  FleetReads reads;
};

// The fingerprints of a count_over_time(last_over_time(jitterd_fingerprint_info{...}[LOOKBACK])[RANGE:STEP])
// answer's result: one host per instance, the label set seen most where it changed in fields other
// than --by, cpu_model and the --class fields; a host whose --by, cpu_model or --class value
// changed inside the range is left out and listed. Throws as above.
FleetHistory fleet_hosts(const Json& result, const FleetSelection& selection, const std::string& source);

// The BaselineError (65) of a range with no fingerprint series matching --where.
[[noreturn]] void throw_no_host(const FleetSelection& selection, const std::string& source);

// `instance=~"..."` matching exactly these instances (regular-expression and PromQL escaped).
std::string instance_matcher(const std::vector<std::string>& instances);

// The per-CPU figures from the four aggregated increase() answers' results (instant vectors) of a
// batch, added to the hosts of `history` they name (history.hosts by instance, as fleet_hosts
// leaves them).
struct BatchAnswers {
  Json buckets, sampled, interruptions, stolen;
};
void add_batch_figures(FleetHistory& history, const BatchAnswers& answers, const std::string& source);

// The fleet as Prometheus has it.
FleetHistory read_fleet_history(const PrometheusClient& client, const FleetSelection& selection);

}  // namespace jitterd
