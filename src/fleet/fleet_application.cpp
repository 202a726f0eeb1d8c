// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_application.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "report/baseline_file.h"

namespace jitterd {

int LoopNames::index_of(const PromSample& s) {
  const std::string name = label_of(s.labels, "loop");
  if (const auto it = index_.find(name); it != index_.end()) return it->second;
  const auto pass_over = [&name](std::set<std::size_t>& names) {
    if (names.size() < kMostPassedOver) names.insert(std::hash<std::string>{}(name));
    return -1;
  };
  if (name.empty()) return unnamed_ = true, -1;
  if (name.size() > kMostLoopNameBytes) return pass_over(too_long_);
  if (names_.size() >= kMostLoopNames) return pass_over(beyond_);
  names_.push_back(name);
  return index_[name] = static_cast<int>(names_.size() - 1);
}

std::string LoopNames::passed_over() const {
  const auto count = [](const std::set<std::size_t>& names) {
    return names.size() < kMostPassedOver ? fmt::format("{}", names.size()) : fmt::format("{}+", kMostPassedOver);
  };
  std::vector<std::string> parts;
  if (!too_long_.empty())
    parts.push_back(fmt::format("{} loop name{} over {} bytes", count(too_long_), too_long_.size() == 1 ? "" : "s",
                                kMostLoopNameBytes));
  if (!beyond_.empty())
    parts.push_back(fmt::format("{} loop name{} beyond the first {}", count(beyond_),
                                beyond_.size() == 1 ? "" : "s", kMostLoopNames));
  if (unnamed_) parts.push_back("series without a loop label");
  if (parts.empty()) return "";
  return fmt::format("loops passed over: {} (in no row)", fmt::join(parts, ", "));
}

namespace {

WatchValues watch_values(const WatchAnswers& answers, const std::string& source) {
  WatchValues out;
  for (std::size_t f = 0; f < kWatchFamilyCount; ++f) {
    if (answers[f].is_null()) continue;
    const WatchFamilySpec& spec = kWatchFamilies[f];
    for (const PromSample& s : vector_samples(answers[f], source)) {
      std::string part = *spec.part == '\0' ? "" : label_of(s.labels, spec.part);
      if (f == kDurations && std::isnan(le_bound_ns(part)))
        wrong_vector_shape(source, fmt::format("a {} bucket with le=\"{}\"", spec.metric, part.substr(0, 60)));
      if (part.size() > kMostLoopNameBytes) part = part.substr(0, kMostLoopNameBytes);  // a cause: a short word
      out[f][{label_of(s.labels, "instance"), cpu_label_of(s, source, spec.metric), std::move(part)}] += s.value;
    }
  }
  return out;
}

std::string tail_name(double ns) { return "interruptions_over_" + threshold_name(ns).substr(10); }

std::set<double> duration_bounds(const WatchValues& values) {
  std::set<double> bounds;
  for (const auto& [key, count] : values[kDurations])
    if (const double le = le_bound_ns(std::get<2>(key)); std::isfinite(le)) bounds.insert(le);
  return bounds;
}

// One watched CPU's counters: each family's parts by name.
using CpuParts = std::array<std::map<std::string, double>, kWatchFamilyCount>;

double sum_of(const std::map<std::string, double>& parts, const char* skip = nullptr) {
  double total = 0;
  for (const auto& [part, value] : parts)
    if (skip == nullptr || part != skip) total += value;
  return total;
}

// The watched figures of one CPU over `seconds`, in watched_figure_names order.
std::vector<double> watched_figures(const CpuParts& c, double seconds, const std::vector<std::string>& names) {
  const auto rate = [&](std::size_t f, const char* skip = nullptr) {
    return c[f].empty() ? NAN : sum_of(c[f], skip) / seconds;
  };
  const auto part = [&](std::size_t f, const char* name) {
    const auto it = c[f].find(name);
    return it == c[f].end() ? NAN : it->second / seconds;
  };
  // Every cause, where the method times more than preemptions (bpf, tracepoints).
  const bool every_cause =
      std::any_of(c[kStolen].begin(), c[kStolen].end(), [](const auto& p) { return p.first != "preempted"; });
  std::vector<double> out{rate(kIrqs),
                          part(kIrqs, "timer"),
                          rate(kSoftirqs),
                          rate(kPreemptions),
                          part(kStolen, "preempted"),
                          every_cause ? rate(kStolen) : NAN,
                          rate(kInterruptions, "preempted"),
                          rate(kTickStops)};
  double total = NAN;
  std::map<double, double> by_bound;
  for (const auto& [le, count] : c[kDurations]) {
    const double bound = le_bound_ns(le);
    if (std::isinf(bound))
      total = count;
    else
      by_bound[bound] += count;
  }
  for (std::size_t i = out.size(); i < names.size(); ++i) {
    double over = NAN;
    for (const auto& [bound, count] : by_bound)
      if (tail_name(bound) == names[i] && !std::isnan(total)) over = std::max(0.0, total - count) / seconds;
    out.push_back(over);
  }
  return out;
}

void add_watched_figures(FleetHistory& history, const WatchValues& increases) {
  std::map<std::pair<std::string, int>, CpuParts> cpus;
  for (std::size_t f = 0; f < kWatchFamilyCount; ++f)
    for (const auto& [key, value] : increases[f])
      cpus[{std::get<0>(key), std::get<1>(key)}][f][std::get<2>(key)] += value;
  if (cpus.empty()) return;
  std::vector<std::string>& names = history.watched_figure_names;
  const std::vector<std::string> named = watched_figure_names(increases);
  if (names.size() < named.size()) names = named;  // the tails appended once a batch shows them
  for (const auto& [key, parts] : cpus) {
    FleetHost* const host = host_named(history, key.first);
    if (host == nullptr || !(host->counted_seconds > 0)) continue;
    host->watched[key.second] = watched_figures(parts, host->counted_seconds, names);
  }
}

}  // namespace

ApplicationValues application_values(const ApplicationAnswers& answers, const std::string& source,
                                     LoopNames& loops) {
  return {watch_values(answers.watch, source),
          counter_values(answers.loops, source, [&loops](const PromSample& s) { return loops.index_of(s); })};
}

std::vector<std::string> watched_figure_names(const WatchValues& values) {
  std::vector<std::string> names{"irqs_per_s",          "timer_irqs_per_s",        "softirqs_per_s",
                                 "preemptions_per_s",   "preempted_share",         "stolen_share",
                                 "interruptions_per_s", "tick_stop_failures_per_s"};
  for (double bound : tail_bounds(duration_bounds(values))) names.push_back(tail_name(bound));
  return names;
}

void add_application_figures(FleetHistory& history, const ApplicationValues& increases) {
  add_watched_figures(history, increases.watch);
  add_loop_figures(history, increases.loops);
}

}  // namespace jitterd
