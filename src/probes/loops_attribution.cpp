// SPDX-License-Identifier: Apache-2.0
// The loops probe's attribution (probes/loops_probe.h): each loop's interruptions matched one by
// one with the engine's records of its CPU (bpf, tracepoints), or estimated from its CPU's
// interrupt counts (window_deltas), and their series.
#include <algorithm>
#include <set>

#include "host/attribution.h"
#include "host/text.h"
#include "jitterd/loop_probe.h"
#include "measure/tick_scale.h"
#include "probes/attribution_probe.h"
#include "probes/below_kernel.h"
#include "probes/loops_probe.h"
#include "watch/application.h"

namespace jitterd {

namespace {

// The tick method that reads the loop's counter where jitterd can pair it with CLOCK_MONOTONIC
// (the TSC in any of its reads, the arm64 virtual counter); nullopt for CLOCK_MONOTONIC itself
// (no pairing needed) and for the caller's own counter (no mapping possible).
std::optional<TickMethod> loop_tick_method(std::uint32_t counter) {
  const std::optional<TickMethod> method = loop_counter_method(counter);
  return method == TickMethod::steady_clock ? std::nullopt : method;
}

// Whether `cpu`'s value grew from `before` to `now` (false where either lacks it).
bool grew(const std::map<int, std::uint64_t>& before, const std::map<int, std::uint64_t>& now, int cpu) {
  const auto then = before.find(cpu), later = now.find(cpu);
  return then != before.end() && later != now.end() && later->second > then->second;
}

}  // namespace

KernelWatch* LoopsProbe::engine_of(int cpu) const {
  for (KernelWatch* engine : {static_cast<KernelWatch*>(bpf_), watch_engine_.get()})
    if (engine != nullptr && std::find(engine->cpus().begin(), engine->cpus().end(), cpu) != engine->cpus().end())
      return engine;
  return nullptr;
}

std::string LoopsProbe::not_matched_why(const LoopSegmentReading& r) const {
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
    // The loop and its cpu name it (a loop's own labels may be called "method").
    const ProbeLabels with_method{labels[0], labels[1], {"method", causes.method}};
    out.metrics.push_back(
        gauge("jitterd_loop_attribution_method_info",
              "1, labelled with how the loop's interruptions are attributed: bpf or tracepoints "
              "(matched one by one with the watch engine's records of its cpu), or window_deltas "
              "(shared out among its cpu's interrupt counts, an estimate).",
              with_method, 1));
    for (const std::string& cause : exported_causes(true)) {  // a loop's method may change
      ProbeLabels with_cause = labels;
      with_cause.emplace_back(std::string(kLoopLabelCause), cause);
      const auto n = causes.interruptions.find(cause);
      const auto t = causes.stolen_seconds.find(cause);
      out.metrics.push_back(
          counter("jitterd_loop_interruptions_by_cause_total",
                  "The loop's interruptions by cause (jitterd_loop_attribution_method_info says how): "
                  "the attribution probe's causes.",
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
  std::vector<std::string_view> out(matched.size(), unexplained_cause);
  for (std::size_t i = 0, u = 0; i < matched.size() && u < settled.size(); ++i)
    if (!matched[i]) out[i] = settled[u++];
  return out;
}

}  // namespace

struct LoopsProbe::AttributionRun {
  std::uint64_t read_ns = 0;           // CLOCK_MONOTONIC, before the segments were read
  std::set<std::string_view> methods;  // of the engines that matched a loop this run
  ProbeTable who{"", {"loop", "cpu", "cause", "source", "name", "count"}, {}};
  std::map<int, std::vector<PairedOutlier>*> records_of;  // taken once per CPU this run
  std::map<TickMethod, ClockTickPair> pairs;
  // Below the kernel: the watched CPUs' SMI intervals and every CPU's steal since the last run.
  std::map<int, SmiReading> smis;
  std::map<int, std::uint64_t> steal_now;
  std::map<int, std::uint64_t> smi_counts;         // each watched CPU's SMI count now, where read
  std::optional<InterruptSnapshot> interrupts;     // read once, where a loop is estimated
  std::map<int, std::vector<SourceDelta>> deltas;  // each estimated CPU's since the last run
};

LoopsProbe::Causes* LoopsProbe::causes_for(const std::string& file, const LoopState& state,
                                           std::string_view method, bool restart) {
  Causes fresh;
  fresh.inode = state.inode;
  const auto [found, first] = causes_.try_emplace(file, std::move(fresh));
  Causes& causes = found->second;
  const bool matched = method != window_deltas_method;
  if (matched && !causes.top) causes.top.emplace(static_cast<std::uint64_t>(settings_.window.count()));
  if (!matched) causes.top.reset();  // no interruption is named: the tables of who took them go
  causes.restarted = first || restart || causes.method != method;
  if (!causes.restarted) return &causes;
  causes.method = std::string(method);
  causes.next_sequence = state.reading.ring_pushed;
  causes.seen_interruptions = state.reading.counts.interruptions;
  causes.seen_ticks = state.reading.counts.interrupted_ticks;
  return nullptr;
}

void LoopsProbe::match_loop(const std::string& file, const LoopState& state, KernelWatch& engine,
                            AttributionRun& run) {
  const LoopSegmentReading& r = state.reading;
  const int cpu = r.header.cpu;
  const double hertz = static_cast<double>(r.header.hertz);
  const auto threshold_ns = static_cast<std::uint64_t>(static_cast<double>(r.threshold_ticks) * 1e9 / hertz);
  run.methods.insert(engine.method());
  engine.want_records(
      cpu, sampled_outlier_threshold_ns(r.threshold_ticks ? std::optional(threshold_ns) : std::nullopt));
  if (!run.records_of.count(cpu)) run.records_of[cpu] = &carried_.add(cpu, engine.take_records(cpu).events);
  Causes* found = causes_for(file, state, engine.method(), false);
  if (found == nullptr) return;  // from the next run on, the ring's entries are matched
  Causes& causes = *found;
  const std::uint64_t oldest = r.ring_pushed - std::min<std::uint64_t>(r.ring_pushed, r.ring.size());
  const std::uint64_t from = std::max(causes.next_sequence, oldest);
  const std::uint64_t not_kept = counter_rise(from, causes.next_sequence);  // overwritten meanwhile
  causes.interruptions[std::string(not_kept_cause)] += not_kept;
  NameTally preempters(kPartNames), sources(kPartNames);
  if (not_kept > 0) sources.add(std::string(not_kept_cause), {not_kept, 0});
  causes.next_sequence = r.ring_pushed;
  const std::vector<TimedInterval> intervals = monotonic_intervals(r, from, run.pairs);
  const std::vector<std::optional<Taker>> takers =
      takers_from_records(intervals, *run.records_of[cpu], kTraceSlackNs);
  const std::vector<std::string_view> unmatched_causes =
      settle_unmatched(intervals, takers, run.smis, cpu, grew(steal_before_, run.steal_now, cpu));
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
  causes.top->push(run.read_ns, std::move(preempters), std::move(sources));
  for (const TakerTally::Row& row : named.top(takers.size()))
    run.who.rows.push_back({r.header.name, cpu, row.cause, row.source, row.name, row.count});
}

// The interruptions and stolen time the loop's counters added since the last run, shared out among
// its CPU's interrupt counts of the same run as a sampled CPU's are (host/attribution.h); what no
// count explains below the kernel as the matched loops' is (an SMI, steal). A loop not estimated
// at the last run (or the counts not read then) starts again: its counters and the counts would
// cover different spans.
void LoopsProbe::estimate_loop(const std::string& file, const LoopState& state, AttributionRun& run) {
  const LoopSegmentReading& r = state.reading;
  const int cpu = r.header.cpu;
  const auto known = causes_.find(file);
  const bool continuous = interrupts_before_ && known != causes_.end() && known->second.estimated_run + 1 == runs_;
  Causes* found = causes_for(file, state, window_deltas_method, !continuous);
  causes_.at(file).estimated_run = runs_;
  if (found == nullptr || r.header.hertz == 0) return;
  Causes& causes = *found;
  const std::uint64_t interruptions = counter_rise(r.counts.interruptions, causes.seen_interruptions);
  const std::uint64_t ticks = counter_rise(r.counts.interrupted_ticks, causes.seen_ticks);
  causes.seen_interruptions = r.counts.interruptions;
  causes.seen_ticks = r.counts.interrupted_ticks;
  const std::uint64_t stolen_ns = TickScale(static_cast<double>(r.header.hertz)).to_ns(ticks);
  // The SMIs the CPU's counter added since the last run (the BPF engine's, on a watched CPU).
  const auto smi_now = run.smi_counts.find(cpu), smi_then = smi_before_.find(cpu);
  const std::uint64_t smis = smi_now != run.smi_counts.end() && smi_then != smi_before_.end()
                                 ? counter_rise(smi_now->second, smi_then->second)
                                 : 0;
  for (const EstimatedShare& share :
       estimate_window(interruptions, stolen_ns, run.deltas[cpu], smis, grew(steal_before_, run.steal_now, cpu))) {
    causes.interruptions[std::string(share.cause)] += share.interruptions;
    causes.stolen_seconds[std::string(share.cause)] += static_cast<double>(share.stolen_ns) * 1e-9;
  }
}

// Why each loop's interruptions are not matched one by one ("" where they are), and, where any is
// estimated, the interrupt counts now and every estimated CPU's deltas since the last run.
std::map<std::string, std::string> LoopsProbe::plan_estimates(const HostReader& host, AttributionRun& run) const {
  std::map<std::string, std::string> why;
  std::vector<int> cpus;
  for (const auto& [file, state] : tracker_.loops()) {
    if (state.refused) continue;
    why[file] = not_matched_why(state.reading);
    if (!why[file].empty()) cpus.push_back(static_cast<int>(state.reading.header.cpu));
  }
  if (cpus.empty()) return why;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  run.interrupts = read_interrupt_counts(host, nullptr);
  if (interrupts_before_) run.deltas = per_cpu_deltas(*interrupts_before_, *run.interrupts, cpus);
  return why;
}

void LoopsProbe::attribute(ProbeContext& context, std::uint64_t read_ns, ProbeResult& out) {
  if (!tried_bpf_) {
    tried_bpf_ = true;
    bpf_owner_ = context.bpf;
    bpf_ = bpf_owner_ ? bpf_owner_->get(context.sampler_thread_of) : nullptr;
    bpf_why_ = bpf_ ? "" : bpf_owner_ ? bpf_owner_->why_not() : "no BPF engine in this context";
  }
  ++runs_;
  AttributionRun run;
  run.read_ns = read_ns;
  run.smis = bpf_ ? bpf_->read_smis() : std::map<int, SmiReading>{};
  for (const auto& [cpu, smi] : run.smis)
    if (smi.reads > 0) run.smi_counts[cpu] = smi.count;
  run.steal_now = read_steal_ticks(context.host);
  std::erase_if(causes_, [&](const auto& entry) { return !tracks(entry.first, entry.second.inode); });
  not_attributed_.clear();
  for (const auto& [file, why] : plan_estimates(context.host, run)) {
    const LoopState& state = tracker_.loops().at(file);
    const int cpu = static_cast<int>(state.reading.header.cpu);
    if (why.empty()) {
      match_loop(file, state, *engine_of(cpu), run);
      continue;
    }
    const std::string counts = "cpu " + std::to_string(cpu) + "'s interrupt counts";
    const std::string name = printable(state.reading.header.name);
    if (!cpu_column(run.interrupts->interrupts, cpu)) {
      // Its series stay as they are; the next run it can be estimated starts it again.
      not_attributed_[file] =
          why + "; and " + counts + " cannot be read (" + context.host.proc_path("interrupts").string() + ")";
      out.notes.push_back("loop " + name + ": interruptions not attributed: " + not_attributed_[file]);
      continue;
    }
    out.notes.push_back("loop " + name + ": interruptions estimated from " + counts + " (" +
                        std::string(window_deltas_method) + "): " + why);
    estimate_loop(file, state, run);
  }
  finish_attribution(context.host, run, out);
}

void LoopsProbe::finish_attribution(const HostReader& host, AttributionRun& run, ProbeResult& out) {
  carried_.carry(run.read_ns, kCarryHorizonNs);
  steal_before_ = run.steal_now;
  smi_before_ = run.smi_counts;
  interrupts_before_ = std::move(run.interrupts);
  for (const auto& [method, pair] : run.pairs) previous_pairs_[method] = pair;
  if (!run.methods.empty()) methods_ = joined(run.methods);
  export_causes(out);
  export_top(host, out);
  run.who.title = "what took the loops' interruptions (" + methods_ + "), since the last run";
  if (!run.who.rows.empty()) out.tables.push_back(std::move(run.who));
}

}  // namespace jitterd
