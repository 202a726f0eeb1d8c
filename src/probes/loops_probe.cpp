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

// The tick method that reads the loop's counter where jitterd can pair it with CLOCK_MONOTONIC
// (the TSC in any of its reads, the arm64 virtual counter); nullopt for CLOCK_MONOTONIC itself
// (no pairing needed) and for the caller's own counter (no mapping possible).
std::optional<TickMethod> loop_tick_method(std::uint32_t counter) {
  switch (counter) {
    case JITTERD_LOOP_COUNTER_LFENCE_RDTSC:
      return TickMethod::lfence_rdtsc;
    case JITTERD_LOOP_COUNTER_RDTSC:
      return TickMethod::rdtsc;
    case JITTERD_LOOP_COUNTER_RDTSCP:
      return TickMethod::rdtscp;
    case JITTERD_LOOP_COUNTER_CNTVCT:
      return TickMethod::cntvct;
    default:
      return std::nullopt;
  }
}

// Every cause a loop exports, zero or not: the attribution probe's with the engine.
std::vector<std::string> loop_causes() {
  std::vector<std::string> out(cause_names.begin(), cause_names.end());
  out.insert(out.end(), {std::string(preempted_cause), "not_kept", std::string(smi_cause),
                         std::string(hypervisor_cause), "unexplained"});
  return out;
}

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

ProbeLabels loop_labels(const LoopState& state) {
  // The names are the ones a loop's own labels may not take (loops/loop_segment.h).
  ProbeLabels labels{{std::string(kLoopLabelLoop), state.reading.header.name},
                     {std::string(kLoopLabelCpu), std::to_string(state.reading.header.cpu)}};
  for (const auto& label : state.reading.header.labels) labels.push_back(label);
  return labels;
}

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

// Whether `cpu`'s value grew from `before` to `now` (false where either lacks it).
bool grew(const std::map<int, std::uint64_t>& before, const std::map<int, std::uint64_t>& now, int cpu) {
  const auto then = before.find(cpu), later = now.find(cpu);
  return then != before.end() && later != now.end() && later->second > then->second;
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
    : settings_(std::move(settings)),
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
  for (LoopRefusal reason : kLoopRefusals) {
    const auto count = tracker.refusals().find(reason);
    out.metrics.push_back(counter("jitterd_loop_refused_total",
                                  "Loop segments refused, by reason: one per file and reason (docs/loops.md).",
                                  {{"reason", std::string(loop_refusal_name(reason))}},
                                  count == tracker.refusals().end() ? 0 : static_cast<double>(count->second)));
  }
  for (LoopRefusal reason : kLoopRefusals) {
    const auto count = tracker.log_lines_suppressed().find(reason);
    out.metrics.push_back(counter(
        "jitterd_loop_log_lines_suppressed_total",
        "Refused loop files not logged, by reason: at most 10 log lines a minute per reason (docs/loops.md).",
        {{"reason", std::string(loop_refusal_name(reason))}},
        count == tracker.log_lines_suppressed().end() ? 0 : static_cast<double>(count->second)));
  }
  out.metrics.push_back(counter("jitterd_loop_forgotten_total",
                                "Loops forgotten: their writer gone for loops.forget_after (docs/loops.md).", {},
                                static_cast<double>(tracker.forgotten())));
  out.notes.push_back(std::to_string(tracker.loops().size()) + " segment(s) in " +
                      printable(tracker.settings().directory.string()));
  out.tables.push_back(std::move(table));
  out.loops = std::move(reading);
  return out;
}

KernelWatch* LoopsProbe::engine_of(int cpu) const {
  for (KernelWatch* engine : {static_cast<KernelWatch*>(bpf_), watch_engine_.get()})
    if (engine != nullptr && std::find(engine->cpus().begin(), engine->cpus().end(), cpu) != engine->cpus().end())
      return engine;
  return nullptr;
}

// Why a loop's interruptions cannot be matched with the engine's records ("" when they can).
std::string LoopsProbe::not_attributed_why(const LoopSegmentReading& r) const {
  const int cpu = r.header.cpu;
  if (!bpf_ && !watch_engine_)
    return "the watch's BPF engine is not running (" + bpf_why_ + ") and the watch has no tracepoints engine open";
  if (engine_of(cpu) == nullptr)
    return "cpu " + std::to_string(cpu) + " is not watched (watch.cpus), so the " +
           std::string(watch_engine_ ? watch_engine_->method() : "BPF") + " engine does not see it";
  if (!loop_tick_method(r.header.counter) && r.header.counter != JITTERD_LOOP_COUNTER_STEADY_NS)
    return "its counter is the application's own (" + std::string(loop_counter_name(r.header.counter)) +
           "), which jitterd cannot map to the engine's clock";
  return "";
}

