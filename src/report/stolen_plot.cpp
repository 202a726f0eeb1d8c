// SPDX-License-Identifier: Apache-2.0
#include "report/stolen_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "report/html.h"

namespace jitterd {
namespace {

// One colour per cause, in kStolenCauses order: the preemptions red at the bottom, the interrupts
// in blues and purples, the softirqs in greens, an SMI yellow, the hypervisor slate, what a loop
// could not name in greys.
constexpr std::array<const char*, kStolenCauseCount> kCauseColours = {
    "#c0392b", "#1d4e89", "#6a1b9a", "#a569bd", "#b7950b", "#e67e22", "#7f8c8d", "#16a085",
    "#2e7d32", "#82c99b", "#f1c40f", "#34495e", "#5d6d7e", "#d98cb3", "#b8c2c4"};

constexpr double kWidth = 640, kLeft = 64, kRight = 16, kTop = 34, kPlotHeight = 180;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kLegendTop = kTop + kPlotHeight + 54, kLegendRow = 17;
constexpr std::size_t kLegendColumns = 3;

// A duration in seconds as the legend and the caption show it: 41.2 ms.
std::string seconds_text(double seconds) {
  if (seconds >= 1000) return fmt::format("{:.0f} s", seconds);  // an hour's window: 3600 s, not 3.6e+03
  if (seconds >= 1) return fmt::format("{:.3g} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
  if (seconds >= 1e-6) return fmt::format("{:.3g} µs", seconds * 1e6);
  return seconds > 0 ? fmt::format("{:.3g} ns", seconds * 1e9) : std::string("0");
}

// The smallest 1, 2 or 5 times a power of ten at or above `v`, and which of the three it is.
std::pair<double, int> nice_ceiling(double v) {
  const double power = std::pow(10.0, std::floor(std::log10(v)));
  for (const int m : {1, 2, 5})
    if (m * power >= v * (1 - 1e-9)) return {m * power, m};
  return {10 * power, 1};
}

// The geometry every part of one plot shares: time on x, share on y.
struct Axes {
  double start, end, y_max;
  double px(double t) const { return kLeft + (t - start) / (end - start) * kPlotWidth; }
  double height(double share) const { return share / y_max * kPlotHeight; }
};

std::string y_axis(const Axes& a, int multiple) {
  std::string out;
  const int steps = multiple == 5 ? 5 : 4;
  for (int i = 0; i <= steps; ++i) {
    const double share = a.y_max * i / steps, y = kTop + kPlotHeight - a.height(share);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#d5dae1\"/>", kLeft,
                       svg_coordinate(y), kLeft + kPlotWidth);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{:.3g}%</text>\n", kLeft - 6,
                       svg_coordinate(y + 4), share * 100);
  }
  return out + fmt::format(
                   "<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#1b1f24\">% of "
                   "each reading taken</text>\n",
                   kTop + kPlotHeight / 2);
}

std::string x_axis(const Axes& a) {
  const double span = a.end - a.start;
  double step = 1;
  for (const double s : {1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800}) {
    step = s;
    if (span / s <= 6) break;
  }
  std::string out;
  for (double back = 0; back <= span + 1e-9; back += step) {
    const double x = a.px(a.end - back);
    const std::string label = back == 0     ? "0"
                              : span >= 120 ? fmt::format("−{:g} min", back / 60)
                                            : fmt::format("−{:g} s", back);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#eceff3\"/>", svg_coordinate(x),
                       kTop, kTop + kPlotHeight);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
                       svg_coordinate(x), kTop + kPlotHeight + 16, label);
  }
  return out + fmt::format(
                   "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#1b1f24\">seconds before the last "
                   "reading</text>\n",
                   kLeft + kPlotWidth / 2, kTop + kPlotHeight + 36);
}

double share_of(const StolenPlotPoint& p, std::size_t cause) {
  return p.covered_seconds > 0 ? p.stolen_seconds[cause] / p.covered_seconds : 0;
}

