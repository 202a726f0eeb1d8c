// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_top.h"

#include <algorithm>

#include "host/cpu_list.h"
#include "host/text.h"
#include "measure/gap_counts.h"

namespace jitterd {
namespace {

// What each source added between two readings: the vectors and softirqs by name, the device
// IRQs by number and name (the "device_irq" source less what the IRQs' own figures hold, if any).
NameTally sources_part(const PairedCpuFigures& now, const PairedCpuFigures& then, const WatchReading& counts) {
  NameTally part(kPartNames);
  Tallied device_irqs;
  for (const auto& [irq, f] : now.device_irqs) {
    const auto old = then.device_irqs.find(irq);
    const Tallied added{counter_rise(f.count, old == then.device_irqs.end() ? 0 : old->second.count),
                        counter_rise(f.ns, old == then.device_irqs.end() ? 0 : old->second.ns)};
    if (added.count == 0 && added.ns == 0) continue;
    const std::string name = printable(device_irq_name(counts, now.cpu, irq));
    part.add("irq " + std::to_string(irq) + (name.empty() ? "" : " " + name), added);
    device_irqs += added;
  }
  for (std::size_t s = 0; s < now.sources.size() && s < then.sources.size(); ++s) {
    if (!watch_source_task_class(s).empty()) continue;  // a preemption, not an interruption
    Tallied added{counter_rise(now.sources[s].count, then.sources[s].count),
                  counter_rise(now.sources[s].ns, then.sources[s].ns)};
    if (watch_source_name(s) == "device_irq")
      added = {counter_rise(added.count, device_irqs.count), counter_rise(added.ns, device_irqs.ns)};
    if (added.count > 0 || added.ns > 0) part.add(std::string(watch_source_name(s)), added);
  }
  return part;
}

// The preemptions of one CPU between two readings: the outliers name the task that took the CPU;
// the rest of what the preemption sources added is unnamed.
NameTally preempters_part(const PairedCpuFigures& now, const PairedCpuFigures& then,
                          const PairedReading& reading) {
  NameTally part(kPartNames);
  Tallied all, named;
  for (std::size_t s = 0; s < now.sources.size() && s < then.sources.size(); ++s)
    if (!watch_source_task_class(s).empty())
      all += Tallied{counter_rise(now.sources[s].count, then.sources[s].count),
                     counter_rise(now.sources[s].ns, then.sources[s].ns)};
  for (const PairedOutlier& o : reading.outliers) {
    const std::string_view task_class = watch_source_task_class(o.source);
    if (o.cpu != now.cpu || task_class.empty()) continue;
    const Tallied one{1, o.duration_ns, o.tgid, o.id};
    part.add(preempter_key(o.name, task_class), one);
    named += one;
  }
  part.add_unnamed({counter_rise(all.count, named.count), counter_rise(all.ns, named.ns)});
  return part;
}

// The cause (attribution's vocabulary) of a source's name in a sources tally.
std::string source_cause(const std::string& name) {
  const std::string_view source = name.rfind("irq ", 0) == 0 ? std::string_view("device_irq") : name;
  for (std::size_t s = 0; s < watch_source_count(); ++s)
    if (watch_source_name(s) == source) return std::string(watch_source_cause(s));
  return name;  // a loop's "unexplained" and "not_kept", its causes too
}

Cell share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? Cell() : Cell(static_cast<double>(part) / static_cast<double>(whole), 4);
}

Cell ms(std::uint64_t ns) { return Cell(static_cast<double>(ns) * 1e-6, 3); }

Cell rank(std::size_t r) { return r == 0 ? Cell() : Cell(r); }

}  // namespace

std::string duration_words(double ns) {
  const auto whole = [](double v) { return std::to_string(static_cast<long long>(v + 0.5)); };
  if (ns >= 1e9) return whole(ns * 1e-9) + " s";
  if (ns >= 1e6) return whole(ns * 1e-6) + " ms";
  return whole(ns * 1e-3) + " us";
}

std::string source_key(const PairedOutlier& record) {
  const std::string_view source = watch_source_name(record.source);
  if (source != "device_irq") return std::string(source);
  return "irq " + std::to_string(record.id) + (record.name.empty() ? "" : " " + printable(record.name));
}

