// SPDX-License-Identifier: Apache-2.0
#include "compare/prometheus_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>

#include "compare/prometheus_series.h"
#include "host/text.h"
#include "report/baseline_recorder.h"

namespace jitterd {
using namespace history_detail;

namespace {

// The upper bound (ns) of the exported bucket holding rank ceil(q * total); the largest finite
// bound for the +Inf bucket (a lower bound of such gaps).
double exported_quantile_ns(const std::map<double, double>& cumulative, double q) {
  const double total = cumulative.rbegin()->second;
  if (total <= 0) return 0;
  const double rank = std::max(1.0, std::ceil(q * total - 1e-9));
  double finite = 0;
  for (const auto& [le, count] : cumulative) {
    if (std::isinf(le)) break;
    finite = le;
    if (count >= rank) return le;
  }
  return finite;
}

}  // namespace

std::string history_selector(const std::string& instance, double seconds) {
  std::string escaped;
  for (char c : instance) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c;
  }
  std::string names;
  for (const char* name : kHistoryFamilies) names += (names.empty() ? "" : "|") + std::string(name);
  for (const auto& [loop_name, sampler_name] : kLoopFamilies) names += "|" + std::string(loop_name);
  return fmt::format("{{__name__=~\"{}\",instance=\"{}\"}}[{}ms]", names, escaped,
                     static_cast<long long>(std::ceil(seconds * 1000)));
}

double scrape_interval_seconds(const RangeSamples& samples) {
  std::vector<double> spacing;
  // The sampled CPUs' counter, else (a jitterd that samples no CPU) a loop's or the watch's.
  const std::vector<Series> all = series_of(samples);
  const bool sampled =
      std::any_of(all.begin(), all.end(), [](const Series& s) { return s.label("__name__") == kSampled; });
  const bool looped = std::any_of(all.begin(), all.end(),
                                  [](const Series& s) { return s.label("__name__") == kLoopFamilies[1].first; });
  const std::string clock = sampled ? kSampled : looped ? kLoopFamilies[1].first : kWatchPreemptions;
  for (const Series& s : all)
    if (s.label("__name__") == clock)
      for (std::size_t i = 1; i < s.points.size(); ++i) spacing.push_back(s.points[i].t - s.points[i - 1].t);
  if (spacing.empty()) return 0;
  std::nth_element(spacing.begin(), spacing.begin() + static_cast<std::ptrdiff_t>(spacing.size() / 2),
                   spacing.end());
  return spacing[spacing.size() / 2];
}

namespace {

std::uint64_t whole(double count) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, count))); }

BaselineCpu cpu_baseline(int cpu, const CpuWindows& c, const Gathered& g, double counter_hertz,
                         const std::vector<double>& tail_thresholds_ns, std::size_t windows) {
  BaselineCpu out;
  out.cpu = cpu;
  std::map<double, double> total;  // cumulative over the range, per le
  for (std::size_t w = 0; w < windows; ++w) {
    std::map<double, double> cumulative;
    double running = 0;
    for (const auto& [le, counts] : c.cumulative) cumulative[le] = running = std::max(running, counts[w]);
    for (const auto& [le, count] : cumulative) total[le] += count;
    out.sampled_seconds += c.sampled[w];
    out.stolen_seconds += c.stolen[w];
    out.interruptions += whole(c.interruptions[w]);
    if (c.sampled[w] <= 0) continue;
    SubWindow sub;
    sub.sampled_seconds = c.sampled[w];
    sub.samples = whole(cumulative.rbegin()->second);
    sub.p50_ns = exported_quantile_ns(cumulative, 0.5);
    sub.p99_ns = exported_quantile_ns(cumulative, 0.99);
    sub.p999_ns = exported_quantile_ns(cumulative, 0.999);
    sub.p9999_ns = exported_quantile_ns(cumulative, 0.9999);
    sub.interruptions = whole(c.interruptions[w]);
    sub.stolen_seconds = c.stolen[w];
    for (double threshold : tail_thresholds_ns) {
      const auto at = cumulative.find(threshold);
      sub.over_threshold.push_back(at == cumulative.end() ? 0 : whole(cumulative.rbegin()->second - at->second));
    }
    out.sub_windows.push_back(std::move(sub));
  }
  const double ns_per_tick = 1e9 / counter_hertz;
  double previous = 0, highest_finite = 0, highest_nonempty = 0;
  for (const auto& [le, count] : total) {
    if (!std::isinf(le)) highest_finite = le;
    if (count > previous) highest_nonempty = le;
    previous = std::max(previous, count);
  }
  out.samples = whole(previous);
  const auto max_seen = g.window_max.find(cpu);
  // The +Inf bucket: the largest rolling-window max scraped in the range (that window may reach
  // back before the range's start), at least the largest finite bound.
  out.max_ns = !std::isinf(highest_nonempty)
                   ? highest_nonempty
                   : std::max(highest_finite, max_seen == g.window_max.end() ? 0 : max_seen->second * 1e9);
  previous = 0;
  for (const auto& [le, count] : total) {
    const double in_bucket = count - previous;
    previous = std::max(previous, count);
    if (in_bucket <= 0) continue;
    const double at_ns = std::isinf(le) ? out.max_ns : le;
    out.histogram.counts[histogram_bucket_index(whole(at_ns / ns_per_tick))] += whole(in_bucket);
  }
  const auto last_of = [&](const std::map<int, Series>& latest) {
    const auto it = latest.find(cpu);
    return it == latest.end() ? 0.0 : it->second.last();
  };
  out.floor_ns = last_of(g.floor) * 1e9;
  out.threshold_ns = last_of(g.threshold) * 1e9;
  return out;
}