// Each cause's bars in one group, stacked on the causes before it.
std::string bars(const StolenPlot& plot, const Axes& a) {
  std::vector<double> base(plot.points.size(), 0.0);
  std::string out;
  for (std::size_t c = 0; c < kStolenCauseCount; ++c) {
    std::string rects;
    for (std::size_t i = 0; i < plot.points.size(); ++i) {
      const StolenPlotPoint& p = plot.points[i];
      const double share = share_of(p, c);
      if (share <= 0) continue;
      const double x0 = a.px(std::max(p.start_unix_seconds, a.start)), x1 = a.px(p.end_unix_seconds);
      const double h = a.height(share), y = kTop + kPlotHeight - a.height(base[i]) - h;
      base[i] += share;
      if (x1 <= x0) continue;
      rects += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", svg_coordinate(x0),
                           fmt::format("{:.2f}", y), svg_coordinate(x1 - x0), fmt::format("{:.2f}", h));
    }
    if (!rects.empty())
      out += fmt::format("<g fill=\"{}\" data-cause=\"{}\">{}</g>\n", kCauseColours[c],
                         html_escape(kStolenCauses[c]), rects);
  }
  return out;
}

// The causes with time in the window, each with its total: a swatch and a label per entry.
std::string legend(const StolenPlot& plot, const std::array<double, kStolenCauseCount>& totals) {
  std::string out;
  std::size_t n = 0;
  for (std::size_t c = 0; c < kStolenCauseCount; ++c) {
    if (totals[c] <= 0) continue;
    const double x = kLeft + static_cast<double>(n % kLegendColumns) * (kPlotWidth / kLegendColumns);
    const double y = kLegendTop + static_cast<double>(n / kLegendColumns) * kLegendRow;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "fill=\"#1b1f24\" data-legend=\"{}\">{} {}</text>\n",
        svg_coordinate(x), svg_coordinate(y - 10), kCauseColours[c], svg_coordinate(x + 16), svg_coordinate(y),
        html_escape(kStolenCauses[c]), html_escape(kStolenCauses[c]), seconds_text(totals[c]));
    ++n;
  }
  if (n == 0 && !plot.points.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#5b6470\">nothing taken in the window</text>\n", kLeft,
                       kLegendTop);
  return out;
}

std::array<double, kStolenCauseCount> cause_totals(const StolenPlot& plot) {
  std::array<double, kStolenCauseCount> totals{};
  for (const StolenPlotPoint& p : plot.points)
    for (std::size_t c = 0; c < kStolenCauseCount; ++c) totals[c] += p.stolen_seconds[c];
  return totals;
}

}  // namespace

std::string stolen_plot_subject(const StolenPlot& plot) {
  return plot.loop.empty() ? fmt::format("cpu {}", plot.cpu)
                           : fmt::format("loop {} (cpu {})", plot.loop, plot.cpu);
}

double stolen_plot_peak(const StolenPlot& plot) {
  double peak = 0;
  for (const StolenPlotPoint& p : plot.points) {
    double stacked = 0;
    for (std::size_t c = 0; c < kStolenCauseCount; ++c) stacked += share_of(p, c);
    peak = std::max(peak, stacked);
  }
  return peak;
}

std::string stolen_plot_svg(const StolenPlot& plot) {
  const std::array<double, kStolenCauseCount> totals = cause_totals(plot);
  const std::size_t causes =
      static_cast<std::size_t>(std::count_if(totals.begin(), totals.end(), [](double t) { return t > 0; }));
  const double height =
      kLegendTop +
      static_cast<double>((std::max<std::size_t>(causes, 1) + kLegendColumns - 1) / kLegendColumns) * kLegendRow;
  const auto [y_max, multiple] = nice_ceiling(std::max(stolen_plot_peak(plot), 1e-5));
  const double end = plot.points.empty() ? 0 : plot.points.back().end_unix_seconds;
  const Axes axes{end - std::max(plot.window_seconds, 1.0), end, y_max};
  const std::string title =
      stolen_plot_subject(plot) + ": time taken by cause, the last " + seconds_text(plot.window_seconds);
  std::string out = fmt::format(
      "<svg class=\"plot stolen\" viewBox=\"0 0 {} {}\" role=\"img\" font-family=\"system-ui,sans-serif\" "
      "font-size=\"12\">\n<title>{}</title>\n",
      kWidth, svg_coordinate(height), html_escape(title));
  out += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"600\" fill=\"#1b1f24\">{}</text>\n",
                     kLeft, html_escape(title));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfcfd\" stroke=\"#9aa3ad\"/>\n",
                     kLeft, kTop, kPlotWidth, kPlotHeight);
  out += y_axis(axes, multiple) + x_axis(axes);
  if (plot.points.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5b6470\">no reading yet</text>\n",
                       kLeft + kPlotWidth / 2, kTop + kPlotHeight / 2);
  out += bars(plot, axes) + legend(plot, totals);
  return out + "</svg>\n";
}

