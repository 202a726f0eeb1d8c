// SPDX-License-Identifier: Apache-2.0
// One probe's section, the same on every page jitterd writes: the HTML report of `jitterd report`,
// the comparison page of `jitterd compare`, and the daemon's status page. A page says what it knows
// of the probe (when it ran, compare's verdicts) and hands over the probe's tables; the tables say
// how they render (TableShape: a pair heatmap drawn beside the tables, a checklist's statuses
// coloured), so no page asks which probe it is. Pure functions, safe from any thread.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "probes/probe.h"

namespace jitterd {

struct ProbeSection {
  std::string heading{};  // escaped here
  int heading_level = 2;  // <h2> on the report pages, <h3> under the status page's "Probes"
  // Not empty: the section is a <section class="probe" id="..."> (the status page links to it).
  std::string id{};
  std::string meta_html{};  // trusted markup under the heading: when it ran, "failed: ..."
  // Each a <figure> drawn side by side before the tables (compare's before, after and difference);
  // the heatmap of every pair_heatmap table follows them.
  std::vector<std::string> figures_html{};
  std::string summary_html{};  // trusted markup just before the tables: compare's verdict badges
  std::span<const ProbeTable> tables{};
  std::span<const std::string> notes{};
};

std::string probe_section_html(const ProbeSection& section);

// The <figure> of a pair_heatmap table: each pair's median one-way latency.
std::string pair_heatmap_figure(const ProbeTable& table);

// A table by its shape: a checklist's PASS, WARN and FAIL cells get those classes (the status
// page's stylesheet colours them); any other table as table_html.
std::string shaped_table_html(const ProbeTable& table);

}  // namespace jitterd
