// SPDX-License-Identifier: Apache-2.0
#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "host/text.h"
#include "report/render.h"

namespace jitterd {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_control(char32_t c) { return (c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7F && c <= 0x9F); }

// A decade as a label: 10 ns .. 100 ms, 1 s .. for gap lengths.
std::string duration_label(int decade) {
  static constexpr std::array<const char*, 4> kUnits{"ns", "µs", "ms", "s"};
  if (decade < 0) return fmt::format("1e{} ns", decade);
  const int unit = std::min(decade / 3, 3);
  const double value = std::pow(10.0, decade - 3 * unit);
  return fmt::format("{:g} {}", value, kUnits[static_cast<std::size_t>(unit)]);
}

// A duration in ns, as the legend and the threshold label show it: 12.5 µs.
std::string duration_text(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3g} µs", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}

// 10 to a negative power, in superscript digits: 10⁻³.
std::string fraction_label(int decade) {
  if (decade == 0) return "1";
  static constexpr std::array<const char*, 10> kSuperscript{"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string digits;
  for (const char c : std::to_string(std::abs(decade))) digits += kSuperscript[static_cast<std::size_t>(c - '0')];
  return std::string("10") + (decade < 0 ? "⁻" : "") + digits;
}

struct LineStyle {
  const char* colour;
  const char* dash;  // stroke-dasharray, "" for solid
};
constexpr std::array<LineStyle, 4> kLineStyles{
    {{"#1d4e89", ""}, {"#c0392b", "7 4"}, {"#2e7d32", "2 3"}, {"#6a1b9a", "10 3 2 3"}}};

std::string dash_attribute(const LineStyle& style) {
  return *style.dash ? fmt::format(" stroke-dasharray=\"{}\"", style.dash) : "";
}

}  // namespace

std::string svg_coordinate(double value) { return fmt::format("{:.1f}", value); }

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  while (!text.empty()) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, c);
    if (length == 0) {
      out += kReplacement;  // one per invalid byte, as browsers decode
      text.remove_prefix(1);
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (is_control(c))
          out += kReplacement;
        else if (reorders_text(c))  // shown as the escape a terminal shows (host/text.h printable)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          out.append(text.substr(0, length));
    }
    text.remove_prefix(length);
  }
  return out;
}

std::string html_page(std::string_view title, std::string_view body_html, const HtmlPageOptions& options) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">\n";
  if (options.refresh_seconds > 0)
    out += fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", options.refresh_seconds);
  out += "<title>" + html_escape(title) + "</title>\n<style>\n";
  // One stylesheet for every page: system fonts (nothing fetched), tables that scroll sideways on
  // a narrow screen, plots at the container's width, and print without backgrounds lost.
  out += R"css(:root{--ink:#1b1f24;--muted:#5b6470;--line:#d5dae1;--soft:#f3f5f8;--accent:#1d4e89;