// The machine's facts from the exported _info series: the one source of baselines that reads
// them back from metrics (docs/DESIGN.md). The hostname is in none, so it is always unknown here.
void read_machine(BaselineRecording& r, std::vector<std::string>& notes, const Gathered& g,
                  const RangeSamples& samples, const std::set<int>& sampled) {
  r.unknown_fields = {"hostname", "isolation"};
  std::vector<std::string> why{
      "no exported metric carries the hostname",
      "the isolation by mechanism is not rebuilt from jitterd_posture_cpu_isolated_by_info"};
  const auto info = g.info.find(kFingerprint);
  if (info == g.info.end()) {
    notes.push_back(
        fmt::format("{}: no {} in the range (posture probe off or not yet run): the machine's "
                    "fingerprint is not compared",
                    samples.source, kFingerprint));
    for (const auto& [field, value] : fingerprint_fields(Fingerprint{})) r.unknown_fields.push_back(field);
    r.unknown_fields.emplace_back("governor");
    why.push_back(fmt::format("no {} in the range", kFingerprint));
  } else {
    const Fingerprint& fp = r.machine.fingerprint =
        fingerprint_from_fields([&](const std::string& field) { return info->second.label(field); });
    for (const Series* other : g.fingerprints)
      if (other->labels != info->second.labels) {
        std::string changed;
        for (const auto& [field, value] : fingerprint_fields(fp))
          if (other->label(field) != value)
            changed += fmt::format("{}{} \"{}\" -> \"{}\"", changed.empty() ? "" : "; ", field,
                                   other->label(field), value);
        notes.push_back(fmt::format("{}: the fingerprint changed inside the range ({}); the last one is compared",
                                    samples.source, changed));
        break;
      }
    for (const auto& [cpu, series] : g.governor)
      if (sampled.count(cpu) != 0) r.machine.governors[cpu] = series.label("governor");
  }
  if (const auto clock = g.info.find(kClocksource); clock != g.info.end()) {
    r.machine.clocksource = clock->second.label("clocksource");
  } else {
    r.unknown_fields.emplace_back("clocksource");
    why.push_back(fmt::format("no {} in the range", kClocksource));
  }
  r.unknown_why = fmt::format("not in the exported metrics ({})", fmt::join(why, "; "));
}

// The settings the exported gauges and _info series tell, per CPU where they are per CPU.
BaselineFields history_configuration(const std::vector<BaselineCpu>& cpus, const Gathered& g) {
  std::map<int, std::string> thresholds, duty, realtime;
  for (const BaselineCpu& c : cpus) {
    thresholds[c.cpu] = fmt::format("{:.0f}ns", c.threshold_ns);
    if (const auto d = g.duty.find(c.cpu); d != g.duty.end())
      duty[c.cpu] = d->second.last() >= 1 ? "continuous" : fmt::format("{:.3g}", d->second.last());
    if (const auto r = g.realtime.find(c.cpu); r != g.realtime.end())
      realtime[c.cpu] = fmt::format("{:.0f}", r->second.last());
  }
  return {{"interruption_threshold", per_cpu_text(thresholds)},
          {"duty_cycle", per_cpu_text(duty)},
          {"realtime_priority", per_cpu_text(realtime)}};
}