void tally_matched(const PairedOutlier* record, std::uint64_t ns, NameTally& preempters, NameTally& sources,
                   std::string_view unmatched) {
  const std::string_view task_class = record ? watch_source_task_class(record->source) : std::string_view();
  if (record && !task_class.empty())
    preempters.add(preempter_key(record->name, task_class), {1, ns, record->tgid, record->id});
  else
    sources.add(record ? source_key(*record) : std::string(unmatched), {1, ns});
}

ProbeTable preempters_table(std::string title, std::vector<std::string> lead_columns) {
  for (const char* column :
       {"over", "task", "class", "pid", "preemptions", "stolen_ms", "share", "rank_by_time", "rank_by_count"})
    lead_columns.emplace_back(column);
  return {std::move(title), std::move(lead_columns), {}};
}

ProbeTable sources_table(std::string title, std::vector<std::string> lead_columns) {
  for (const char* column :
       {"over", "source", "cause", "count", "stolen_ms", "share", "rank_by_time", "rank_by_count"})
    lead_columns.emplace_back(column);
  return {std::move(title), std::move(lead_columns), {}};
}

// A row of `table`: `lead`'s cells, then `cells`.
void add_led_row(ProbeTable& table, const std::vector<Cell>& lead, std::vector<Cell> cells) {
  std::vector<Cell> out = lead;
  out.insert(out.end(), std::make_move_iterator(cells.begin()), std::make_move_iterator(cells.end()));
  table.rows.push_back(std::move(out));
}

void add_preempter_rows(ProbeTable& table, const std::vector<Cell>& lead, const char* over, const TopTally& top,
                        const HostReader& host, const std::string& unnamed) {
  const auto row = [&](std::vector<Cell> cells) { add_led_row(table, lead, std::move(cells)); };
  for (const TallyRow& r : top.rows) {
    const auto [comm, task_class] = preempter_of(r.name);
    const bool alive = task_alive_as(host, r.figures.pid, r.figures.tid, comm);
    row({over, printable(comm), task_class, alive ? Cell(r.figures.pid) : Cell(), r.figures.count,
         ms(r.figures.ns), share(r.figures.ns, top.total.ns), rank(r.rank_by_time), rank(r.rank_by_count)});
  }
  if (top.other.count > 0 || top.other.ns > 0)
    row({over, "other", Cell(), Cell(), top.other.count, ms(top.other.ns), share(top.other.ns, top.total.ns),
         Cell(), Cell()});
  if (top.unnamed.count > 0 || top.unnamed.ns > 0)
    row({over, unnamed, Cell(), Cell(), top.unnamed.count, ms(top.unnamed.ns), share(top.unnamed.ns, top.total.ns),
         Cell(), Cell()});
}

void add_source_rows(ProbeTable& table, const std::vector<Cell>& lead, const char* over, const TopTally& top) {
  const auto row = [&](std::vector<Cell> cells) { add_led_row(table, lead, std::move(cells)); };
  for (const TallyRow& r : top.rows)
    row({over, r.name, source_cause(r.name), r.figures.count, ms(r.figures.ns), share(r.figures.ns, top.total.ns),
         rank(r.rank_by_time), rank(r.rank_by_count)});
  if (top.other.count > 0 || top.other.ns > 0)
    row({over, "other", Cell(), top.other.count, ms(top.other.ns), share(top.other.ns, top.total.ns), Cell(),
         Cell()});
}

