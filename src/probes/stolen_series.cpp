// SPDX-License-Identifier: Apache-2.0
#include "probes/stolen_series.h"

#include <algorithm>
#include <numeric>

namespace jitterd {

std::optional<std::size_t> stolen_cause_index(std::string_view cause) {
  const auto found = std::find(kStolenCauses.begin(), kStolenCauses.end(), cause);
  if (found == kStolenCauses.end()) return std::nullopt;
  return static_cast<std::size_t>(found - kStolenCauses.begin());
}

StolenSeries::StolenSeries(std::uint64_t window_ns)
    : window_ns_(window_ns), step_ns_(std::max(kMinStolenStepNs, window_ns / kStolenColumns)) {}

void StolenSeries::add(std::uint64_t end_ns, std::uint64_t length_ns, const StolenNs& stolen,
                       std::uint64_t covered_ns) {
  if (length_ns == 0) return;
  if (!points_.empty() && end_ns <= points_.back().end_ns) return;  // out of order: not a later reading
  const std::uint64_t start_ns = end_ns - std::min(end_ns, length_ns);
  // The reading joins the last point when it follows it (no gap of half a reading: the CPU was
  // not offline between them) and the point, with half of it, stays within a step: a point is a
  // reading, or a step's worth of shorter ones.
  StolenPoint* into = nullptr;
  if (!points_.empty()) {
    StolenPoint& last = points_.back();
    const bool follows = start_ns <= last.end_ns + length_ns / 2;
    if (follows && end_ns - last.start_ns <= step_ns_ + length_ns / 2) into = &last;
  }
  if (into == nullptr) {
    points_.push_back({start_ns, end_ns, 0, {}});
    into = &points_.back();
  }
  into->end_ns = end_ns;
  into->covered_ns += covered_ns;
  for (std::size_t c = 0; c < kStolenCauseCount; ++c) into->stolen[c] += stolen[c];
  spill_back(stolen);
  // What ended before the window goes; the cap holds whatever the readings' rhythm.
  while (points_.size() > 1 && points_.front().end_ns + window_ns_ < end_ns) points_.pop_front();
  while (points_.size() > kMaxStolenPoints) points_.pop_front();
}

namespace {

std::uint64_t sum_of(const StolenNs& stolen) {
  return std::accumulate(stolen.begin(), stolen.end(), std::uint64_t{0});
}

}  // namespace

void StolenSeries::spill_back(const StolenNs& added) {
  StolenPoint& last = points_.back();
  const std::uint64_t total = sum_of(last.stolen);
  if (total <= last.covered_ns) return;
  std::uint64_t overflow = std::min(total - last.covered_ns, sum_of(added));
  std::vector<std::uint64_t> weights(added.begin(), added.end());  // what may still move, by cause
  for (auto p = std::next(points_.rbegin()); p != points_.rend() && overflow > 0; ++p) {
    const std::uint64_t used = sum_of(p->stolen);
    if (used >= p->covered_ns) continue;
    const std::vector<std::uint64_t> parts =
        split_proportionally(std::min(overflow, p->covered_ns - used), weights);
    for (std::size_t c = 0; c < kStolenCauseCount; ++c) {
      const std::uint64_t part = std::min({parts[c], weights[c], last.stolen[c]});
      last.stolen[c] -= part;
      p->stolen[c] += part;
      weights[c] -= part;
      overflow -= std::min(overflow, part);
    }
  }
}

std::vector<StolenPlotPoint> stolen_plot_points(const StolenSeries& series, double unix_minus_monotonic) {
  std::vector<StolenPlotPoint> out;
  out.reserve(series.points().size());
  for (const StolenPoint& p : series.points()) {
    StolenPlotPoint q;
    q.start_unix_seconds = static_cast<double>(p.start_ns) * 1e-9 + unix_minus_monotonic;
    q.end_unix_seconds = static_cast<double>(p.end_ns) * 1e-9 + unix_minus_monotonic;
    q.covered_seconds = static_cast<double>(p.covered_ns) * 1e-9;
    for (std::size_t c = 0; c < kStolenCauseCount; ++c)
      q.stolen_seconds[c] = static_cast<double>(p.stolen[c]) * 1e-9;
    out.push_back(q);
  }
  return out;
}

}  // namespace jitterd