std::string info_label(const Gathered& g, const char* name, const char* label) {
  const auto it = g.info.find(name);
  return it == g.info.end() ? std::string() : it->second.label(label);
}

// The watch's method over the range: the one the range's last jitterd_watch_method_info names
// (noted when an earlier one differs), or none (no watch, or a method this jitterd does not know:
// noted).
std::optional<std::string> range_watch_method(const std::vector<Series>& all, const RangeSamples& samples,
                                              std::vector<std::string>& notes) {
  const Series* method_info = nullptr;
  for (const Series& s : all)
    if (!s.points.empty() && s.label("__name__") == kWatchMethod &&
        (method_info == nullptr || later(s, *method_info)))
      method_info = &s;
  if (method_info == nullptr) return std::nullopt;
  const std::string method = method_info->label("method");
  if (!known_watch_method(method)) {
    notes.push_back(fmt::format("{}: watched CPUs left out: the watch's method is \"{}\"", samples.source,
                                method.substr(0, 40)));
    return std::nullopt;
  }
  for (const Series& s : all)
    if (s.label("__name__") == kWatchMethod && s.label("method") != method && !s.points.empty()) {
      notes.push_back(
          fmt::format("{}: the watch's method changed inside the range (to {}): watched CPUs counted "
                      "by it",
                      samples.source, method));
      break;
    }
  return method;
}

// One watched CPU's counters summed per sub-window.
struct WatchedWindows {
  std::vector<double> seconds, interruptions, preemptions, stolen;
};

// A watched CPU from its sub-windows (those its clock covers), with the totals; none covered: none.
std::optional<BaselineWatched> watched_cpu(int cpu, const WatchedWindows& w, const std::string& method,
                                           std::size_t windows, const std::vector<double>& tail_thresholds_ns) {
  BaselineWatched watched;
  watched.cpu = cpu;
  watched.method = method;
  watched.tail_unknown = "Prometheus history holds no single interruption's length (compare --prometheus)";
  for (std::size_t i = 0; i < windows; ++i) {
    if (w.seconds[i] <= 0) continue;
    WatchedFigures f;
    f.seconds = w.seconds[i];
    f.interruptions = whole(w.interruptions[i]);
    f.preemptions = whole(w.preemptions[i]);
    f.stolen_seconds = w.stolen[i];
    f.over_threshold.assign(tail_thresholds_ns.size(), std::nullopt);
    watched.sub_windows.push_back(std::move(f));
  }
  if (watched.sub_windows.empty()) return std::nullopt;
  set_watched_totals(watched);
  return watched;
}

