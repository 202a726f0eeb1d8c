// SPDX-License-Identifier: Apache-2.0
#include "report/stolen_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "host/text.h"

namespace jitterd {
namespace {

// A finite number at or above 0, from an array.
double number_at(const JsonReader& r, const Json& v, const std::string& where) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    r.fail(where, "must be a number at or above 0");
  return v.get<double>();
}

struct Figures {
  double covered = 0, stolen = 0, peak = 0;
  std::vector<double> by_cause;  // seconds, by the plot's "causes"
  std::vector<double> shares;    // per point
};

Figures figures_of(const JsonReader& r, const Json& plot, const std::string& at) {
  const Json& causes = r.array(plot, at, "causes");
  for (std::size_t c = 0; c < causes.size(); ++c)
    if (!causes[c].is_string()) r.fail(fmt::format("{}.causes[{}]", at, c), "must be a string");
  Figures f;
  f.by_cause.assign(causes.size(), 0.0);
  const Json& points = r.array(plot, at, "points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string where = fmt::format("{}.points[{}]", at, i);
    const double covered = r.number(points[i], where, "seconds");
    const Json& stolen = r.array(points[i], where, "stolen_seconds");
    if (stolen.size() != causes.size()) r.fail(where + ".stolen_seconds", "must hold one figure per cause");
    double sum = 0;
    for (std::size_t c = 0; c < stolen.size(); ++c) {
      const double seconds = number_at(r, stolen[c], fmt::format("{}.stolen_seconds[{}]", where, c));
      f.by_cause[c] += seconds;
      sum += seconds;
    }
    f.covered += covered;
    f.stolen += sum;
    f.shares.push_back(covered > 0 ? sum / covered : 0);
    f.peak = std::max(f.peak, f.shares.back());
  }
  return f;
}

}  // namespace

std::string stolen_sparkline(const std::vector<double>& shares) {
  static constexpr std::array<const char*, 8> kLevels{"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const double peak = shares.empty() ? 0 : *std::max_element(shares.begin(), shares.end());
  const std::size_t width = std::min(shares.size(), kStolenSparklineWidth);
  std::string out;
  for (std::size_t i = 0; i < width; ++i) {
    double share = 0;  // the largest of the points this character stands for
    for (std::size_t p = i * shares.size() / width; p < (i + 1) * shares.size() / width; ++p)
      share = std::max(share, shares[p]);
    // (0, peak] in seven levels; the epsilon keeps an exact seventh on its own level.
    const int level =
        share <= 0 || peak <= 0 ? 0 : std::clamp(static_cast<int>(std::ceil(share / peak * 7 - 1e-9)), 1, 7);
    out += kLevels[static_cast<std::size_t>(level)];
  }
  return out;
}

ProbeTable stolen_table_from_json(const JsonReader& r, const Json& stolen, const std::string& where) {
  ProbeTable table{
      "stolen time over the window, by cause (the status page's plots; over_time: each reading's "
      "share, oldest first, scaled to the peak)",
      {"cpu", "loop", "window_s", "taken_share", "peak_share", "top_cause", "worst_preempter", "worst_share",
       "over_time"},
      {}};
  if (!stolen.is_array()) r.fail(where, "must be an array");
  for (std::size_t i = 0; i < stolen.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const Json& plot = stolen[i];
    const Json& loop = r.field(plot, at, "loop");
    if (!loop.is_null() && !loop.is_string()) r.fail(at + ".loop", "must be a string or null");
    const Figures f = figures_of(r, plot, at);
    const Json& causes = plot["causes"];
    const auto top = std::max_element(f.by_cause.begin(), f.by_cause.end());
    Cell worst, worst_share;
    const Json& preempters = r.array(plot, at, "worst_preempters");
    const double preempted = r.number(plot, at, "preempted_seconds");
    if (!preempters.empty() && preempted > 0) {
      const std::string p = at + ".worst_preempters[0]";
      worst = Cell(printable(r.text(preempters[0], p, "task")) + " (" +
                   printable(r.text(preempters[0], p, "class")) + ")");
      worst_share = Cell(r.number(preempters[0], p, "seconds") / preempted, 4);
    }
    table.rows.push_back(
        {Cell(r.count(plot, at, "cpu")), loop.is_string() ? Cell(printable(loop.get<std::string>())) : Cell(),
         Cell(r.number(plot, at, "window_seconds"), 0), f.covered > 0 ? Cell(f.stolen / f.covered, 6) : Cell(),
         f.covered > 0 ? Cell(f.peak, 6) : Cell(),
         top != f.by_cause.end() && *top > 0
             ? Cell(printable(causes[static_cast<std::size_t>(top - f.by_cause.begin())].get<std::string>()))
             : Cell(),
         worst, worst_share, Cell(stolen_sparkline(f.shares))});
  }
  return table;
}

}  // namespace jitterd
