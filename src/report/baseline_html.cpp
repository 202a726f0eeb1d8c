// SPDX-License-Identifier: Apache-2.0
#include "report/baseline_html.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/heatmap.h"
#include "report/html.h"
#include "report/probe_section.h"
#include "report/render.h"

namespace jitterd {

const char* const kHistogramReadingNote =
    "Percentiles are the upper edge of a histogram bucket (at most 6.25% above the true value, never "
    "above the exact max). An exceedance plot shows, for each gap length x, the fraction of gaps longer than "
    "x: one exact point per histogram bucket, the tail to the right.";

std::string html_page_header(const std::string& heading, const std::string& meta_html) {
  return "<header class=\"page\"><h1>" + html_escape(heading) + "</h1>" + meta_html + "</header>\n";
}

std::string baseline_machine_line(const Baseline& b) {
  return fmt::format("{} · {} · kernel {} · {:.1f} s sampled · counter {} at {:.3f} MHz",
                     field_value(b.fingerprint, "hostname"), field_value(b.fingerprint, "cpu_model"),
                     field_value(b.fingerprint, "kernel"), b.duration_seconds, b.tick_method,
                     b.counter_hertz / 1e6);
}

// Long values (the kernel command line) wrap instead of widening the table.
std::string fields_table_html(const std::string& caption, const std::vector<std::string>& columns,
                              const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<div class=\"table-wrap\"><table><caption>" + html_escape(caption) + "</caption><thead><tr>";
  for (const std::string& c : columns) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c)
      out += (c == 0 ? "<td>" : "<td class=\"wrap\"><code>") + html_escape(row[c]) +
             (c == 0 ? "</td>" : "</code></td>");
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string baseline_machine_tables(const Baseline& b) {
  std::vector<std::vector<std::string>> fingerprint, configuration;
  for (const auto& [k, v] : b.fingerprint) fingerprint.push_back({k, v});
  for (const auto& [k, v] : b.configuration) configuration.push_back({k, v});
  return fields_table_html("fingerprint: what the machine was", {"field", "value"}, fingerprint) +
         fields_table_html("configuration: how jitterd measured", {"field", "value"}, configuration);
}

const BaselineProbe* find_baseline_probe(const Baseline& b, const std::string& name) {
  const auto it =
      std::find_if(b.probes.begin(), b.probes.end(), [&](const BaselineProbe& p) { return p.name == name; });
  return it == b.probes.end() || !it->success ? nullptr : &*it;
}

const ProbeTable* pair_heatmap_table(const BaselineProbe& probe) {
  for (const ProbeTable& t : probe.tables)
    if (t.shape == TableShape::pair_heatmap) return &t;
  return nullptr;
}

double baseline_ns_per_tick(const Baseline& b) { return b.counter_hertz > 0 ? 1e9 / b.counter_hertz : 1; }

std::string baseline_cpu_title(int cpu) { return fmt::format("cpu {}", cpu); }

namespace {

// One CPU of one baseline: the figures a report prints.
ProbeTable baseline_cpu_table(const Baseline& b, const BaselineCpu& c) {
  ProbeTable t{"",
               {"samples", "p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "max_ns", "interruptions_per_s",
                "stolen_share", "floor_ns", "threshold_ns"},
               {}};
  const auto per_second = [&](double v) { return c.sampled_seconds > 0 ? v / c.sampled_seconds : 0.0; };
  t.rows.push_back({c.samples, Cell(baseline_quantile_ns(b, c, 0.5), 1), Cell(baseline_quantile_ns(b, c, 0.99), 1),
                    Cell(baseline_quantile_ns(b, c, 0.999), 1), Cell(baseline_quantile_ns(b, c, 0.9999), 1),
                    Cell(c.max_ns, 0), Cell(per_second(static_cast<double>(c.interruptions)), 2),
                    Cell(per_second(c.stolen_seconds), 6), Cell(c.floor_ns, 1), Cell(c.threshold_ns, 1)});
  return t;
}

// The probes' own sections: their tables, a table of pairs also as a heatmap.
std::string baseline_probe_sections(const Baseline& b) {
  std::string out;
  for (const BaselineProbe& p : b.probes) {
    ProbeSection section{.heading = "probe " + p.name};
    if (p.success) {
      section.tables = p.tables;
      section.notes = p.notes;
    } else {
      section.meta_html = "<p>failed: " + html_escape(p.error) + "</p>\n";
    }
    out += probe_section_html(section);
  }
  return out;
}

std::string reading_footer() { return std::string("<footer>") + kHistogramReadingNote + "</footer>\n"; }

}  // namespace

std::string baseline_html(const Baseline& b, const std::string& what) {
  std::string body = html_page_header(
      "jitterd " + what, "<p class=\"meta\">" + html_escape(baseline_machine_line(b)) + "</p><p class=\"meta\">" +
                             html_escape(b.created) + " · jitterd " + html_escape(b.jitterd_version) + "</p>");
  body += "<h2>The machine</h2>\n" + baseline_machine_tables(b);
  if (!b.cpus.empty()) body += "<h2>Gaps per CPU</h2>\n";
  for (const BaselineCpu& c : b.cpus) {
    body += "<section class=\"cpu\"><h3>" + baseline_cpu_title(c.cpu) + "</h3>\n";
    if (!c.error.empty() || c.samples == 0) {
      body += "<p>not sampled: " + html_escape(c.error) + "</p></section>\n";
      continue;
    }
    body += exceedance_plot_svg({{"gaps", exceedance_points(c.histogram, baseline_ns_per_tick(b))}},
                                c.threshold_ns, baseline_cpu_title(c.cpu) + ": gaps longer than x");
    body += table_html(baseline_cpu_table(b, c)) + "</section>\n";
  }
  body += baseline_probe_sections(b) + reading_footer();
  return html_page("jitterd " + what + ": " + field_value(b.fingerprint, "hostname"), body);
}

}  // namespace jitterd