// The ring's entries since `from` as CLOCK_MONOTONIC intervals: a TSC or arm64 counter through the
// pairing of its read with the clock now and at the last run (interpolated), CLOCK_MONOTONIC as it is.
std::vector<TimedInterval> LoopsProbe::monotonic_intervals(const LoopSegmentReading& r, std::uint64_t from,
                                                           std::map<TickMethod, ClockTickPair>& pairs) const {
  const std::uint64_t oldest = r.ring_pushed - std::min<std::uint64_t>(r.ring_pushed, r.ring.size());
  const std::span<const Interruption> fresh(r.ring.data() + (from - oldest), r.ring_pushed - from);
  const std::optional<TickMethod> method = loop_tick_method(r.header.counter);
  if (!method || fresh.empty()) return timed_intervals(fresh, std::nullopt);
  const ClockTickPair now =
      pairs.try_emplace(*method, pair_other_clock_with_ticks(*method, CLOCK_MONOTONIC)).first->second;
  const auto before = previous_pairs_.find(*method);
  return timed_intervals(fresh, TickToClock{before == previous_pairs_.end() ? now : before->second, now,
                                            static_cast<double>(r.header.hertz)});
}

void LoopsProbe::export_causes(ProbeResult& out) const {
  for (const auto& [file, causes] : causes_) {
    const ProbeLabels labels = loop_labels(tracker_.loops().at(file));
    for (const std::string& cause : loop_causes()) {
      ProbeLabels with_cause = labels;
      with_cause.emplace_back(std::string(kLoopLabelCause), cause);
      const auto n = causes.interruptions.find(cause);
      const auto t = causes.stolen_seconds.find(cause);
      out.metrics.push_back(
          counter("jitterd_loop_interruptions_by_cause_total",
                  "The loop's interruptions by cause, matched with the watch engine's records of its "
                  "cpu (a watched cpu; bpf or tracepoints): the attribution probe's causes.",
                  with_cause, n == causes.interruptions.end() ? 0.0 : static_cast<double>(n->second)));
      out.metrics.push_back(counter("jitterd_loop_stolen_seconds_by_cause_total",
                                    "Time the loop lost to its interruptions, by cause.", with_cause,
                                    t == causes.stolen_seconds.end() ? 0.0 : t->second));
    }
  }
}

namespace {

// The cause of each gap no record explains (no taker in `matched`), by below_kernel_causes with `cpu`'s
// SMI intervals; the matched gaps' entries are unused.
std::vector<std::string_view> settle_unmatched(const std::vector<TimedInterval>& intervals,
                                               const std::vector<std::optional<Taker>>& matched,
                                               const std::map<int, SmiReading>& smis, int cpu, bool steal) {
  std::vector<TimedInterval> unmatched;
  for (std::size_t i = 0; i < matched.size() && i < intervals.size(); ++i)
    if (!matched[i]) unmatched.push_back(intervals[i]);
  const auto smi = smis.find(cpu);
  const std::vector<std::string_view> settled = below_kernel_causes(
      unmatched, smi == smis.end() ? std::vector<SmiWindow>{} : smi->second.windows, steal, kTraceSlackNs);
  std::vector<std::string_view> out(matched.size(), "unexplained");
  for (std::size_t i = 0, u = 0; i < matched.size() && u < settled.size(); ++i)
    if (!matched[i]) out[i] = settled[u++];
  return out;
}

}  // namespace