--better:#d8f0dc;--better-ink:#14532d;--worse:#fadad7;--worse-ink:#8a1c12;--same:#eceff3}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0 auto;max-width:76rem;padding:1rem 1.25rem 3rem;color:var(--ink);background:#fff;
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header.page{border-bottom:3px solid var(--accent);margin-bottom:1.25rem;padding-bottom:.6rem}
h1{font-size:1.55rem;margin:.2rem 0 .3rem;line-height:1.2}
h2{font-size:1.2rem;margin:2rem 0 .6rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
h3{font-size:1.02rem;margin:1.3rem 0 .5rem}
p{margin:.4rem 0}
.meta{color:var(--muted);font-size:.9rem;margin:0}
.meta code,code{font:.86em/1.3 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;word-break:break-all}
.summary{display:flex;flex-wrap:wrap;gap:.5rem;margin:.8rem 0}
.badge{display:inline-block;border-radius:.3rem;padding:.15rem .55rem;font-weight:600;font-size:.9rem;
background:var(--same)}
.badge.worse{background:var(--worse);color:var(--worse-ink)}
.badge.better{background:var(--better);color:var(--better-ink)}
.table-wrap{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.4rem 0 1rem;max-width:100%}
table{border-collapse:collapse;font-size:.88rem;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);font-size:.85rem;padding:.2rem 0 .35rem;caption-side:top}
th,td{padding:.28rem .5rem;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap;
vertical-align:top}
th{background:var(--soft);font-weight:600;border-bottom:2px solid var(--line)}
td.num,th.num{text-align:right}
td.wrap{white-space:pre-line;overflow-wrap:break-word;max-width:40rem}
tbody tr:hover{background:#fafbfc}
td.better{background:var(--better);color:var(--better-ink);font-weight:600}
td.worse{background:var(--worse);color:var(--worse-ink);font-weight:600}
td.same{color:var(--muted)}
.cpu{border:1px solid var(--line);border-radius:.45rem;padding:.2rem 1rem .6rem;margin:1rem 0;
break-inside:avoid;page-break-inside:avoid}
.plot{display:block;width:100%;max-width:44rem;height:auto;margin:.3rem 0}
.heatmaps{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
.heatmaps figure{margin:0;flex:1 1 18rem;max-width:30rem}
.heatmaps svg{display:block;width:100%;height:auto}
figcaption{font-size:.85rem;color:var(--muted)}
ul.notes{color:var(--muted);font-size:.88rem;padding-left:1.2rem}
footer{margin-top:2.5rem;color:var(--muted);font-size:.8rem;border-top:1px solid var(--line);padding-top:.5rem}
@media (max-width:40rem){body{padding:.6rem .6rem 2rem;font-size:14px}h1{font-size:1.3rem}
.cpu{padding:.1rem .5rem .4rem}th,td{padding:.22rem .4rem}}
@media print{body{max-width:none;padding:0;font-size:10pt}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
.table-wrap{overflow:visible}th,td{white-space:normal}tbody tr:hover{background:none}
h2{break-after:avoid;page-break-after:avoid}.plot{max-width:34rem}}
)css";
  out += "</style>\n</head>\n<body>\n";
  out.append(body_html);
  out += "\n</body>\n</html>\n";
  return out;
}

std::string table_html(const ProbeTable& table) {
  const std::size_t columns = table.columns.size();
  std::vector<bool> numeric(columns, false), has_text(columns, false);
  for (const auto& row : table.rows)
    for (std::size_t c = 0; c < row.size() && c < columns; ++c) {
      numeric[c] = numeric[c] || row[c].is_number();
      has_text[c] = has_text[c] || row[c].kind == Cell::Kind::text;
    }
  std::string out = "<div class=\"table-wrap\"><table>";
  if (!table.title.empty()) out += "<caption>" + html_escape(table.title) + "</caption>";
  out += "<thead><tr>";
  for (std::size_t c = 0; c < columns; ++c)
    out += (numeric[c] && !has_text[c] ? "<th class=\"num\">" : "<th>") + html_escape(table.columns[c]) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string text = cell_text(row[c]);
      // Long text (a test's name, a path) wraps rather than widening the table.
      std::string_view css = row[c].is_number() ? "num" : text.size() > 20 ? "wrap" : "";
      if (row[c].html_class) css = *row[c].html_class;
      out += css.empty() ? "<td>" : fmt::format("<td class=\"{}\">", css);
      out += html_escape(text) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::vector<std::pair<double, double>> exceedance_points(const HistogramSnapshot& histogram, double ns_per_tick) {
  std::vector<std::pair<double, double>> points;
  const std::uint64_t total = histogram.total();
  if (total == 0) return points;
  std::uint64_t above = total;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    if (histogram.counts[i] == 0) continue;
    above -= histogram.counts[i];
    points.emplace_back(static_cast<double>(histogram_bucket_highest(i)) * ns_per_tick,
                        static_cast<double>(above) / static_cast<double>(total));
  }
  return points;
}

namespace {

// The plot area of a log-log plot: where it sits and the decades it spans on each axis (x from
// 10^x_lo to 10^x_hi, y from 10^y_lo to 1).
struct PlotArea {
  double left, top, width, height;
  int x_lo, x_hi, y_lo;
  double px(double x) const { return left + (std::log10(x) - x_lo) / (x_hi - x_lo) * width; }
  double py(double y) const { return top + (0 - std::log10(y)) / (0 - y_lo) * height; }
};

// Grid and labels: every decade, with the 2 and 5 of each x decade as faint lines.
std::string plot_grid(const PlotArea& a) {
  std::string out;
  for (int d = a.x_lo; d <= a.x_hi; ++d) {
    const double x = a.px(std::pow(10.0, d));
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#d5dae1\"/>", svg_coordinate(x),
                       a.top, a.top + a.height);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
                       svg_coordinate(x), a.top + a.height + 16, duration_label(d));
    for (const double m : {2.0, 5.0})
      if (d < a.x_hi) {
        const double xm = a.px(m * std::pow(10.0, d));
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#eceff3\"/>",
                           svg_coordinate(xm), a.top, a.top + a.height);
      }
  }
  for (int d = a.y_lo; d <= 0; ++d) {
    const double y = a.py(std::pow(10.0, d));
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#d5dae1\"/>", a.left,
                       svg_coordinate(y), a.left + a.width);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", a.left - 6,
                       svg_coordinate(y + 4), fraction_label(d));
  }
  return out;
}

}  // namespace

