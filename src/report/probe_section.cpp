// SPDX-License-Identifier: Apache-2.0
#include "report/probe_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "report/heatmap.h"
#include "report/html.h"

namespace jitterd {

std::string pair_heatmap_figure(const ProbeTable& table) {
  return "<figure>" + heatmap_svg(pair_heatmap_cells(table), "median one-way latency") + "</figure>";
}

std::string shaped_table_html(const ProbeTable& table) {
  std::string html = table_html(table);
  if (table.shape != TableShape::checklist) return html;
  for (const char* status : {"PASS", "WARN", "FAIL"}) {
    const std::string plain = std::string("<td>") + status + "</td>";
    std::string css = status;
    std::transform(css.begin(), css.end(), css.begin(), [](unsigned char c) { return std::tolower(c); });
    const std::string classed = "<td class=\"" + css + "\">" + status + "</td>";
    for (std::size_t at = html.find(plain); at != std::string::npos; at = html.find(plain, at + classed.size()))
      html.replace(at, plain.size(), classed);
  }
  return html;
}

std::string probe_section_html(const ProbeSection& section) {
  std::string out = section.id.empty() ? "" : "<section class=\"probe\" id=\"" + html_escape(section.id) + "\">";
  out += fmt::format("<h{0}>{1}</h{0}>\n", section.heading_level, html_escape(section.heading));
  out += section.meta_html;
  // A run that measured nothing (c2c with one sampled CPU: no pair in scope) draws no empty
  // heatmap and no header-only tables; its notes say why.
  const bool measured_nothing =
      !section.tables.empty() && std::all_of(section.tables.begin(), section.tables.end(),
                                             [](const ProbeTable& t) { return t.rows.empty(); });
  std::string figures;
  for (const std::string& figure : section.figures_html) figures += figure;
  for (const ProbeTable& t : section.tables)
    if (t.shape == TableShape::pair_heatmap && !measured_nothing) figures += pair_heatmap_figure(t);
  if (!figures.empty()) out += "<div class=\"heatmaps\">" + figures + "</div>\n";
  out += section.summary_html;
  if (measured_nothing) out += "<p class=\"meta\">nothing measured in this run; the notes say why</p>\n";
  for (const ProbeTable& t : section.tables)
    if (!measured_nothing) out += shaped_table_html(t);
  if (!section.notes.empty()) {
    out += "<ul class=\"notes\">";
    for (const std::string& n : section.notes) out += "<li>" + html_escape(n) + "</li>";
    out += "</ul>\n";
  }
  if (!section.id.empty()) out += "</section>\n";
  return out;
}

}  // namespace jitterd
