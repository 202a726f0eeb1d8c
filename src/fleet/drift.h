// SPDX-License-Identifier: Apache-2.0
// The drifted hosts of `jitterd fleet`: within each class of identical hardware (CPU model, and
// any fingerprint field given with --class), the hosts whose figure lies beyond a robust bound of
// their class, and the fingerprint fields in which each differs from its class's majority
// ("host-17: p99_99_ns 12x its class; differs in bios_version").
// The bound, per figure, on the log scale (figures are ratios of a time or a rate, so "12x" and
// "1/12" are the same distance): |log(v + r) - median| > k x scale, where r is the figure's
// resolution (so a zero has a log), median and scale the class's. The scale is the largest of
// 1.4826 x MAD and IQR / 1.349 (each the standard deviation of a normal sample; where most hosts
// share one exported bucket the MAD is 0, and the quartiles still see a quarter of the class one
// bucket away) and the figure's run-to-run allowance cv (a host one bucket from a class that all
// falls in one is not drifted by that alone). A class of fewer than min_class hosts is not judged.
// Pure functions, safe from any thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "fleet/fleet_statistics.h"

namespace jitterd {

struct DriftCriteria {
  double k = 5;  // bound in robust standard deviations (normal: ~6e-7 of hosts beyond it)
  std::size_t min_class = 5;
};

struct ClassedHost {
  HostValues values;                               // values.stratum is ignored here
  std::string class_key;                           // "cpu_model=X" (and the --class fields)
  std::map<std::string, std::string> fingerprint;  // every field, for the majority comparison
};

struct DriftedFigure {
  std::string figure;
  double value = 0, class_median = 0;
  double ratio = 1;  // (value + r) / (class median + r)
};

struct DriftedHost {
  std::string host, class_key;
  std::vector<DriftedFigure> figures;
  std::vector<std::string> differing_fields;  // where the host's value is not its class's majority
};

struct HardwareClass {
  std::string class_key;
  std::size_t hosts = 0;
  bool judged = false;  // at least min_class hosts
};

struct DriftResult {
  std::vector<DriftedHost> hosts;  // by class, then host name
  std::vector<HardwareClass> classes;
};

DriftResult find_drifted_hosts(const std::vector<FigureSpec>& figures, const std::vector<ClassedHost>& hosts,
                               const DriftCriteria& criteria);

}  // namespace jitterd
