// SPDX-License-Identifier: Apache-2.0
#include "probes/loops_probe.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "host/attribution.h"
#include "host/text.h"
#include "jitterd/loop_probe.h"
#include "measure/clock_ns.h"
#include "measure/tick_scale.h"
#include "probes/application_windows.h"
#include "probes/attribution_probe.h"
#include "probes/below_kernel.h"
#include "probes/gap_metrics.h"
#include "watch/application.h"

namespace jitterd {

namespace {

// The user names of `uids` (a uid the user database does not know goes by its number).
std::map<uid_t, std::string> owner_names(const std::vector<uid_t>& uids) {
  std::map<uid_t, std::string> names;
  for (uid_t uid : uids) {
    struct passwd entry {};
    struct passwd* found = nullptr;
    std::vector<char> buffer(16384);
    const bool known = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr;
    names[uid] = known ? std::string(found->pw_name) : std::to_string(uid);
  }
  return names;
}

}  // namespace

ProbeLabels loop_labels(const LoopState& state) {
  // The names are the ones a loop's own labels may not take (loops/loop_segment.h).
  ProbeLabels labels{{std::string(kLoopLabelLoop), state.reading.header.name},
                     {std::string(kLoopLabelCpu), std::to_string(state.reading.header.cpu)}};
  for (const auto& label : state.reading.header.labels) labels.push_back(label);
  return labels;
}

namespace {

void add_counts(ProbeResult& out, const LoopState& state, const CpuFigures* window) {
  const LoopSegmentReading& r = state.reading;
  GapReading reading{r.counts, TickScale(static_cast<double>(r.header.hertz)), window, std::nullopt};
  if (r.threshold_ticks != 0) reading.limits = GapReading::Limits{r.floor_ticks, r.threshold_ticks};
  for (GapMetric& g : gap_metrics(loop_gap_families(), loop_labels(state), reading))
    out.metrics.push_back(std::move(g.metric));
}

std::vector<Cell> table_row(const std::string& file, const LoopState& state) {
  if (!state.accepted)
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
          state.refused ? Cell(std::string(loop_refusal_name(state.reason))) : Cell(),
          Cell(r.counts.gaps.total()),
          Cell(r.counts.interruptions),
          Cell(scale.to_seconds(r.counts.interrupted_ticks), 6),
          Cell(printable(state.message))};
}

LoopView loop_view(const std::string& file, const LoopState& state, const LoopWindowFigures* window) {
  const LoopSegmentReading& r = state.reading;
  const TickScale scale(static_cast<double>(r.header.hertz));
  LoopView view{.file = file,
                .loop = r.header.name,
                .cpu = static_cast<int>(r.header.cpu),
                .labels = r.header.labels,
                .pid = r.header.pid,
                .up = state.up,
                .why = state.message,
                .last_seen_unix_seconds = state.last_seen_unix,
                .warmed_up = r.threshold_ticks != 0,
                .ns_per_tick = scale.to_fractional_ns(1),
                .gaps = r.counts.gaps.total(),
                .interruptions = r.counts.interruptions,
                .stolen_seconds = scale.to_seconds(r.counts.interrupted_ticks)};
  if (window != nullptr) {
    view.window = window->figures;
    view.window_gaps = window->gaps;
  } else {
    set_limits(view.window, r.floor_ticks, r.threshold_ticks, scale);
  }
  return view;
}

}  // namespace

std::vector<uid_t> loop_allowed_users(const std::vector<std::string>& users, std::vector<std::string>* unknown) {
  if (users.empty()) return {0, ::geteuid()};
  std::vector<uid_t> out;
  for (const std::string& user : users) {
    if (const auto uid = user_id_of(user))
      out.push_back(*uid);
    else if (unknown != nullptr)
      unknown->push_back(user);
  }
  return out;
}

LoopsProbe::LoopsProbe(LoopSettings settings)
    : SettingsProbe(std::move(settings)),
      tracker_({settings_.directory, loop_allowed_users(settings_.users, &unknown_users_), settings_.stale_after,
                settings_.forget_after, kMaxLoopSegments, settings_.window,
                settings_.owner_prefix ? std::optional(owner_names(loop_allowed_users(settings_.users, nullptr)))
                                       : std::nullopt}) {}

