// SPDX-License-Identifier: Apache-2.0
// The HTML form of a baseline (`jitterd report --format html`): one self-contained page
// (report/html.h) that shows the machine (fingerprint and configuration), per CPU the gap
// distribution as an exceedance plot with the threshold marked and its figures, and the probes'
// sections (a table of pairs also as a heatmap). The pieces it is made of are public because
// compare's page (compare/comparison_html.h) shows the same ones for two runs. Pure functions,
// safe from any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "probes/probe.h"
#include "report/baseline_file.h"

namespace jitterd {

// `what` heads the page ("report gaps", "report c2c").
std::string baseline_html(const Baseline& baseline, const std::string& what);

// A page's <header>: its heading and a line of meta HTML (already escaped).
std::string html_page_header(const std::string& heading, const std::string& meta_html);
// "host · model · kernel · seconds sampled · counter at MHz" (plain text).
std::string baseline_machine_line(const Baseline& b);
// A table of text fields, the first column plain, the others code that wraps (long values such
// as the kernel command line wrap instead of widening the table).
std::string fields_table_html(const std::string& caption, const std::vector<std::string>& columns,
                              const std::vector<std::vector<std::string>>& rows);
// The fingerprint and configuration tables.
std::string baseline_machine_tables(const Baseline& b);
// A probe that succeeded, by name; null otherwise.
const BaselineProbe* find_baseline_probe(const Baseline& b, const std::string& name);
// The probe's table of pairs that renders as a heatmap (c2c), if it has one.
const ProbeTable* pair_heatmap_table(const BaselineProbe& probe);
double baseline_ns_per_tick(const Baseline& b);
std::string baseline_cpu_title(int cpu);
// The footer's note on how to read percentiles and exceedance plots.
extern const char* const kHistogramReadingNote;

}  // namespace jitterd
