// SPDX-License-Identifier: Apache-2.0
#include "probes/loop_probe.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "host/text.h"
#include "measure/clock_ns.h"
#include "measure/gap_bounds.h"
#include "measure/tick_scale.h"
#include "probes/application_windows.h"

namespace jitterd {

namespace {

std::optional<uid_t> user_id(const std::string& user) {
  unsigned long number = 0;
  const auto [end, error] = std::from_chars(user.data(), user.data() + user.size(), number);
  if (error == std::errc() && end == user.data() + user.size()) return static_cast<uid_t>(number);
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    return std::nullopt;
  return found->pw_uid;
}

ProbeLabels loop_labels(const LoopState& state) {
  ProbeLabels labels{{"loop", state.reading.header.name}, {"cpu", std::to_string(state.reading.header.cpu)}};
  for (const auto& label : state.reading.header.labels) labels.push_back(label);
  return labels;
}

void add_counts(ProbeResult& out, const LoopState& state, const CpuFigures* summary) {
  const LoopSegmentReading& r = state.reading;
  const TickScale scale(static_cast<double>(r.header.hertz));
  const ProbeLabels labels = loop_labels(state);
  out.metrics.push_back(histogram_seconds(
      "jitterd_loop_gap_seconds", "Gaps between consecutive iterations of the application's loop.", labels,
      r.counts.gaps, scale, gap_bounds_seconds(), scale.to_seconds(r.counts.sampled_ticks)));
  out.metrics.push_back(counter("jitterd_loop_interruptions_total",
                                "Loop gaps at or above the interruption threshold.", labels,
                                static_cast<double>(r.counts.interruptions)));
  out.metrics.push_back(counter("jitterd_loop_stolen_seconds_total",
                                "Total duration of the loop's gaps at or above the interruption threshold.",
                                labels, scale.to_seconds(r.counts.interrupted_ticks)));
  out.metrics.push_back(counter("jitterd_loop_sampled_seconds_total",
                                "Time the loop recorded (sum of its gaps, as published).", labels,
                                scale.to_seconds(r.counts.sampled_ticks)));
  std::vector<std::pair<double, double>> quantiles;
  if (summary != nullptr && summary->valid) {
    quantiles = {{0.5, ns_to_seconds(summary->p50_ns)},
                 {0.99, ns_to_seconds(summary->p99_ns)},
                 {0.999, ns_to_seconds(summary->p999_ns)},
                 {0.9999, ns_to_seconds(summary->p9999_ns)}};
    out.metrics.push_back(gauge("jitterd_loop_window_max_gap_seconds",
                                "Exact largest loop gap over the rolling window.", labels,
                                ns_to_seconds(summary->max_ns)));
  }
  out.metrics.push_back(summary_metric("jitterd_loop_window_gap_seconds",
                                       "Loop gap quantiles over the rolling window (upper edge of the histogram "
                                       "bucket, at most the window max); sum and count are cumulative.",
                                       labels, std::move(quantiles), r.counts.gaps.total(),
                                       scale.to_seconds(r.counts.sampled_ticks)));
  if (r.threshold_ticks != 0) {
    out.metrics.push_back(gauge("jitterd_loop_floor_seconds",
                                "Smallest gap of the loop's warm-up (its first 4096 gaps): its resolution floor.",
                                labels, scale.to_seconds(r.floor_ticks)));
    out.metrics.push_back(gauge("jitterd_loop_interruption_threshold_seconds",
                                "Loop gap at or above which a gap counts as an interruption.", labels,
                                scale.to_seconds(r.threshold_ticks)));
  }
}

std::vector<Cell> table_row(const std::string& file, const LoopState& state) {
  if (state.refused)
    return {Cell(file),      Cell(),
            Cell(),          Cell(),
            Cell("refused"), Cell(std::string(loop_refusal_name(state.reason))),
            Cell(),          Cell(),
            Cell(),          Cell(printable(state.message))};
  const LoopSegmentReading& r = state.reading;
  const TickScale scale(static_cast<double>(r.header.hertz));
  return {Cell(file),
          Cell(r.header.name),
          Cell(r.header.cpu),
          Cell(r.header.pid),
          Cell(state.up ? "up" : "down"),
          Cell(),
          Cell(r.counts.gaps.total()),
          Cell(r.counts.interruptions),
          Cell(scale.to_seconds(r.counts.interrupted_ticks), 6),
          Cell(printable(state.message))};
}

}  // namespace

std::vector<uid_t> loop_allowed_users(const std::vector<std::string>& users, std::vector<std::string>* unknown) {
  if (users.empty()) return {0, ::geteuid()};
  std::vector<uid_t> out;
  for (const std::string& user : users) {
    if (const auto uid = user_id(user))
      out.push_back(*uid);
    else if (unknown != nullptr)
      unknown->push_back(user);
  }
  return out;
}

LoopProbe::LoopProbe(LoopSettings settings)
    : settings_(std::move(settings)),
      tracker_(
          {settings_.directory, loop_allowed_users(settings_.users, &unknown_users_), settings_.stale_after}) {}

ProbeResult loop_result(const LoopTracker& tracker, const std::map<std::string, CpuFigures>& summaries) {
  ProbeResult out;
  ProbeTable table{
      "loop probes in " + printable(tracker.settings().directory.string()),
      {"file", "loop", "cpu", "pid", "state", "refused", "gaps", "interruptions", "stolen_seconds", "why"},
      {},
      TableShape::rows};
  for (const auto& [file, state] : tracker.loops()) {
    table.rows.push_back(table_row(file, state));
    if (state.refused) continue;
    const ProbeLabels labels = loop_labels(state);
    out.metrics.push_back(gauge(
        "jitterd_loop_up", "1 while the loop's segment is accepted, its writer lives and its heartbeat moves.",
        labels, state.up ? 1 : 0));
    out.metrics.push_back(gauge("jitterd_loop_last_seen_timestamp_seconds",
                                "When jitterd last saw the loop's heartbeat move (Unix time).", labels,
                                state.last_seen_unix));
    const auto summary = summaries.find(file);
    add_counts(out, state, summary == summaries.end() ? nullptr : &summary->second);
  }
  for (LoopRefusal reason : kLoopRefusals) {
    const auto count = tracker.refusals().find(reason);
    out.metrics.push_back(counter("jitterd_loop_refused_total",
                                  "Loop segments refused, by reason: one per file and reason (docs/loops.md).",
                                  {{"reason", std::string(loop_refusal_name(reason))}},
                                  count == tracker.refusals().end() ? 0 : static_cast<double>(count->second)));
  }
  out.notes.push_back(std::to_string(tracker.loops().size()) + " segment(s) in " +
                      printable(tracker.settings().directory.string()));
  out.tables.push_back(std::move(table));
  return out;
}

ProbeResult LoopProbe::run(ProbeContext& context) {
  const double now_unix = unix_seconds();
  tracker_.scan(context.host, now_unix);
  const auto now_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));
  std::map<std::string, CpuFigures> summaries;
  for (auto it = windows_.begin(); it != windows_.end();) {
    const auto state = tracker_.loops().find(it->first);
    const bool keep =
        state != tracker_.loops().end() && !state->second.refused && state->second.inode == it->second.inode;
    it = keep ? std::next(it) : windows_.erase(it);
  }
  for (const auto& [file, state] : tracker_.loops()) {
    if (state.refused) continue;
    const LoopSegmentReading& r = state.reading;
    Window& window =
        windows_.try_emplace(file, Window{state.inode, RollingWindow(settings_.window.count()), {}, {}})
            .first->second;
    window.gaps.push(r.counts.gaps, now_ns);
    const TickScale scale(static_cast<double>(r.header.hertz));
    const std::uint64_t span = scale.from_ns(static_cast<std::uint64_t>(settings_.window.count()));
    const std::uint64_t from = r.heartbeat_tick > span ? r.heartbeat_tick - span : 0;
    summaries[file] = summarize(window.gaps.window(), r.max_between(from, r.heartbeat_tick), scale);
    if (window.previous && r.counts.sampled_ticks >= window.previous->sampled_ticks)
      window.added.push_back(r.counts.minus(*window.previous));
    window.previous = r.counts;
    const auto readings =
        static_cast<std::size_t>(std::max<std::int64_t>(1, settings_.window / settings_.interval));
    while (window.added.size() > readings) window.added.pop_front();
  }
  ProbeResult out = loop_result(tracker_, summaries);
  auto history = std::make_shared<ApplicationWindows>();
  for (const auto& [file, window] : windows_) {
    const LoopState& state = tracker_.loops().at(file);
    const LoopSegmentReading& r = state.reading;
    const auto summary = summaries.find(file);
    history->loops.push_back({r.header.name, r.header.cpu, static_cast<double>(r.header.hertz),
                              std::vector<GapCountsTicks>(window.added.begin(), window.added.end()), r.floor_ticks,
                              r.threshold_ticks, summary == summaries.end() ? 0 : summary->second.max_ns,
                              state.up ? "" : state.message});
  }
  out.application_windows = std::move(history);
  for (const std::string& user : unknown_users_)
    out.warnings.push_back("loops.users: no user '" + printable(user) + "' in the user database; left out");
  unknown_users_.clear();
  for (std::string& event : tracker_.take_events()) out.warnings.push_back(std::move(event));
  return out;
}

}  // namespace jitterd
