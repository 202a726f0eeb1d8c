// SPDX-License-Identifier: Apache-2.0
// fleet's page (fleet_report.h fleet_html): the strip plots of every figure, hosts as dots on a log
// axis per cohort, drawn as inline SVG like report/html.h's plots, and the tables of the text.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "fleet/fleet_report.h"
#include "report/html.h"

namespace jitterd {
namespace {

constexpr double kWidth = 760, kLabel = 170, kVerdict = 150, kRow = 26, kTop = 8, kAxis = 26;

std::string verdict_of(const FleetReport& r, const std::string& cohort, const std::string& figure) {
  for (const auto& [value, c] : r.comparisons)
    if (value == cohort && c.figure == figure) return std::string(to_string(c.finding));
  return "";
}

// The plot's decades: from the smallest positive value to the largest (one decade at least).
std::pair<double, double> decades(const FleetReport& r, std::size_t f) {
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (const auto& [cohort, hosts] : r.cohort_hosts)
    for (const HostValues& h : hosts)
      if (f < h.values.size() && h.values[f] > 0)
        low = std::min(low, h.values[f]), high = std::max(high, h.values[f]);
  if (!(high > 0)) return {0, 1};
  const double a = std::floor(std::log10(low)), b = std::ceil(std::log10(high));
  return {a, std::max(b, a + 1)};
}

std::string strip_plot(const FleetReport& r, std::size_t f) {
  const auto [low, high] = decades(r, f);
  const double plot = kWidth - kLabel - kVerdict;
  const auto x_of = [&](double v) {
    // A zero (no stolen time, no gap over a threshold) sits at the axis's left edge.
    const double d = v > 0 ? std::clamp(std::log10(v), low, high) : low;
    return kLabel + (d - low) / (high - low) * plot;
  };
  const double height = kTop + kRow * static_cast<double>(r.cohort_hosts.size()) + kAxis;
  std::string svg = fmt::format("<svg class=\"plot\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
                                svg_coordinate(kWidth), svg_coordinate(height),
                                html_escape(r.figures[f].name + ": each host as a dot, one row per cohort"));
  double y = kTop;
  for (const auto& [cohort, hosts] : r.cohort_hosts) {
    if (cohort == r.reference)
      svg += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#e6ecf5\"/>\n",
                         svg_coordinate(y), svg_coordinate(kWidth), svg_coordinate(kRow));
    svg += fmt::format("<text x=\"4\" y=\"{}\" font-size=\"11\">{}{}</text>\n", svg_coordinate(y + 17),
                       html_escape(cohort.size() > 24 ? cohort.substr(0, 23) + "…" : cohort),
                       cohort == r.reference ? " (ref.)" : "");
    for (const HostValues& h : hosts) {
      if (f >= h.values.size() || std::isnan(h.values[f])) continue;
      svg += fmt::format(
          "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#1d4e89\" fill-opacity=\"0.45\"><title>{}: "
          "{:.4g}</title></circle>\n",
          svg_coordinate(x_of(h.values[f])), svg_coordinate(y + kRow / 2), html_escape(h.host), h.values[f]);
    }
    const std::string verdict = verdict_of(r, cohort, r.figures[f].name);
    const char* ink = verdict == "worse" ? "#8a1c12" : verdict == "better" ? "#14532d" : "#5b6470";
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\">{}</text>\n",
                       svg_coordinate(kWidth - kVerdict + 8), svg_coordinate(y + 17), ink, html_escape(verdict));
    y += kRow;
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#5b6470\"/>\n",
                     svg_coordinate(kLabel), svg_coordinate(y), svg_coordinate(kLabel + plot));
  for (double d = low; d <= high + 1e-9; ++d)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">1e{}</text>\n",
                       svg_coordinate(kLabel + (d - low) / (high - low) * plot), svg_coordinate(y + 16),
                       static_cast<int>(d));
  return svg + "</svg>\n";
}

std::string verdict_summary(const FleetReport& r) {
  std::size_t worse = 0, better = 0, same = 0, few = 0;
  for (const auto& [cohort, c] : r.comparisons) {
    worse += c.finding == Finding::worse;
    better += c.finding == Finding::better;
    same += c.finding == Finding::no_change;
    few += c.finding == Finding::too_few_hosts;
  }
  return fmt::format(
      "<div class=\"summary\"><span class=\"badge worse\">{} worse</span><span class=\"badge better\">{} "
      "better</span><span class=\"badge\">{} no significant change</span><span class=\"badge\">{} too few "
      "hosts</span><span class=\"badge\">{} drifted hosts</span></div>\n",
      worse, better, same, few, r.drift.hosts.size());
}

}  // namespace

std::string fleet_html(const FleetReport& r) {
  std::string body = "<header class=\"page\"><h1>jitterd fleet: cohorts by " + html_escape(r.by) + "</h1>\n";
  body += "<p class=\"meta\">range <code>" + html_escape(r.range) + "</code>" +
          (r.where.empty() ? "" : ", where <code>" + html_escape(r.where) + "</code>") + "; reference " +
          html_escape(r.by) + "=<code>" + html_escape(r.reference) + "</code> (shaded)</p>\n";
  body += "<p><strong>" + html_escape(fleet_aa_line(r)) + "</strong></p>\n" + verdict_summary(r) + "</header>\n";
  body += "<h2>Cohorts</h2>\n" + table_html(fleet_cohorts_table(r));
  const bool application = std::any_of(r.figures.begin(), r.figures.end(), [](const FigureSpec& f) {
    return f.name.rfind("watched ", 0) == 0 || f.name.rfind("loop ", 0) == 0;
  });
  body += std::string("<h2>Hosts per figure</h2>\n<p class=\"meta\">Each dot one host (its worst or its median ") +
          (application ? "sampled or watched CPU, or its loop of that name; a host without one has no dot"
                       : "sampled CPU") +
          "), on a log axis; a zero at the left edge; the verdict of each cohort against the reference on the "
          "right.</p>\n";
  for (std::size_t f = 0; f < r.figures.size(); ++f)
    body += "<h3>" + html_escape(r.figures[f].name) + "</h3>\n" + strip_plot(r, f);
  body += "<h2>Comparisons</h2>\n" + table_html(fleet_comparisons_table(r));
  body += "<h2>Drifted hosts</h2>\n" + table_html(fleet_drift_table(r)) + table_html(fleet_classes_table(r));
  body += "<h2>Reads</h2>\n<p>" + html_escape(fleet_reads_line(r)) + "</p>\n";
  if (!r.reads.in_full.empty()) body += table_html(fleet_reads_table(r));
  for (const auto& [heading, lines] : {std::pair{"Not judged", &r.not_judged}, std::pair{"Left out", &r.left_out},
                                       std::pair{"Notes", &r.notes}}) {
    if (lines->empty()) continue;
    body += std::string("<h2>") + heading + "</h2>\n<ul>\n";
    for (const std::string& line : *lines) body += "<li>" + html_escape(line) + "</li>\n";
    body += "</ul>\n";
  }
  return html_page("jitterd fleet: " + r.by, body);
}

}  // namespace jitterd
