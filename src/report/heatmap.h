// SPDX-License-Identifier: Apache-2.0
// The heatmap of a table of CPU pairs (core-to-core latency, or its change between two runs) as
// inline SVG, for every page that draws one (report/probe_section.h). Pure functions, safe from any
// thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probes/probe.h"

namespace jitterd {

// One pair of CPUs for a heatmap: the value (ns, or a difference in ns) and its relation class.
struct HeatmapCell {
  int cpu_a = 0, cpu_b = 0;
  double value = 0;
  std::string relation;  // "smt_sibling", "shared_l2", "shared_l3", "same_package", "cross_package"
};

struct HeatmapOptions {
  std::string unit = "ns";
  // false: one scale from the smallest value (light) to the largest (dark); true: a difference,
  // diverging around 0 (blue lower, red higher, white no change), symmetric in the larger |value|.
  bool diverging = false;
};

// The lower-triangle matrix of the pairs (row cpu_b, column cpu_a, as the text report), each cell
// coloured by value, labelled with it, and marked by its relation class (a letter in the corner,
// explained in a legend); pairs not given are left empty. Beyond 16 CPUs a cell shows only its
// letter and its tooltip the value. Scales to its container.
std::string heatmap_svg(const std::vector<HeatmapCell>& cells, std::string_view title,
                        const HeatmapOptions& options = {});

// The heatmap cells of a table of pairs (TableShape::pair_heatmap: columns cpu_a, cpu_b, relation,
// median_ns); rows without a median (failed pairs) are left out. Empty when the table lacks those
// columns.
std::vector<HeatmapCell> pair_heatmap_cells(const ProbeTable& pairs_table);

}  // namespace jitterd
