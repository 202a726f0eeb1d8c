// SPDX-License-Identifier: Apache-2.0
// Reading the instant-vector answers `jitterd fleet` asks for (fleet/fleet_history.h): samples with
// their labels, one batch's per-CPU counter values (the gap-histogram buckets by exported bound,
// and the sampled, interruptions and stolen-seconds counters), whether these are increases over
// the range or the counters' values at one of its ends (fleet/fleet_ends.h), and each CPU's
// figures from its increases. A malformed answer is a BaselineError (65) naming `source`.
// Pure functions, safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleet/fleet_history.h"

namespace jitterd {

struct PromSample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The samples of an instant-vector answer's "data" (NaN values dropped).
std::vector<PromSample> vector_samples(const Json& data, const std::string& source);
// The value of label `name`, "" when absent.
std::string label_of(const std::map<std::string, std::string>& labels, const std::string& name);
// The BaselineError (65) of an answer of the wrong shape: "SOURCE: not a Prometheus instant-vector
// answer: WHAT".
[[noreturn]] void wrong_vector_shape(const std::string& source, const std::string& what);
// The sample's cpu label as a number, or wrong_vector_shape: "a SERIES series without a cpu label".
int cpu_label_of(const PromSample& s, const std::string& source, const std::string& series);

using CpuKey = std::pair<std::string, int>;  // instance, cpu

// One batch's counters per sampled CPU, summed over the series of the same instance and cpu.
struct CounterValues {
  std::map<CpuKey, std::map<double, double>> buckets;  // by bound in ns (+Inf last): cumulative counts
  std::map<CpuKey, double> sampled, interruptions, stolen;
};
CounterValues counter_values(const BatchAnswers& answers, const std::string& source);
// The same for series whose unit within their host is named otherwise (a loop's `loop` label):
// `unit` gives a series' unit number, or -1 to pass it over (a name refused, fleet_application.h).
// A null answer (not asked) reads as an empty one.
using UnitOf = std::function<int(const PromSample&)>;
CounterValues counter_values(const BatchAnswers& answers, const std::string& source, const UnitOf& unit);

// Each CPU's figures from its counters' increases over the range, added to the hosts of
// `history` they name (history.hosts by instance).
void add_figures(FleetHistory& history, const CounterValues& increases);
// The same figures of the loops (their families are a sampled CPU's: histogram, sampled seconds,
// interruptions, stolen seconds), each loop's unit its index in history.loop_names, into
// FleetHost::loops with history.loop_figure_names.
void add_loop_figures(FleetHistory& history, const CounterValues& increases);

// The host of that instance in history.hosts (by instance), or null.
FleetHost* host_named(FleetHistory& history, const std::string& instance);
// A gap-count name for a bound in ns: gaps_over_10us_per_s, gaps_over_1ms_per_s.
std::string threshold_name(double ns);

}  // namespace jitterd
