#include "report/heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "report/html.h"

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
    const auto value = [](const Cell& cell) {
      return cell.kind == Cell::Kind::integer ? static_cast<double>(cell.integer) : cell.number;
    };
    cells.push_back({static_cast<int>(value(row[a])), static_cast<int>(value(row[b])), value(row[median]),
                     row[relation].kind == Cell::Kind::text ? row[relation].text : ""});
  }
  return cells;
}

std::string heatmap_svg(const std::vector<HeatmapCell>& cells, std::string_view title,
                        const HeatmapOptions& options) {
  std::set<int> cpu_set;
  std::map<std::pair<int, int>, const HeatmapCell*> by_pair;  // (lower cpu, higher cpu)
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const HeatmapCell& c : cells) {
    if (c.cpu_a == c.cpu_b || !std::isfinite(c.value)) continue;
    cpu_set.insert({c.cpu_a, c.cpu_b});
    by_pair[{std::min(c.cpu_a, c.cpu_b), std::max(c.cpu_a, c.cpu_b)}] = &c;
    lo = std::min(lo, c.value), hi = std::max(hi, c.value);
  }
  const std::vector<int> cpus(cpu_set.begin(), cpu_set.end());
  // Rows are every CPU but the lowest, columns every CPU but the highest: the lower triangle.
  const std::size_t n = cpus.size() < 2 ? 0 : cpus.size() - 1;
  const bool labelled = n <= 16;  // values written in the cells; beyond that the tooltips hold them
  const double cell = n <= 3 ? 72 : labelled ? 46 : std::max(8.0, 736.0 / static_cast<double>(n));
  constexpr double kLeft = 40, kTop = 44;
  const double grid = cell * static_cast<double>(n);
  const double width = std::max(280.0, kLeft + grid + 12);
  const double legend_top = kTop + grid + 30;
  const double height = legend_top + 40;
  std::string out = fmt::format(
      "<svg viewBox=\"0 0 {} {}\" role=\"img\" "
      "font-family=\"system-ui,sans-serif\" font-size=\"11\">\n<title>{}</title>\n",
      svg_coordinate(width), svg_coordinate(height), html_escape(title));
  out += fmt::format("<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"600\" fill=\"#1b1f24\">{}</text>\n",
                     html_escape(title));
  if (n == 0) {
    out += fmt::format("<text x=\"4\" y=\"{}\" fill=\"#5b6470\">no pair measured</text>\n", kTop);
    return out + "</svg>\n";
  }
  const double extent = std::max(std::fabs(lo), std::fabs(hi));
  const auto colour = [&](double v) {
    if (options.diverging)
      return extent > 0 ? (v < 0 ? mix(kWhite, kBlue, -v / extent) : mix(kWhite, kRed, v / extent)) : kWhite;
    return hi > lo ? mix(kLight, kDarkBlue, 0.15 + 0.85 * (v - lo) / (hi - lo)) : mix(kLight, kDarkBlue, 0.5);
  };
  const auto value_text = [&](double v) {
    return options.diverging ? fmt::format("{:+.1f}", v) : fmt::format("{:.1f}", v);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double x = kLeft + cell * static_cast<double>(i) + cell / 2;
    const double y = kTop + cell * static_cast<double>(i) + cell / 2 + 4;
    if (labelled || i % std::max<std::size_t>(1, n / 16) == 0) {
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5b6470\">{}</text>",
                         svg_coordinate(x), kTop - 6, cpus[i]);
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#5b6470\">{}</text>\n", kLeft - 6,
                         svg_coordinate(y), cpus[i + 1]);
    }
  }
  std::set<std::string> relations;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c <= r; ++c) {
      const auto it = by_pair.find({cpus[c], cpus[r + 1]});
      const double x = kLeft + cell * static_cast<double>(c), y = kTop + cell * static_cast<double>(r);
      if (it == by_pair.end()) {
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f5f8\"/>\n",
                           svg_coordinate(x), svg_coordinate(y), svg_coordinate(cell), svg_coordinate(cell));
        continue;
      }
      const HeatmapCell& p = *it->second;
      relations.insert(p.relation);
      const Rgb fill = colour(p.value);
      out += fmt::format(
          "<g><title>cpu {} - cpu {}: {} {} ({})</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"{}\" stroke=\"#fff\"/>",
          p.cpu_a, p.cpu_b, value_text(p.value), html_escape(options.unit), html_escape(p.relation),
          svg_coordinate(x), svg_coordinate(y), svg_coordinate(cell), svg_coordinate(cell), hex(fill));
      const char* ink = dark(fill) ? "#fff" : "#1b1f24";
      if (labelled) {
        out += fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"{}\">{}</text>"
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
            svg_coordinate(x + 3), svg_coordinate(y + 11), ink, html_escape(relation_letter(p.relation)),
            svg_coordinate(x + cell / 2), svg_coordinate(y + cell / 2 + 8), ink, value_text(p.value));
      } else {
        // Too many cells for their values (the tooltip holds them): the relation's letter alone.
        out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                           svg_coordinate(x + cell / 2), svg_coordinate(y + cell * 0.72),
                           svg_coordinate(cell * 0.6), ink, html_escape(relation_letter(p.relation)));
      }
      out += "</g>\n";
    }
  }
  // Legend: the scale's ends, then the letters of the relation classes present.
  const Rgb low = options.diverging ? kBlue : colour(lo), high = options.diverging ? kRed : colour(hi);
  const std::string low_text = options.diverging ? value_text(-extent) : value_text(lo);
  const std::string high_text = options.diverging ? value_text(extent) : value_text(hi);
  const auto swatch = [&](double x, Rgb fill, const std::string& text) {
    return fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{} {}</text>", x,
        svg_coordinate(legend_top - 10), hex(fill), x + 16, svg_coordinate(legend_top), text,
        html_escape(options.unit));
  };
  out += swatch(kLeft, low, low_text);
  if (high_text != low_text) out += swatch(kLeft + 110, high, high_text);
  out += "\n";
  std::string letters;
  for (const RelationMark& mark : kRelationMarks)
    if (relations.count(std::string(mark.relation)))
      letters += fmt::format("{}{} {}", letters.empty() ? "" : ", ", mark.letter, mark.relation);
  if (!letters.empty())
    out +=
        fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#5b6470\">{}: {}</text>\n", kLeft,
                    svg_coordinate(legend_top + 20), labelled ? "corner letter" : "letter", html_escape(letters));
  return out + "</svg>\n";
}

}  // namespace jitterd