ProbeResult loop_result(const LoopTracker& tracker, const std::map<std::string, LoopWindowFigures>& windows) {
  ProbeResult out;
  LoopsReading reading{.directory = tracker.settings().directory.string()};
  ProbeTable table{
      "loop probes in " + printable(tracker.settings().directory.string()),
      {"file", "loop", "cpu", "pid", "state", "refused", "gaps", "interruptions", "stolen_seconds", "why"},
      {},
      TableShape::rows};
  for (const auto& [file, state] : tracker.loops()) {
    table.rows.push_back(table_row(file, state));
    if (state.refused)
      reading.refused.push_back({file, std::string(loop_refusal_name(state.reason)), state.message});
    if (!state.accepted) continue;
    const ProbeLabels labels = loop_labels(state);
    out.metrics.push_back(gauge(
        "jitterd_loop_up", "1 while the loop's segment is accepted, its writer lives and its heartbeat moves.",
        labels, state.up ? 1 : 0));
    out.metrics.push_back(gauge("jitterd_loop_last_seen_timestamp_seconds",
                                "When jitterd last saw the loop's heartbeat move (Unix time).", labels,
                                state.last_seen_unix));
    const auto window = windows.find(file);
    const LoopWindowFigures* figures = window == windows.end() ? nullptr : &window->second;
    add_counts(out, state, figures == nullptr ? nullptr : &figures->figures);
    reading.loops.push_back(loop_view(file, state, figures));
  }
  const auto by_reason = [&](const char* name, const char* help, const auto& counts) {
    for (LoopRefusal reason : kLoopRefusals) {
      const auto count = counts.find(reason);
      out.metrics.push_back(counter(name, help, {{"reason", std::string(loop_refusal_name(reason))}},
                                    count == counts.end() ? 0 : static_cast<double>(count->second)));
    }
  };
  by_reason("jitterd_loop_refused_total",
            "Loop segments refused, by reason: one per file and reason (docs/loops.md).", tracker.refusals());
  by_reason("jitterd_loop_log_lines_suppressed_total",
            "Refused loop files not logged, by reason: at most 10 log lines a minute per reason (docs/loops.md).",
            tracker.log_lines_suppressed());
  out.metrics.push_back(counter("jitterd_loop_forgotten_total",
                                "Loops forgotten: their writer gone for loops.forget_after (docs/loops.md).", {},
                                static_cast<double>(tracker.forgotten())));
  out.notes.push_back(std::to_string(tracker.loops().size()) + " segment(s) in " +
                      printable(tracker.settings().directory.string()));
  out.tables.push_back(std::move(table));
  out.loops = std::move(reading);
  return out;
}

bool LoopsProbe::tracks(const std::string& file, ino_t inode) const {
  const auto state = tracker_.loops().find(file);
  return state != tracker_.loops().end() && state->second.accepted && state->second.inode == inode;
}

ProbeResult LoopsProbe::run(ProbeContext& context) {
  const double now_unix = unix_seconds();
  const auto read_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));  // the BPF engine's clock
  tracker_.scan(context.host, now_unix);
  const auto now_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));
  std::map<std::string, LoopWindowFigures> figures;
  std::erase_if(windows_, [&](const auto& entry) { return !tracks(entry.first, entry.second.inode()); });
  for (const auto& [file, state] : tracker_.loops()) {
    if (state.refused) continue;
    LoopWindow& window =
        windows_.try_emplace(file, state.inode, settings_.window, settings_.interval).first->second;
    window.add(state.reading.counts, now_ns, state.reading.heartbeat_tick);
    figures[file] = window.figures(state.reading);
  }
  ProbeResult out = loop_result(tracker_, figures);
  // The engine the watch opened, for the CPUs the BPF engine does not cover, held for this run only
  // (a reopened watch closes its old engine; its perf rings stay open while anyone holds it).
  watch_engine_ = context.watch_engine ? context.watch_engine->get() : nullptr;
  struct ReleaseAtExit {
    std::shared_ptr<KernelWatch>& held;
    ~ReleaseAtExit() { held.reset(); }
  } release{watch_engine_};
  attribute(context, read_ns, out);
  record_stolen(read_ns, out);
  add_glance(figures, out);
  auto history = std::make_shared<ApplicationWindows>();
  for (const auto& [file, window] : windows_) {
    const LoopState& state = tracker_.loops().at(file);
    const LoopSegmentReading& r = state.reading;
    history->loops.push_back({r.header.name, r.header.cpu, static_cast<double>(r.header.hertz), window.steps(),
                              r.floor_ticks, r.threshold_ticks, window.steps_max_ticks(r),
                              state.up ? "" : state.message, file});
  }
  out.application_windows = std::move(history);
  for (const std::string& user : unknown_users_)
    out.warnings.push_back("loops.users: no user '" + printable(user) + "' in the user database; left out");
  unknown_users_.clear();
  for (std::string& event : tracker_.take_events()) out.warnings.push_back(std::move(event));
  return out;
}

}  // namespace jitterd
