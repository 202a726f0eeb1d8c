// SPDX-License-Identifier: Apache-2.0
// Reading the instant-vector answers `jitterd fleet` asks for (fleet/fleet_history.h): samples with
// their labels, one batch's per-CPU counter values (the gap-histogram buckets by exported bound,
// and the sampled, interruptions and stolen-seconds counters), whether these are increases over
// the range or the counters' values at one of its ends (fleet/fleet_ends.h), and each CPU's
// figures from its increases. A malformed answer is a BaselineError (65) naming `source`.
// Pure functions, safe from any thread.
#pragma once

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

using CpuKey = std::pair<std::string, int>;  // instance, cpu

// One batch's counters per sampled CPU, summed over the series of the same instance and cpu.
struct CounterValues {
  std::map<CpuKey, std::map<double, double>> buckets;  // by bound in ns (+Inf last): cumulative counts
  std::map<CpuKey, double> sampled, interruptions, stolen;
};
CounterValues counter_values(const BatchAnswers& answers, const std::string& source);

// Each CPU's figures from its counters' increases over the range, added to the hosts of
// `history` they name (history.hosts by instance).
void add_figures(FleetHistory& history, const CounterValues& increases);

}  // namespace jitterd
