// SPDX-License-Identifier: Apache-2.0
#include "probes/attribution_probe.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "host/attribution.h"
#include "host/posture_parse.h"
#include "host/task_classes.h"
#include "measure/clock_ns.h"
#include "measure/tick_scale.h"
#include "probes/below_kernel.h"

namespace jitterd {
namespace {

// What fired on a CPU, by category: every (kind, cause) cause_of gives but not_an_interrupt, all
// exported, zero or not, so the series set is stable.
constexpr std::pair<std::string_view, std::string_view> event_categories[] = {
    {"irq", "timer"},           {"irq", "ipi_resched"},      {"irq", "ipi_call"},  {"irq", "tlb"},
    {"irq", "device_irq"},      {"irq", "other_irq"},        {"softirq", "timer"}, {"softirq", "softirq_net"},
    {"softirq", "softirq_rcu"}, {"softirq", "softirq_other"}};

// The `limit` sources with the most events (ties: kind, then source), in (kind, source) order.
template <typename Events>
std::vector<typename Events::const_iterator> top_sources(const Events& events, std::size_t limit) {
  std::vector<typename Events::const_iterator> top;
  for (auto it = events.begin(); it != events.end(); ++it) top.push_back(it);
  std::stable_sort(top.begin(), top.end(), [](auto l, auto r) { return l->second.second > r->second.second; });
  if (top.size() > limit) top.resize(limit);
  std::sort(top.begin(), top.end(), [](auto l, auto r) { return l->first < r->first; });
  return top;
}

// Whether an interruption of this cause coincided with an interrupt, softirq or switch.
bool coincident(std::string_view cause) {
  return cause != unexplained_cause && cause != not_kept_cause && cause != smi_cause && cause != hypervisor_cause;
}

// The causes named per CPU in the last window's table (bpf, tracepoints), most interruptions first.
constexpr std::size_t kNamedRowsPerCpu = 8;

// The eight sources that fired most on `cpu` over the window, most first, as rows of `table`.
void add_top_sources(ProbeTable& table, int cpu, std::vector<SourceDelta> top) {
  std::sort(top.begin(), top.end(), [](const SourceDelta& l, const SourceDelta& r) { return l.delta > r.delta; });
  if (top.size() > 8) top.resize(8);
  for (const SourceDelta& d : top) table.rows.push_back({cpu, d.kind, d.source, d.name, d.delta});
}

}  // namespace

void AttributionProbe::open_methods(const ProbeContext& context) {
  tried_methods_ = true;
  std::string bpf_why;
  if (!settings_.bpf) {
    open_tracepoints(context);
    return;
  }
  if (context.bpf) {
    bpf_owner_ = context.bpf;
    bpf_ = bpf_owner_->get(context.sampler_thread_of);
    if (bpf_ && bpf_->options().sampled.empty()) bpf_ = nullptr;  // a context that asked for the watched CPUs only
    if (bpf_) {
      engine_ = bpf_;
      method_ = "bpf";
      method_reason_ = "the BPF engine covers the sampled cpus";
      return;
    }
    bpf_why =
        bpf_owner_->why_not().empty() ? "the BPF engine does not cover the sampled cpus" : bpf_owner_->why_not();
  } else {
    bpf_why = "no BPF engine in this context";
  }
  open_tracepoints(context);
  // The BPF engine is used where it loads: its absence is said, not warned about (tracepoints
  // asked for and not given still warn, as open_tracepoints decides).
  method_reason_ += "; " + bpf_why;
}

void AttributionProbe::open_tracepoints(const ProbeContext& context) {
  if (!settings_.tracepoints) {
    method_reason_ = "tracepoints: false in the configuration";
    return;
  }
  // Asked for and not given: the method line (ProbeResult::states) is then a warning.
  fell_back_ = true;
  // Records only (no outliers), down to the share of each sampler's threshold the BPF engine keeps.
  const TraceWatch::Options options{context.sampled, UINT64_MAX, static_cast<int>(::getpid()),
                                    kSampledTraceRingBytes};
  trace_ = TraceWatch::open(context.host, options, method_reason_);
  if (!trace_) return;
  for (int cpu : context.sampled) {
    const auto thread = context.sampler_thread_of ? context.sampler_thread_of(cpu) : std::nullopt;
    trace_->want_records(
        cpu, sampled_outlier_threshold_ns(thread ? std::optional(thread->threshold_ns) : std::nullopt));
  }
  engine_ = trace_.get();
  method_ = trace_->method();
  method_reason_ = "tracepoints open on the sampled cpus";
  fell_back_ = false;
}

std::vector<PairedOutlier>& AttributionProbe::records_of(int cpu) {
  PairedRecords taken = engine_->take_records(cpu);
  std::uint64_t& seen = lost_seen_[cpu];
  records_lost_ += taken.dropped + (taken.lost > seen ? taken.lost - seen : 0);
  seen = std::max(seen, taken.lost);
  return carried_.add(cpu, std::move(taken.events));
}

std::map<std::string, std::uint64_t> AttributionProbe::book(int cpu, const std::vector<Interruption>& fresh,
                                                            const std::vector<std::optional<Taker>>& takers,
                                                            double hertz, ProbeTable& who) {
  std::map<std::string, std::uint64_t> by_cause;
  TakerTally named;
  for (std::size_t i = 0; i < takers.size() && i < fresh.size(); ++i) {
    const double seconds = static_cast<double>(fresh[i].duration_ticks) / hertz;
    if (!takers[i]) {  // settled below the kernel (settle_unexplained)
      unexplained_ns_.push_back(static_cast<std::uint64_t>(seconds * 1e9));
      continue;
    }
    const Taker& taker = *takers[i];
    ++by_cause[taker.cause];
    totals_[cpu].stolen_seconds[taker.cause] += seconds;
    if (!taker.task_class.empty()) totals_[cpu].preempted_by_class[std::string(taker.task_class)] += 1;
    named.add(taker, static_cast<std::uint64_t>(seconds * 1e9));
  }
  for (const TakerTally::Row& row : named.top(kNamedRowsPerCpu))
    who.rows.push_back(
        {cpu, row.cause, row.source, row.name, row.count, Cell(static_cast<double>(row.longest_ns) * 1e-3, 1)});
  return by_cause;
}

std::vector<AttributionProbe::SamplerCounts> AttributionProbe::read_samplers(
    const ProbeContext& context, const std::vector<int>& sampled, std::vector<std::string>& notes) const {
  std::vector<SamplerCounts> readings;
  for (int cpu : sampled) {
    const SamplerShared* shared = context.sampler_of ? context.sampler_of(cpu) : nullptr;
    if (!shared) {
      notes.push_back("cpu " + std::to_string(cpu) + ": no running sampler, nothing to attribute");
      continue;
    }
    SamplerCounts r{cpu, {}, {}};
    r.now.interruptions = shared->interruption_count.load(std::memory_order_acquire);
    r.now.interrupted_ticks = shared->interrupted_ticks.load(std::memory_order_acquire);
    if (shared->smi_counted.load(std::memory_order_acquire)) {
      r.now.smis = shared->smi_count.load(std::memory_order_relaxed);
      r.now.smis_in_spans = shared->smi_in_spans.load(std::memory_order_relaxed);
    }
    if (const auto cycles = read_cycles(*shared)) r.now.cycles = CycleCounts{cycles->first, cycles->second};
    const auto window = windows_.find(cpu);
    r.fresh = shared->interruptions.copy_since(window == windows_.end() ? 0 : window->second.next_sequence,
                                               &r.now.next_sequence);
    readings.push_back(std::move(r));
  }
  return readings;
}

// Every CPU's deltas in one pass over the two readings' rows, for the CPUs with a window.
std::map<int, std::vector<SourceDelta>> AttributionProbe::window_deltas(const std::vector<SamplerCounts>& readings,
                                                                        const InterruptSnapshot& snapshot) const {
  std::vector<int> windowed;
  for (const SamplerCounts& r : readings)
    if (previous_ && windows_.count(r.cpu) != 0) windowed.push_back(r.cpu);
  return previous_ ? per_cpu_deltas(*previous_, snapshot, windowed) : std::map<int, std::vector<SourceDelta>>{};
}

// The totals since the probe started, as counters, and the method in use.
void AttributionProbe::export_totals(ProbeResult& result) const {
  result.metrics.push_back(
      gauge("jitterd_attribution_method_info",
            "1, labelled with the attribution method in use: bpf, tracepoints or window_deltas.",
            {{"method", method_}}, 1));
  for (const auto& [cpu, totals] : totals_) {
    const std::string c = std::to_string(cpu);
    for (const std::string& cause : exported_causes(engine_ != nullptr)) {
      const auto found = totals.interruptions.find(cause);
      const auto stolen = totals.stolen_seconds.find(cause);
      result.metrics.push_back(
          counter("jitterd_attribution_interruptions_total",
                  "Interruptions of a sampled CPU by most likely cause (see jitterd_attribution_method_info).",
                  {{"cpu", c}, {"cause", cause}},
                  found == totals.interruptions.end() ? 0.0 : static_cast<double>(found->second)));
      result.metrics.push_back(counter("jitterd_attribution_stolen_seconds_total",
                                       "Time lost to interruptions of a sampled CPU, by most likely cause.",
                                       {{"cpu", c}, {"cause", cause}},
                                       stolen == totals.stolen_seconds.end() ? 0.0 : stolen->second));
    }
    result.metrics.push_back(
        counter("jitterd_attribution_coincident_interruptions_total",
                "Interruptions of a sampled CPU that coincided with an interrupt, softirq or task switch.",
                {{"cpu", c}}, static_cast<double>(totals.coincident)));
    if (engine_) {
      for (TaskClass each : kTaskClasses) {
        const std::string_view task_class = to_string(each);
        const auto found = totals.preempted_by_class.find(std::string(task_class));
        result.metrics.push_back(
            counter("jitterd_attribution_preemptions_by_class_total",
                    "Interruptions of a sampled CPU caused by a task that preempted its sampler (bpf, "
                    "tracepoints), by the task's class: jitterd, kernel_percpu, application or stray.",
                    {{"cpu", c}, {"class", std::string(task_class)}},
                    found == totals.preempted_by_class.end() ? 0.0 : static_cast<double>(found->second)));
      }
    }
    push_below_kernel_series(c, {totals.smis, totals.steal_ticks, totals.cycles}, user_hz_, result.metrics);
    for (const auto& [kind, category] : event_categories) {
      const auto found = totals.events_by_cause.find({std::string(kind), std::string(category)});
      result.metrics.push_back(
          counter("jitterd_attribution_events_total",
                  "Interrupts (kind irq) and softirqs that fired on a sampled CPU since jitterd started, by "
                  "cause category.",
                  {{"cpu", c}, {"kind", std::string(kind)}, {"cause", std::string(category)}},
                  found == totals.events_by_cause.end() ? 0.0 : static_cast<double>(found->second)));
    }
    for (const auto& it : top_sources(totals.events, settings_.source_detail)) {
      const auto& [source, named] = *it;
      result.metrics.push_back(
          counter("jitterd_attribution_source_events_total",
                  "Interrupts and softirqs that fired on a sampled CPU since jitterd started, by source: the "
                  "probes.attribution.source_detail sources of the CPU with the most.",
                  {{"cpu", c}, {"kind", source.first}, {"source", source.second}, {"name", named.first}},
                  static_cast<double>(named.second)));
    }
  }
  if (engine_) {
    result.metrics.push_back(counter(
        "jitterd_attribution_trace_lost_events_total",
        "Records of the sampled CPUs' interruptions (the bpf or tracepoints engine's) lost because a ring or "
        "queue filled up between reads.",
        {}, static_cast<double>(records_lost_)));
  }
}

// What fired on a CPU over the window, by source and by cause category.
void AttributionProbe::count_events(CpuTotals& totals, const std::vector<SourceDelta>& deltas) {
  for (const SourceDelta& d : deltas) {
    auto& [name, count] = totals.events[{d.kind, d.source}];
    name = d.name;
    count += d.delta;
    // Counted as the row was named then, so a renamed IRQ never moves past counts.
    const std::string_view category = cause_of(d.kind, d.source, d.name);
    if (category != not_an_interrupt) totals.events_by_cause[{d.kind, std::string(category)}] += d.delta;
  }
}

// The samplers' threads now, for the engine's preemption records: a sampler that restarted has a new thread.
void AttributionProbe::track_samplers(const ProbeContext& context, const std::vector<int>& sampled) {
  std::vector<int> tids;
  for (int cpu : sampled)
    if (const auto thread = context.sampler_thread_of ? context.sampler_thread_of(cpu) : std::nullopt)
      tids.push_back(static_cast<int>(thread->tid));
  if (bpf_)
    bpf_->set_sampler_threads(tids);
  else
    trace_->set_application(tids);
}

std::map<std::string, std::uint64_t> AttributionProbe::named_causes(const SamplerCounts& r,
                                                                    const CpuWindow& before, const CpuWindow& now,
                                                                    const TickToClock& to_clock, ProbeTable& who) {
  unexplained_ns_.clear();
  const std::vector<TimedInterval> intervals = timed_intervals(r.fresh, to_clock);
  std::map<std::string, std::uint64_t> by_cause =
      book(r.cpu, r.fresh, takers_from_records(intervals, records_of(r.cpu), kTraceSlackNs), to_clock.hertz, who);
  settle_unexplained(totals_[r.cpu], before, now, by_cause);
  const std::uint64_t pushed = r.now.next_sequence - before.next_sequence;
  if (pushed > r.fresh.size()) by_cause[std::string(not_kept_cause)] += pushed - r.fresh.size();
  return by_cause;
}

std::map<std::string, std::uint64_t> AttributionProbe::estimated_causes(const SamplerCounts& r,
                                                                        const CpuWindow& before,
                                                                        const CpuWindow& now,
                                                                        const std::vector<SourceDelta>& deltas,
                                                                        double hertz) {
  std::map<std::string, std::uint64_t> by_cause;
  const auto [smis, steal] = below_kernel_window(before, now);
  const std::uint64_t stolen_ns = TickScale(hertz).to_ns(r.now.interrupted_ticks - before.interrupted_ticks);
  for (const EstimatedShare& share :
       estimate_window(r.now.interruptions - before.interruptions, stolen_ns, deltas, smis, steal)) {
    by_cause[std::string(share.cause)] += share.interruptions;
    totals_[r.cpu].stolen_seconds[std::string(share.cause)] += static_cast<double>(share.stolen_ns) * 1e-9;
  }
  return by_cause;
}

ProbeResult AttributionProbe::run(ProbeContext& context) {
  const double hertz = context.frequency.hertz;
  if (!(hertz > 0)) throw std::runtime_error("no counter frequency to convert interruptions with");
  ProbeResult result;
  if (!tried_methods_) open_methods(context);
  std::vector<std::string> problems;
  const InterruptSnapshot snapshot = read_interrupt_counts(context.host, &problems);
  std::vector<int> sampled = context.sampled;
  std::sort(sampled.begin(), sampled.end());

  // Every sampler's counters and ring first, then the engine's records: an interruption copied
  // here has its records in the kernel's ring already (they happened inside it).
  const auto read_ns = static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC));  // the engines' clock
  std::vector<SamplerCounts> readings = read_samplers(context, sampled, result.notes);
  const std::map<int, CpuTimes> cpu_times = parse_proc_stat(context.host.read_proc("stat").value_or(""));
  const ClockTickPair pair = pair_other_clock_with_ticks(context.method, CLOCK_MONOTONIC);
  if (engine_) track_samplers(context, sampled);
  ProbeTable who_table{"last window: what took the interruptions (" + method_ + "), most first",
                       {"cpu", "cause", "source", "name", "count", "longest_us"},
                       {}};

  ProbeTable window_table{
      "last window by cause (" + method_ + ")", {"cpu", "interruptions", "cause", "count"}, {}};
  ProbeTable sources_table{
      "last window: what fired on each sampled cpu, most first", {"cpu", "kind", "source", "name", "count"}, {}};
  std::map<int, std::vector<SourceDelta>> deltas_of = window_deltas(readings, snapshot);
  for (SamplerCounts& r : readings) {
    const bool have_window = previous_ && windows_.count(r.cpu) != 0;
    const CpuWindow before = windows_[r.cpu];
    if (const auto times = cpu_times.find(r.cpu); times != cpu_times.end() && times->second.has_steal)
      r.now.steal_ticks = times->second.steal;
    const CpuWindow& window = windows_[r.cpu] = r.now;
    CpuTotals& totals = totals_[r.cpu];
    keep_below_kernel(totals, before, window);
    if (!have_window) continue;  // the baseline: from here on, interruptions belong to a window
    const std::vector<SourceDelta> deltas = std::move(deltas_of[r.cpu]);
    count_events(totals, deltas);
    // By sequence number where an engine names them: exactly those pushed since the last window.
    const std::uint64_t interruptions =
        engine_ ? r.now.next_sequence - before.next_sequence : r.now.interruptions - before.interruptions;
    const std::map<std::string, std::uint64_t> by_cause =
        engine_
            ? named_causes(r, before, window, TickToClock{previous_pair_.value_or(pair), pair, hertz}, who_table)
            : estimated_causes(r, before, window, deltas, hertz);
    for (const auto& [cause, count] : by_cause) {
      totals.interruptions[cause] += count;
      if (coincident(cause)) totals.coincident += count;
      if (count > 0) window_table.rows.push_back({r.cpu, interruptions, cause, count});
    }
    add_top_sources(sources_table, r.cpu, deltas);
  }
  if (engine_) {
    // A sampled CPU that matched nothing this run (its baseline, or no running sampler) has its
    // records taken all the same, so they do not pile up in the engine; carry keeps those that
    // may still match.
    for (int cpu : sampled)
      if (!carried_.added(cpu)) records_of(cpu);
    carried_.carry(read_ns, kCarryHorizonNs);
  }
  previous_ = snapshot;
  previous_pair_ = pair;

  export_totals(result);
  result.tables.push_back(std::move(window_table));
  result.tables.push_back(std::move(sources_table));
  if (engine_) result.tables.push_back(std::move(who_table));
  result.notes.push_back("method: " + method_ + " (" + method_reason_ + ")");
  note_below_kernel(context, result);
  result.states["method"] = {method_ + " (" + method_reason_ + ")", fell_back_};
  result.notes.insert(result.notes.end(), problems.begin(), problems.end());
  return result;
}

}  // namespace jitterd
