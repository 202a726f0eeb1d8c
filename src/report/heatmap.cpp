// SPDX-License-Identifier: Apache-2.0
#include "report/heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "report/html.h"
#include "report/render.h"

namespace jitterd {
namespace {

// Colours of a heatmap: white to dark blue for values, blue - white - red for differences.
struct Rgb {
  double r, g, b;
};
Rgb mix(Rgb from, Rgb to, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return {from.r + (to.r - from.r) * t, from.g + (to.g - from.g) * t, from.b + (to.b - from.b) * t};
}
std::string hex(Rgb c) {
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                     static_cast<int>(std::lround(c.b)));
}
bool dark(Rgb c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 140; }

constexpr Rgb kLight{239, 245, 251}, kDarkBlue{8, 48, 107}, kWhite{255, 255, 255}, kBlue{33, 102, 172},
    kRed{178, 24, 43};

struct RelationMark {
  std::string_view relation;
  std::string_view letter;
};
constexpr std::array<RelationMark, 5> kRelationMarks{
    {{"smt_sibling", "T"}, {"shared_l2", "2"}, {"shared_l3", "3"}, {"same_package", "P"}, {"cross_package", "X"}}};

std::string_view relation_letter(std::string_view relation) {
  for (const RelationMark& mark : kRelationMarks)
    if (mark.relation == relation) return mark.letter;
  return "?";
}

}  // namespace

std::vector<HeatmapCell> pair_heatmap_cells(const ProbeTable& pairs_table) {
  std::vector<HeatmapCell> cells;
  const auto column = [&](std::string_view name) {
    const auto it = std::find(pairs_table.columns.begin(), pairs_table.columns.end(), name);
    return static_cast<std::size_t>(it - pairs_table.columns.begin());
  };
  const std::size_t a = column("cpu_a"), b = column("cpu_b"), relation = column("relation"),
                    median = column("median_ns");
  const std::size_t columns = pairs_table.columns.size();
  if (a == columns || b == columns || relation == columns || median == columns) return cells;
  for (const auto& row : pairs_table.rows) {
    if (row.size() < columns || !row[a].is_number() || !row[b].is_number() || !row[median].is_number()) continue;
    cells.push_back({static_cast<int>(cell_number(row[a])), static_cast<int>(cell_number(row[b])),
                     cell_number(row[median]), row[relation].kind == Cell::Kind::text ? row[relation].text : ""});
  }
  return cells;
}

namespace {

// Where a heatmap's cells go: the CPUs of the pairs, rows every CPU but the lowest and columns
// every CPU but the highest (the lower triangle), the cell size, and the range of the values.
struct HeatmapLayout {
  std::vector<int> cpus;
  std::map<std::pair<int, int>, const HeatmapCell*> by_pair;  // (lower cpu, higher cpu)
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  std::size_t n = 0;     // rows and columns
  bool labelled = true;  // values written in the cells; beyond 16 CPUs the tooltips hold them
  double cell = 0;
  double legend_top = 0;
  static constexpr double kLeft = 40, kTop = 44;
};

HeatmapLayout heatmap_layout(const std::vector<HeatmapCell>& cells) {
  HeatmapLayout l;
  std::set<int> cpu_set;
  for (const HeatmapCell& c : cells) {
    if (c.cpu_a == c.cpu_b || !std::isfinite(c.value)) continue;
    cpu_set.insert({c.cpu_a, c.cpu_b});
    l.by_pair[{std::min(c.cpu_a, c.cpu_b), std::max(c.cpu_a, c.cpu_b)}] = &c;
    l.lo = std::min(l.lo, c.value), l.hi = std::max(l.hi, c.value);
  }
  l.cpus.assign(cpu_set.begin(), cpu_set.end());
  l.n = l.cpus.size() < 2 ? 0 : l.cpus.size() - 1;
  l.labelled = l.n <= 16;
  l.cell = l.n <= 3 ? 72 : l.labelled ? 46 : std::max(8.0, 736.0 / static_cast<double>(l.n));
  l.legend_top = HeatmapLayout::kTop + l.cell * static_cast<double>(l.n) + 30;
  return l;
}

// A value's colour and text: one scale from the smallest (light) to the largest (dark), or a
// difference diverging around 0.
struct HeatmapScale {
  const HeatmapLayout& layout;
  const HeatmapOptions& options;
  double extent() const { return std::max(std::fabs(layout.lo), std::fabs(layout.hi)); }
  Rgb colour(double v) const {
    const double lo = layout.lo, hi = layout.hi, e = extent();
    if (options.diverging) return e > 0 ? (v < 0 ? mix(kWhite, kBlue, -v / e) : mix(kWhite, kRed, v / e)) : kWhite;
    return hi > lo ? mix(kLight, kDarkBlue, 0.15 + 0.85 * (v - lo) / (hi - lo)) : mix(kLight, kDarkBlue, 0.5);
  }
  std::string text(double v) const {
    return options.diverging ? fmt::format("{:+.1f}", v) : fmt::format("{:.1f}", v);
  }
};

// The CPU numbers along the top (columns) and down the left (rows).
std::string heatmap_axes(const HeatmapLayout& l) {
  std::string out;
  for (std::size_t i = 0; i < l.n; ++i) {
    const double x = HeatmapLayout::kLeft + l.cell * static_cast<double>(i) + l.cell / 2;
    const double y = HeatmapLayout::kTop + l.cell * static_cast<double>(i) + l.cell / 2 + 4;
    if (l.labelled || i % std::max<std::size_t>(1, l.n / 16) == 0) {
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5b6470\">{}</text>",
                         svg_coordinate(x), HeatmapLayout::kTop - 6, l.cpus[i]);
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#5b6470\">{}</text>\n",
                         HeatmapLayout::kLeft - 6, svg_coordinate(y), l.cpus[i + 1]);
    }
  }
  return out;
}

