// SPDX-License-Identifier: Apache-2.0
#include "compare/comparison_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "host/cpu_list.h"
#include "probes/probe_registry.h"
#include "report/baseline_html.h"
#include "report/heatmap.h"
#include "report/html.h"
#include "report/probe_section.h"
#include "report/render.h"

namespace jitterd {
namespace {

// Two runs' heatmaps of pairs and their difference, each a <figure>.
std::vector<std::string> heatmap_figures(const ProbeTable* before, const ProbeTable* after) {
  std::vector<HeatmapCell> b_cells, a_cells, difference;
  if (before) b_cells = pair_heatmap_cells(*before);
  if (after) a_cells = pair_heatmap_cells(*after);
  for (const HeatmapCell& x : b_cells)
    for (const HeatmapCell& y : a_cells)
      if (x.cpu_a == y.cpu_a && x.cpu_b == y.cpu_b)
        difference.push_back({x.cpu_a, x.cpu_b, y.value - x.value, x.relation});
  return {"<figure>" + heatmap_svg(b_cells, "before: median one-way latency") + "</figure>",
          "<figure>" + heatmap_svg(a_cells, "after: median one-way latency") + "</figure>",
          "<figure>" + heatmap_svg(difference, "difference: after - before", {"ns", true}) +
              "<figcaption>red: slower after, blue: faster</figcaption></figure>"};
}

std::vector<const FigureComparison*> figures_of(const Comparison& c, const std::string& scope) {
  std::vector<const FigureComparison*> out;
  for (const FigureComparison& f : c.figures)
    if (f.scope == scope) out.push_back(&f);
  return out;
}

// The figures side by side, less a prefix every name shares ("kernel: ", the table they come from).
ProbeTable verdict_table(const std::vector<const FigureComparison*>& figures) {
  ProbeTable t{
      "",
      {"figure", "before", "after", "change_%", "verdict", "p_value", "test", "p_run_to_run", "allowance"},
      {}};
  const std::string first = figures.empty() ? std::string() : figures.front()->figure;
  std::string prefix = first.find(": ") == std::string::npos ? "" : first.substr(0, first.find(": ") + 2);
  for (const FigureComparison* f : figures)
    if (f->figure.rfind(prefix, 0) != 0) prefix.clear();
  for (const FigureComparison* f : figures) {
    const int digits = std::fabs(f->before) >= 100 || std::fabs(f->after) >= 100 ? 1 : 3;
    t.rows.push_back({f->figure.substr(prefix.size()), Cell(f->before, digits), Cell(f->after, digits),
                      std::isfinite(f->change) ? Cell(f->change * 100, 1) : Cell(), verdict_cell(f->verdict),
                      Cell(f->p_value, 4), f->test, f->run_to_run_p ? Cell(*f->run_to_run_p, 4) : Cell(),
                      f->allowance ? Cell(*f->allowance, 2) : Cell()});
  }
  return t;
}

std::string verdict_badges(const std::vector<const FigureComparison*>& figures) {
  std::map<std::string, int> counts;
  for (const FigureComparison* f : figures) ++counts[f->verdict];
  std::string out = "<div class=\"summary\">";
  for (const char* verdict : {"worse", "better", "no significant change"})
    if (counts[verdict] > 0)
      out += fmt::format("<span class=\"badge {}\">{} {}</span>", verdict_html_class(verdict), counts[verdict],
                         verdict);
  return out + "</div>\n";
}

std::string changed_section(const Comparison& c, const Baseline& before, const Baseline& after) {
  std::string out = "<h2>What changed</h2>\n";
  if (c.changed.empty())
    out += "<p>Nothing in the fingerprint or the configuration.</p>\n";
  else
    out += fields_table_html("fingerprint and configuration fields that differ", {"field", "before", "after"},
                             c.changed);
  out += "<details><summary>all fields, before</summary>" + baseline_machine_tables(before) + "</details>\n";
  out += "<details><summary>all fields, after</summary>" + baseline_machine_tables(after) + "</details>\n";
  return out;
}

std::string cpu_sections(const Comparison& c, const Baseline& before, const Baseline& after) {
  std::string out = "<h2>What it did, per CPU</h2>\n";
  std::vector<int> cpus;
  for (const FigureComparison& f : c.figures)
    if (f.scope.rfind("cpu ", 0) == 0) {
      const int cpu = std::stoi(f.scope.substr(4));
      if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
    }
  for (int cpu : cpus) {
    const BaselineCpu* b = entry_of_cpu(before.cpus, cpu);
    const BaselineCpu* a = entry_of_cpu(after.cpus, cpu);
    if (!b || !a) continue;
    const auto figures = figures_of(c, baseline_cpu_title(cpu));
    out += "<section class=\"cpu\"><h3>" + baseline_cpu_title(cpu) + "</h3>\n" + verdict_badges(figures);
    out += exceedance_plot_svg({{"before", exceedance_points(b->histogram, baseline_ns_per_tick(before))},
                                {"after", exceedance_points(a->histogram, baseline_ns_per_tick(after))}},
                               b->threshold_ns, baseline_cpu_title(cpu) + ": gaps longer than x");
    if (std::fabs(a->threshold_ns - b->threshold_ns) > 0.5)
      out += fmt::format("<p class=\"meta\">threshold marked: before's {:.1f} ns; after's is {:.1f} ns</p>\n",
                         b->threshold_ns, a->threshold_ns);
    out += table_html(verdict_table(figures)) + "</section>\n";
  }
  return out;
}

// A probe's figures with their verdicts: the quantiles its samples back are tested, the rest
// (one value per run) say "not tested". A probe whose pairs render as a heatmap (c2c) shows them
// before, after and their difference first, whenever either run has the probe.
std::string probe_section(const Comparison& c, const Baseline& before, const Baseline& after,
                          const std::string& probe, const std::string& heading) {
  const auto figures = figures_of(c, "probe " + probe);
  ProbeSection section{.heading = heading};
  const BaselineProbe* b = find_baseline_probe(before, probe);
  const BaselineProbe* a = find_baseline_probe(after, probe);
  const ProbeTable* b_pairs = b ? pair_heatmap_table(*b) : nullptr;
  const ProbeTable* a_pairs = a ? pair_heatmap_table(*a) : nullptr;
  if (b_pairs || a_pairs) section.figures_html = heatmap_figures(b_pairs, a_pairs);
  if (section.figures_html.empty() && figures.empty()) return "";
  const ProbeTable verdicts = verdict_table(figures);
  if (!figures.empty()) {
    section.summary_html = verdict_badges(figures);
    section.tables = std::span(&verdicts, 1);
  }
  return probe_section_html(section);
}

}  // namespace

std::string comparison_html(const Comparison& c, const Baseline& before, const Baseline& after) {
  std::vector<const FigureComparison*> cpu_figures;
  for (const FigureComparison& f : c.figures)
    if (f.scope.rfind("cpu ", 0) == 0) cpu_figures.push_back(&f);
  std::string meta = "<p class=\"meta\">before: <code>" + html_escape(c.before_path) + "</code> (" +
                     html_escape(before.created) + ")<br>after: <code>" + html_escape(c.after_path) + "</code> (" +
                     html_escape(after.created) + ")</p><p class=\"meta\">" +
                     html_escape(baseline_machine_line(after)) + "</p>" + verdict_badges(cpu_figures);
  std::vector<const FigureComparison*> probe_figures;
  for (const FigureComparison& f : c.figures)
    if (f.scope.rfind("probe ", 0) == 0) probe_figures.push_back(&f);
  if (!probe_figures.empty()) meta += "<p class=\"meta\">probes:</p>" + verdict_badges(probe_figures);
  std::string body = html_page_header("jitterd compare", meta);
  body += changed_section(c, before, after);
  body += cpu_sections(c, before, after);
  for (std::string_view name : comparison_probe_names())
    body += probe_section(c, before, after, std::string(name), std::string(probe_facts(name)->comparison_heading));
  if (!c.notes.empty()) {
    body += "<h2>Notes</h2><ul class=\"notes\">";
    for (const std::string& n : c.notes) body += "<li>" + html_escape(n) + "</li>";
    body += "</ul>\n";
  }
  body +=
      "<footer>Verdicts: the per-sub-window percentiles, interruption rates and stolen shares by a Mann-Whitney "
      "rank "
      "test, the tail rates by a rate-ratio test allowing for over-dispersion and that rank test, the max by the "
      "highest tail rate "
      "it "
      "reaches; the probes' quantiles by a quantile test on their saved samples; each also beyond its run-to-run "
      "allowance (the allowance column, a relative spread; a guest's when either run was in a VM: "
      "docs/before-and-after.md). change_% = (after - before) / before. " +
      std::string(kHistogramReadingNote) + "</footer>\n";
  return html_page("jitterd compare: " + field_value(after.fingerprint, "hostname"), body);
}

}  // namespace jitterd
