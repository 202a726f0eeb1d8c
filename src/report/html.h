// SPDX-License-Identifier: Apache-2.0
// HTML for every page jitterd writes: the `report` and `compare` files and the daemon's own live
// pages. One self-contained document per page: inline CSS shared by all of them, inline SVG for
// plots, no script, no font and nothing fetched (a Content-Security-Policy meta forbids it), so a
// file opens the same offline, on a phone and on paper. Every text from the machine (IRQ names,
// the kernel command line, BIOS strings) goes through html_escape. Pure functions, safe from any
// thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/histogram.h"
#include "probes/probe.h"

namespace jitterd {

// Text as HTML content or a quoted attribute value: & < > " ' become entities; bytes that are not
// valid UTF-8 become U+FFFD; control characters other than tab and newline become U+FFFD too; the
// bidirectional controls and line separators (host/text.h reorders_text) become their visible
// escape, "\u202e", as on a terminal: a browser would reorder the text around them.
std::string html_escape(std::string_view text);

struct HtmlPageOptions {
  int refresh_seconds = 0;  // > 0: <meta http-equiv="refresh"> every that many seconds
};

// A complete document around `body_html` (trusted markup, built from escaped parts): doctype,
// charset, viewport, the CSP meta (default-src 'none'; style-src 'unsafe-inline'; img-src data:),
// the shared stylesheet (narrow screens: tables scroll sideways, plots scale; print styles).
// `title` is escaped.
std::string html_page(std::string_view title, std::string_view body_html, const HtmlPageOptions& options = {});

// A number as an SVG coordinate: one digit after the point is finer than a pixel.
std::string svg_coordinate(double value);

// A typed table as <table> in a horizontally scrolling wrapper: numbers right-aligned (class
// "num"), long text wrapping (class "wrap"), cells as cell_text shows them, escaped; a cell that
// carries its own html_class (compare's verdicts) gets that class instead. The title becomes a
// caption when not empty.
std::string table_html(const ProbeTable& table);

// One line of an exceedance plot: x = gap length in ns, y = fraction of gaps longer than x.
struct ExceedanceSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;
};

// One point per non-empty bucket: x its highest value in ns, y the fraction of gaps above it,
// exact (every gap in the bucket is at most x, every gap in a higher bucket above it). Points with
// y = 0 (the last bucket) are kept; the plot leaves them out. Empty for an empty histogram.
std::vector<std::pair<double, double>> exceedance_points(const HistogramSnapshot& histogram, double ns_per_tick);

// A log-log plot of the series, overlaid (the first solid, the second dashed, the third dotted:
// told apart without colour), decades labelled on both axes, `threshold_ns` marked by a vertical
// line (none when <= 0), a legend. The SVG has a viewBox and no fixed width, so it scales to its
// container.
std::string exceedance_plot_svg(const std::vector<ExceedanceSeries>& series, double threshold_ns,
                                std::string_view title);

}  // namespace jitterd