// One measured pair at (x, y): its colour, its tooltip, and its value and relation letter (or the
// letter alone when there are too many cells for their values).
std::string heatmap_cell(const HeatmapScale& scale, const HeatmapCell& p, double x, double y) {
  const double cell = scale.layout.cell;
  const Rgb fill = scale.colour(p.value);
  std::string out = fmt::format(
      "<g><title>cpu {} - cpu {}: {} {} ({})</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
      "fill=\"{}\" stroke=\"#fff\"/>",
      p.cpu_a, p.cpu_b, scale.text(p.value), html_escape(scale.options.unit), html_escape(p.relation),
      svg_coordinate(x), svg_coordinate(y), svg_coordinate(cell), svg_coordinate(cell), hex(fill));
  const char* ink = dark(fill) ? "#fff" : "#1b1f24";
  if (scale.layout.labelled) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"{}\">{}</text>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
        svg_coordinate(x + 3), svg_coordinate(y + 11), ink, html_escape(relation_letter(p.relation)),
        svg_coordinate(x + cell / 2), svg_coordinate(y + cell / 2 + 8), ink, scale.text(p.value));
  } else {
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                       svg_coordinate(x + cell / 2), svg_coordinate(y + cell * 0.72), svg_coordinate(cell * 0.6),
                       ink, html_escape(relation_letter(p.relation)));
  }
  return out + "</g>\n";
}

// Every cell of the lower triangle, empty where no pair was given; `relations` collects the
// relation classes drawn.
std::string heatmap_cells(const HeatmapScale& scale, std::set<std::string>& relations) {
  const HeatmapLayout& l = scale.layout;
  std::string out;
  for (std::size_t r = 0; r < l.n; ++r) {
    for (std::size_t c = 0; c <= r; ++c) {
      const auto it = l.by_pair.find({l.cpus[c], l.cpus[r + 1]});
      const double x = HeatmapLayout::kLeft + l.cell * static_cast<double>(c);
      const double y = HeatmapLayout::kTop + l.cell * static_cast<double>(r);
      if (it == l.by_pair.end()) {
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f5f8\"/>\n",
                           svg_coordinate(x), svg_coordinate(y), svg_coordinate(l.cell), svg_coordinate(l.cell));
        continue;
      }
      relations.insert(it->second->relation);
      out += heatmap_cell(scale, *it->second, x, y);
    }
  }
  return out;
}

// The scale's ends, then the letters of the relation classes present.
std::string heatmap_legend(const HeatmapScale& scale, const std::set<std::string>& relations) {
  const HeatmapLayout& l = scale.layout;
  const bool diverging = scale.options.diverging;
  const Rgb low = diverging ? kBlue : scale.colour(l.lo), high = diverging ? kRed : scale.colour(l.hi);
  const std::string low_text = diverging ? scale.text(-scale.extent()) : scale.text(l.lo);
  const std::string high_text = diverging ? scale.text(scale.extent()) : scale.text(l.hi);
  const auto swatch = [&](double x, Rgb fill, const std::string& text) {
    return fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{} {}</text>", x,
        svg_coordinate(l.legend_top - 10), hex(fill), x + 16, svg_coordinate(l.legend_top), text,
        html_escape(scale.options.unit));
  };
  std::string out = swatch(HeatmapLayout::kLeft, low, low_text);
  if (high_text != low_text) out += swatch(HeatmapLayout::kLeft + 110, high, high_text);
  out += "\n";
  std::string letters;
  for (const RelationMark& mark : kRelationMarks)
    if (relations.count(std::string(mark.relation)))
      letters += fmt::format("{}{} {}", letters.empty() ? "" : ", ", mark.letter, mark.relation);
  if (!letters.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#5b6470\">{}: {}</text>\n", HeatmapLayout::kLeft,
                       svg_coordinate(l.legend_top + 20), l.labelled ? "corner letter" : "letter",
                       html_escape(letters));
  return out;
}

}  // namespace

std::string heatmap_svg(const std::vector<HeatmapCell>& cells, std::string_view title,
                        const HeatmapOptions& options) {
  const HeatmapLayout layout = heatmap_layout(cells);
  const double grid = layout.cell * static_cast<double>(layout.n);
  const double width = std::max(280.0, HeatmapLayout::kLeft + grid + 12);
  const double height = layout.legend_top + 40;
  std::string out = fmt::format(
      "<svg viewBox=\"0 0 {} {}\" role=\"img\" "
      "font-family=\"system-ui,sans-serif\" font-size=\"11\">\n<title>{}</title>\n",
      svg_coordinate(width), svg_coordinate(height), html_escape(title));
  out += fmt::format("<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"600\" fill=\"#1b1f24\">{}</text>\n",
                     html_escape(title));
  if (layout.n == 0) {
    out += fmt::format("<text x=\"4\" y=\"{}\" fill=\"#5b6470\">no pair measured</text>\n", HeatmapLayout::kTop);
    return out + "</svg>\n";
  }
  const HeatmapScale scale{layout, options};
  std::set<std::string> relations;
  out += heatmap_axes(layout);
  out += heatmap_cells(scale, relations);
  return out + heatmap_legend(scale, relations) + "</svg>\n";
}

}  // namespace jitterd