void LoopsProbe::attribute(ProbeContext& context, std::uint64_t read_ns, ProbeResult& out) {
  if (!tried_bpf_) {
    tried_bpf_ = true;
    bpf_owner_ = context.bpf;
    bpf_ = bpf_owner_ ? bpf_owner_->get(context.sampler_thread_of) : nullptr;
    bpf_why_ = bpf_ ? "" : bpf_owner_ ? bpf_owner_->why_not() : "no BPF engine in this context";
  }
  std::set<std::string_view> methods;  // of the engines that matched a loop this run
  ProbeTable who{"", {"loop", "cpu", "cause", "source", "name", "count"}, {}};
  std::map<int, std::vector<PairedOutlier>*> records_of;  // taken once per CPU this run
  std::map<TickMethod, ClockTickPair> pairs;
  // Below the kernel: the watched CPUs' SMI intervals and every CPU's steal since the last run.
  const std::map<int, SmiReading> smis = bpf_ ? bpf_->read_smis() : std::map<int, SmiReading>{};
  const std::map<int, std::uint64_t> steal_now = read_steal_ticks(context.host);
  std::erase_if(causes_, [&](const auto& entry) {
    const auto state = tracker_.loops().find(entry.first);
    return state == tracker_.loops().end() || !state->second.accepted || state->second.inode != entry.second.inode;
  });
  for (const auto& [file, state] : tracker_.loops()) {
    if (state.refused) continue;
    const LoopSegmentReading& r = state.reading;
    const int cpu = r.header.cpu;
    if (const std::string why = not_attributed_why(r); !why.empty()) {
      out.notes.push_back("loop " + printable(r.header.name) + ": interruptions not attributed: " + why);
      causes_.erase(file);
      continue;
    }
    const double hertz = static_cast<double>(r.header.hertz);
    const auto threshold_ns = static_cast<std::uint64_t>(static_cast<double>(r.threshold_ticks) * 1e9 / hertz);
    KernelWatch& engine = *engine_of(cpu);
    methods.insert(engine.method());
    engine.want_records(
        cpu, sampled_outlier_threshold_ns(r.threshold_ticks ? std::optional(threshold_ns) : std::nullopt));
    const auto [found, first] = causes_.try_emplace(file, Causes{state.inode, r.ring_pushed, {}, {}, {}});
    Causes& causes = found->second;
    if (first) causes.top.emplace(static_cast<std::uint64_t>(settings_.window.count()));
    if (!records_of.count(cpu)) records_of[cpu] = &carried_.add(cpu, engine.take_records(cpu).events);
    if (first) continue;  // from here on, the ring's entries are matched
    const std::uint64_t oldest = r.ring_pushed - std::min<std::uint64_t>(r.ring_pushed, r.ring.size());
    const std::uint64_t from = std::max(causes.next_sequence, oldest);
    const std::uint64_t not_kept = from - std::min(from, causes.next_sequence);  // overwritten meanwhile
    causes.interruptions["not_kept"] += not_kept;
    NameTally preempters(kPartNames), sources(kPartNames);
    if (not_kept > 0) sources.add("not_kept", {not_kept, 0});
    causes.next_sequence = r.ring_pushed;
    const std::vector<TimedInterval> intervals = monotonic_intervals(r, from, pairs);
    const std::vector<std::optional<Taker>> takers =
        takers_from_records(intervals, *records_of[cpu], kTraceSlackNs);
    const std::vector<std::string_view> unmatched_causes =
        settle_unmatched(intervals, takers, smis, cpu, grew(steal_before_, steal_now, cpu));
    TakerTally named;
    for (std::size_t i = 0; i < takers.size(); ++i) {
      const std::string cause(takers[i] ? takers[i]->cause : unmatched_causes[i]);
      const double seconds =
          static_cast<double>(r.ring[static_cast<std::size_t>(from + i - oldest)].duration_ticks) / hertz;
      const auto ns = static_cast<std::uint64_t>(seconds * 1e9);
      causes.interruptions[cause] += 1;
      causes.stolen_seconds[cause] += seconds;
      tally_matched(takers[i] ? takers[i]->record : nullptr, ns, preempters, sources, cause);
      if (takers[i]) named.add(*takers[i], ns);
    }
    causes.top->push(read_ns, std::move(preempters), std::move(sources));
    for (const TakerTally::Row& row : named.top(takers.size()))
      who.rows.push_back({r.header.name, cpu, row.cause, row.source, row.name, row.count});
  }
  carried_.carry(read_ns, kTraceSlackNs);
  steal_before_ = steal_now;
  for (const auto& [method, pair] : pairs) previous_pairs_[method] = pair;
  if (!methods.empty()) {
    methods_.clear();
    for (std::string_view m : methods) methods_ += (methods_.empty() ? "" : ", ") + std::string(m);
  }
  export_causes(out);
  export_top(context.host, out);
  who.title = "what took the loops' interruptions (" + methods_ + "), since the last run";
  if (!who.rows.empty()) out.tables.push_back(std::move(who));
}

ProbeResult LoopsProbe::run(ProbeContext& context) {
  const double now_unix = unix_seconds();
  const auto read_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));  // the BPF engine's clock
  tracker_.scan(context.host, now_unix);
  const auto now_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));
  std::map<std::string, LoopWindowFigures> figures;
  for (auto it = windows_.begin(); it != windows_.end();) {
    const auto state = tracker_.loops().find(it->first);
    const bool keep =
        state != tracker_.loops().end() && state->second.accepted && state->second.inode == it->second.inode();
    it = keep ? std::next(it) : windows_.erase(it);
  }
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