// The watched CPUs from the watch probe's counters, per sub-window: interruptions, preemptions and
// stolen seconds, by the range's method (range_watch_method; bpf: its interruptions by cause,
// `preempted` the preemptions; counts: the kernel's interrupt and softirq counters, the
// application's involuntary switches and run-queue wait). Each sub-window's seconds are those its
// increments of the preemptions counter cover. Lengths are not exported at that resolution: the
// longest and the tail counts are unknown.
std::vector<BaselineWatched> watched_from(const std::vector<Series>& all, const RangeSamples& samples,
                                          double sub_window_seconds, std::size_t windows,
                                          const std::vector<double>& tail_thresholds_ns,
                                          std::vector<std::string>& notes) {
  const std::optional<std::string> range_method = range_watch_method(all, samples, notes);
  if (!range_method) return {};
  const std::string& method = *range_method;
  const bool bpf = watch_method_pairs(method);  // bpf or tracepoints: the same series
  const auto window_of = [&](double t) {
    const double k = std::floor((t - samples.range.start) / sub_window_seconds);
    return static_cast<std::size_t>(std::clamp(k, 0.0, static_cast<double>(windows - 1)));
  };
  using Windows = WatchedWindows;
  std::map<int, Windows> cpus;
  for (const Series& s : all) {
    const std::string name = s.label("__name__");
    const std::string cause = s.label("cause");
    std::vector<double> Windows::*target = nullptr;
    if (bpf && name == kWatchInterruptions)
      target = cause == "preempted" ? &Windows::preemptions : &Windows::interruptions;
    else if (!bpf && (name == kWatchInterrupts || name == kWatchSoftirqs))
      target = &Windows::interruptions;
    else if (!bpf && name == kWatchPreemptions)
      target = &Windows::preemptions;
    else if (name == kWatchStolen && (bpf || cause == "preempted"))
      target = &Windows::stolen;
    if (target == nullptr) continue;
    const int cpu = cpu_label(s);
    if (cpu < 0) wrong_shape(samples.source, fmt::format("a {} series without a cpu label", name));
    if (cpus.size() >= kBaselineMaxCpus && cpus.count(cpu) == 0)
      wrong_shape(samples.source, fmt::format("watch series of more than {} CPUs", kBaselineMaxCpus));
    Windows& w = cpus[cpu];
    for (auto* v : {&w.seconds, &w.interruptions, &w.preemptions, &w.stolen}) v->resize(windows);
    for (const Increment& inc : increments(s, nullptr)) (w.*target)[window_of(inc.t)] += inc.amount;
    // The time the preemptions' counter covers (bpf: its `preempted` cause; counts: the counter).
    const bool clock = bpf ? (name == kWatchInterruptions && cause == "preempted") : name == kWatchPreemptions;
    if (clock)
      for (std::size_t i = 1; i < s.points.size(); ++i)
        w.seconds[window_of(s.points[i].t)] += s.points[i].t - s.points[i - 1].t;
  }
  std::vector<BaselineWatched> out;
  for (const auto& [cpu, w] : cpus)
    if (std::optional<BaselineWatched> watched = watched_cpu(cpu, w, method, windows, tail_thresholds_ns))
      out.push_back(std::move(*watched));
  return out;
}

// The loops as sampled CPUs (`gathered` from loops_as_samplers, `loops` its names and CPUs), in
// the file's counter (their histograms are at the exported bounds either way); a loop without
// its +Inf bucket in the range is left out.
std::vector<BaselineLoop> history_loops(const Gathered& gathered,
                                        const std::vector<std::pair<std::string, int>>& loops,
                                        const BaselineRecording& r, std::size_t windows) {
  std::vector<BaselineLoop> out;
  for (const auto& [index, c] : gathered.cpus) {
    const auto& [name, cpu] = loops[static_cast<std::size_t>(index)];
    if (c.cumulative.empty() || !std::isinf(c.cumulative.rbegin()->first)) continue;
    BaselineLoop loop;
    static_cast<BaselineCpu&>(loop) =
        cpu_baseline(index, c, gathered, r.counter_hertz, r.tail_thresholds_ns, windows);
    loop.name = name;
    loop.cpu = cpu;
    loop.counter_hertz = r.counter_hertz;
    out.push_back(std::move(loop));
  }
  return out;
}

}  // namespace