void add_preempter_series(const std::string& seconds, const std::string& preemptions, const std::string& whose,
                          const ProbeLabels& lead, const TopTally& top, std::vector<ProbeMetric>& out) {
  const auto series = [&](const std::string& rank, const std::string& task, const std::string& task_class,
                          const Tallied& f) {
    ProbeLabels labels = lead;
    labels.insert(labels.end(), {{"rank", rank}, {"task", task}, {"class", task_class}});
    out.push_back(gauge(seconds,
                        "Time the top preempting tasks took from " + whose +
                            " over the rolling window, by rank by time (bpf, tracepoints; rank other: the rest, "
                            "unnamed: not named).",
                        labels, static_cast<double>(f.ns) * 1e-9));
    out.push_back(gauge(preemptions,
                        "Preemptions of " + whose +
                            " by its top preempting tasks over the rolling window, ranked as " + seconds +
                            " (bpf, tracepoints).",
                        labels, static_cast<double>(f.count)));
  };
  Tallied other = top.other;
  for (const TallyRow& r : top.rows) {
    if (r.rank_by_time == 0) {
      other += Tallied{r.figures.count, r.figures.ns};
      continue;
    }
    const auto [comm, task_class] = preempter_of(r.name);
    series(std::to_string(r.rank_by_time), printable(comm), task_class, r.figures);
  }
  series("other", "other", "", other);
  series("unnamed", "", "", top.unnamed);
}

void TopTallies::push(std::uint64_t now_ns, NameTally preempters, NameTally sources) {
  preempters_since.merge(preempters);
  sources_since.merge(sources);
  preempters_window.push(now_ns, std::move(preempters));
  sources_window.push(now_ns, std::move(sources));
}

std::string preempter_key(std::string_view comm, std::string_view task_class) {
  std::string key(comm.substr(0, comm.find('\0')));
  key += '\0';
  key += task_class;
  return key;
}

std::pair<std::string, std::string> preempter_of(const std::string& key) {
  const std::size_t nul = key.find('\0');
  if (nul == std::string::npos) return {key, ""};
  return {key.substr(0, nul), key.substr(nul + 1)};
}

bool task_alive_as(const HostReader& host, std::uint32_t pid, std::uint32_t tid, std::string_view comm) {
  if (pid == 0 || tid == 0) return false;
  const std::optional<std::string> now =
      host.read_proc(std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (!now) return false;
  std::string_view name(*now);
  if (!name.empty() && name.back() == '\n') name.remove_suffix(1);
  return name == comm;
}

void WatchTop::add(const PairedReading& now, const PairedReading& before, const WatchReading& counts,
                   std::uint64_t now_ns) {
  std::erase_if(cpus_, [&](const auto& entry) { return entry_of_cpu(now.cpus, entry.first) == nullptr; });
  for (const PairedCpuFigures& c : now.cpus)
    if (const PairedCpuFigures* then = entry_of_cpu(before.cpus, c.cpu))
      cpus_.try_emplace(c.cpu, window_ns_)
          .first->second.push(now_ns, preempters_part(c, *then, now), sources_part(c, *then, counts));
}

void add_top_result(const WatchTop& top, std::string_view method, const HostReader& host,
                    double outlier_threshold_ns, ProbeResult& result) {
  const std::string window = duration_words(static_cast<double>(top.window_ns()));
  const std::string unnamed = "(unnamed: under " + duration_words(outlier_threshold_ns) + " or not kept)";
  ProbeTable preempters = preempters_table("who preempted the application: the top tasks by time and by count (" +
                                               std::string(method) + "; window: the last " + window +
                                               "; pid: while that task still runs)",
                                           {"cpu"});
  ProbeTable sources = sources_table("what interrupted the watched CPUs: the top sources by time and by count (" +
                                         std::string(method) + "; window: the last " + window + ")",
                                     {"cpu"});
  for (const auto& [cpu, tallies] : top.cpus()) {
    const TopTally window_preempters = top_of(tallies.preempters_window.merged());
    add_preempter_rows(preempters, {cpu}, "window", window_preempters, host, unnamed);
    add_preempter_rows(preempters, {cpu}, "since_start", top_of(tallies.preempters_since), host, unnamed);
    add_source_rows(sources, {cpu}, "window", top_of(tallies.sources_window.merged()));
    add_source_rows(sources, {cpu}, "since_start", top_of(tallies.sources_since));
    add_preempter_series("jitterd_watch_top_preempter_seconds", "jitterd_watch_top_preempter_preemptions",
                         "the application on the watched CPU", {{"cpu", std::to_string(cpu)}}, window_preempters,
                         result.metrics);
  }
  result.tables.push_back(std::move(preempters));
  result.tables.push_back(std::move(sources));
}

}  // namespace jitterd