std::string stolen_plot_figure(const StolenPlot& plot, std::string_view id) {
  std::string caption;
  if (plot.named && plot.preempted_seconds > 0) {
    caption = "Worst preempters over the window: ";
    for (const StolenPreempter& p : plot.preempters)
      caption += fmt::format("{}<strong>{}</strong> ({}) {:.1f}% of the preempted time, {} in {} preemption{}",
                             &p == &plot.preempters.front() ? "" : "; ", html_escape(p.task),
                             html_escape(p.task_class), p.seconds / plot.preempted_seconds * 100,
                             seconds_text(p.seconds), p.preemptions, p.preemptions == 1 ? "" : "s");
    if (plot.unnamed_seconds > 0)
      caption +=
          fmt::format("{}{:.1f}% not named (under the outlier threshold, or lost)",
                      plot.preempters.empty() ? "" : "; ", plot.unnamed_seconds / plot.preempted_seconds * 100);
    caption += ".";
  } else if (plot.named) {
    caption = "No preemption in the window.";
  }
  if (!plot.note.empty()) caption += (caption.empty() ? "" : " ") + html_escape(plot.note) + ".";
  return "<figure class=\"stolen\" id=\"" + html_escape(id) + "\">" + stolen_plot_svg(plot) +
         (caption.empty() ? "" : "<figcaption>" + caption + "</figcaption>") + "</figure>\n";
}

Json stolen_plot_json(const StolenPlot& plot) {
  const auto ms = [](double seconds) { return std::round(seconds * 1e3) / 1e3; };
  const auto ns = [](double seconds) { return std::round(seconds * 1e9) / 1e9; };
  const std::array<double, kStolenCauseCount> totals = cause_totals(plot);
  Json causes = Json::array();
  for (std::size_t c = 0; c < kStolenCauseCount; ++c)
    if (totals[c] > 0) causes.push_back(kStolenCauses[c]);
  Json points = Json::array();
  for (const StolenPlotPoint& p : plot.points) {
    Json stolen = Json::array();
    for (std::size_t c = 0; c < kStolenCauseCount; ++c)
      if (totals[c] > 0) stolen.push_back(ns(p.stolen_seconds[c]));
    points.push_back({{"start_unix_seconds", ms(p.start_unix_seconds)},
                      {"end_unix_seconds", ms(p.end_unix_seconds)},
                      {"seconds", ns(p.covered_seconds)},
                      {"stolen_seconds", std::move(stolen)}});
  }
  Json preempters = Json::array();
  for (const StolenPreempter& p : plot.preempters)
    preempters.push_back(
        {{"task", p.task}, {"class", p.task_class}, {"seconds", ns(p.seconds)}, {"preemptions", p.preemptions}});
  return {{"cpu", plot.cpu},
          {"loop", plot.loop.empty() ? Json() : Json(plot.loop)},
          {"window_seconds", plot.window_seconds},
          {"step_seconds", plot.step_seconds},
          {"causes", std::move(causes)},
          {"points", std::move(points)},
          {"preempters_named", plot.named},
          {"preempted_seconds", ns(plot.preempted_seconds)},
          {"unnamed_seconds", ns(plot.unnamed_seconds)},
          {"preemptions", plot.preemptions},
          {"worst_preempters", std::move(preempters)},
          {"note", plot.note}};
}

}  // namespace jitterd