HistoryBaseline baseline_from_samples(const RangeSamples& samples, double sub_window_seconds) {
  const TimeRange& range = samples.range;
  const std::size_t windows = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil((range.end - range.start) / sub_window_seconds - 1e-9)));
  const std::vector<Series> all = series_of(samples);
  const Gathered g = gather(all, samples, sub_window_seconds, windows);
  HistoryBaseline out;
  BaselineRecording r;
  const auto hertz = g.info.find(kTickHertz);
  if (hertz == g.info.end() || !(hertz->second.last() > 0))
    throw BaselineError(
        kExitBadBaseline,
        fmt::format("{}: no {} in the range: no sampler of this jitterd was running", samples.source, kTickHertz));
  r.counter_hertz = hertz->second.last();
  r.tick_method = info_label(g, kTickInfo, "method");
  r.counter_source = info_label(g, kTickInfo, "frequency_source");
  r.jitterd_version = info_label(g, kBuild, "version");
  r.created_unix_seconds = range.end;
  r.duration_seconds = range.end - range.start;
  r.sub_window_seconds = sub_window_seconds;
  // The loops as sampled CPUs (their families have the same shapes and buckets).
  std::vector<std::pair<std::string, int>> loops;
  const std::vector<Series> loop_series = loops_as_samplers(all, samples, loops);
  const Gathered lg = gather(loop_series, samples, sub_window_seconds, windows);
  std::set<double> bounds;
  for (const Gathered* gathered : {&g, &lg})
    for (const auto& [cpu, c] : gathered->cpus)
      for (const auto& [le, counts] : c.cumulative)
        if (!std::isinf(le)) bounds.insert(le);
  r.histogram_bounds_ns.assign(bounds.begin(), bounds.end());
  r.tail_thresholds_ns = tail_bounds(bounds);  // the thresholds the tail is counted above
  std::vector<BaselineCpu> cpus;
  std::set<double> resets;
  for (const auto& [cpu, c] : g.cpus) {
    if (c.cumulative.empty() || !std::isinf(c.cumulative.rbegin()->first)) {
      out.notes.push_back(fmt::format("{}: cpu {}: left out, no {}{{le=\"+Inf\"}} in the range", samples.source,
                                      cpu, kGapBuckets));
      continue;
    }
    cpus.push_back(cpu_baseline(cpu, c, g, r.counter_hertz, r.tail_thresholds_ns, windows));
    r.cpus.push_back(cpu);
    resets.insert(c.resets.begin(), c.resets.end());
  }
  for (double t : resets)
    out.notes.push_back(
        fmt::format("{}: counters reset at {} (jitterd restarted): counted from 0 after it, as "
                    "PromQL's increase() counts a reset",
                    samples.source, utc_text(t)));
  read_machine(r, out.notes, g, samples, std::set<int>(r.cpus.begin(), r.cpus.end()));
  r.configuration = history_configuration(cpus, g);
  r.configuration.emplace_back("histogram", "exported le bounds");
  out.baseline = record_baseline(r, std::move(cpus));
  // The application's side (format 1.2): the loops and the watched CPUs.
  out.baseline.loops = history_loops(lg, loops, r, windows);
  out.baseline.watched = watched_from(all, samples, sub_window_seconds, windows, r.tail_thresholds_ns, out.notes);
  // A jitterd that samples no CPU (its isolated CPUs all run the application) is compared by its
  // watched CPUs and loops.
  const auto has_samples = [](const BaselineCpu& c) { return c.samples > 0; };
  if (std::none_of(out.baseline.cpus.begin(), out.baseline.cpus.end(), has_samples) &&
      std::none_of(out.baseline.loops.begin(), out.baseline.loops.end(), has_samples) &&
      out.baseline.watched.empty())
    throw BaselineError(
        kExitBadBaseline,
        fmt::format("{}: empty range: no sampled CPU, loop or watched CPU has two scrapes between {} "
                    "and {}",
                    samples.source, utc_text(range.start), utc_text(range.end)));
  return out;
}

Json range_result(Json data, const std::string& where) {
  if (!data.is_object() || !data.contains("resultType") || data["resultType"] != "matrix" ||
      !data.contains("result") || !data["result"].is_array())
    throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus answer (no matrix result)", where));
  return std::move(data["result"]);
}

RangeSamples read_range(const PrometheusClient& client, const std::string& instance, const TimeRange& range) {
  RangeSamples s{range, instance, fmt::format("{} instance {} range {}", client.url(), instance, range.text), {}};
  const std::string query = history_selector(instance, range.end - range.start);
  s.matrix = range_result(client.query(query, range.end), fmt::format("{} (query {})", client.url(), query));
  const bool any = std::any_of(s.matrix.begin(), s.matrix.end(), [](const Json& item) {
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object()) return false;
    const std::string name = item["metric"].value("__name__", "");
    return name == kSampled || name == kLoopFamilies[1].first || name == kWatchPreemptions ||
           name == kWatchInterruptions;
  });
  if (!any) {
    const std::vector<std::string> instances = client.label_values("instance", kSampled);
    if (std::find(instances.begin(), instances.end(), instance) == instances.end())
      throw BaselineError(kExitBadBaseline,
                          fmt::format("{}: no jitterd sampler series ({}) for instance \"{}\" at all; instances "
                                      "with them: {}",
                                      client.url(), kSampled, instance,
                                      instances.empty() ? "none" : fmt::format("{}", fmt::join(instances, ", "))));
    throw BaselineError(kExitBadBaseline,
                        fmt::format("{}: empty range: no sample of {} between {} and {}", s.source, kSampled,
                                    utc_text(range.start), utc_text(range.end)));
  }
  return s;
}

}  // namespace jitterd