std::string exceedance_plot_svg(const std::vector<ExceedanceSeries>& series, double threshold_ns,
                                std::string_view title) {
  // The decades the data spans, at least one each way; the threshold is always in view.
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0, y_min = 1;
  for (const ExceedanceSeries& s : series)
    for (const auto& [x, y] : s.points)
      if (x > 0 && y > 0) x_min = std::min(x_min, x), x_max = std::max(x_max, x), y_min = std::min(y_min, y);
  if (threshold_ns > 0) x_min = std::min(x_min, threshold_ns), x_max = std::max(x_max, threshold_ns);
  if (!std::isfinite(x_min)) x_min = 10, x_max = 1e6;
  const int x_lo = static_cast<int>(std::floor(std::log10(x_min)));
  const int x_hi = std::max(x_lo + 1, static_cast<int>(std::ceil(std::log10(x_max))));
  const int y_lo = std::min(-1, static_cast<int>(std::floor(std::log10(y_min))));
  constexpr double kWidth = 640, kHeight = 380, kLeft = 62, kRight = 26, kTop = 34, kBottom = 46;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const PlotArea area{kLeft, kTop, plot_w, plot_h, x_lo, x_hi, y_lo};

  std::string out = fmt::format(
      "<svg class=\"plot\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "font-family=\"system-ui,sans-serif\" font-size=\"12\">\n<title>{}</title>\n",
      kWidth, kHeight, html_escape(title));
  out += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"600\" fill=\"#1b1f24\">{}</text>\n",
                     kLeft, html_escape(title));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfcfd\" stroke=\"#9aa3ad\"/>\n",
                     kLeft, kTop, plot_w, plot_h);
  out += plot_grid(area);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#1b1f24\">gap length</text>\n",
                     kLeft + plot_w / 2, kHeight - 8);
  out += fmt::format(
      "<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#1b1f24\">fraction of gaps "
      "longer</text>\n",
      kTop + plot_h / 2);
  if (threshold_ns > 0) {
    const double x = area.px(threshold_ns);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e08e0b\" stroke-width=\"2\" "
        "stroke-dasharray=\"4 3\"/>\n",
        svg_coordinate(x), kTop, kTop + plot_h);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#9a5d00\" font-size=\"11\">threshold {}</text>\n",
                       svg_coordinate(x + 4), kTop + plot_h - 6, duration_text(threshold_ns));
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const LineStyle& style = kLineStyles[i % kLineStyles.size()];
    std::string points;
    for (const auto& [x, y] : series[i].points)
      if (x > 0 && y > 0)
        points += (points.empty() ? "" : " ") + svg_coordinate(area.px(x)) + "," + svg_coordinate(area.py(y));
    if (points.empty()) continue;
    out += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\"{} points=\"{}\"/>\n",
        style.colour, dash_attribute(style), points);
  }
  // The legend, top right inside the plot: a sample of each line and its label.
  const double legend_x = kLeft + plot_w - 190;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const LineStyle& style = kLineStyles[i % kLineStyles.size()];
    const double y = kTop + 16 + 18 * static_cast<double>(i);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"184\" height=\"18\" fill=\"#fff\" fill-opacity=\"0.85\"/>"
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>"
        "<text x=\"{}\" y=\"{}\" fill=\"#1b1f24\">{}</text>\n",
        svg_coordinate(legend_x - 4), svg_coordinate(y - 12), svg_coordinate(legend_x), svg_coordinate(y - 4),
        svg_coordinate(legend_x + 30), svg_coordinate(y - 4), style.colour, dash_attribute(style),
        svg_coordinate(legend_x + 36), svg_coordinate(y), html_escape(series[i].label));
  }
  return out + "</svg>\n";
}

}  // namespace jitterd
