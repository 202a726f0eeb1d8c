// SPDX-License-Identifier: Apache-2.0
#include "report/baseline_recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "host/cpu_list.h"
#include "host/text.h"

namespace jitterd {
std::string per_cpu_text(const std::map<int, std::string>& values) {
  std::set<std::string> distinct;
  std::string listed;
  for (const auto& [cpu, value] : values) {
    distinct.insert(value);
    listed += fmt::format("{}{}:{}", listed.empty() ? "" : " ", cpu, value);
  }
  return distinct.size() == 1 ? *distinct.begin() : listed;
}

std::string per_cpu_value(std::string_view text, int cpu) {
  if (text.find(':') == std::string_view::npos) return std::string(text);
  const std::string key = fmt::format("{}:", cpu);
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    if (text.substr(at, end - at).starts_with(key))
      return std::string(text.substr(at + key.size(), end - at - key.size()));
    at = end + 1;
  }
  return "";
}

const std::vector<std::string>& baseline_fingerprint_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& [field, value] : fingerprint_fields(Fingerprint{})) out.push_back(field);
    for (const char* field : {"hostname", "governor", "clocksource", "isolation"}) out.emplace_back(field);
    return out;
  }();
  return keys;
}

BaselineFields baseline_fingerprint(const MachineFacts& facts, const std::vector<std::string>& unknown) {
  BaselineFields all = fingerprint_fields(facts.fingerprint);
  all.emplace_back("hostname", facts.hostname);
  all.emplace_back("governor", per_cpu_text(facts.governors));
  all.emplace_back("clocksource", facts.clocksource);
  all.emplace_back("isolation", facts.isolation);
  std::erase_if(all, [&](const auto& field) {
    return std::find(unknown.begin(), unknown.end(), field.first) != unknown.end();
  });
  return all;
}

void add_sub_window(BaselineCpu& cpu, const GapCountsTicks& added, double counter_hertz) {
  const double seconds = static_cast<double>(added.sampled_ticks) / counter_hertz;
  if (seconds <= 0) return;
  cpu.sub_windows.push_back(sub_window_of(added.gaps, 1e9 / counter_hertz, seconds, added.interruptions,
                                          static_cast<double>(added.interrupted_ticks) / counter_hertz,
                                          kTailThresholdsNs));
}

void set_totals(BaselineCpu& cpu, const GapCountsTicks& total, double counter_hertz) {
  cpu.histogram = total.gaps;
  cpu.samples = total.gaps.total();
  cpu.sampled_seconds = static_cast<double>(total.sampled_ticks) / counter_hertz;
  cpu.stolen_seconds = static_cast<double>(total.interrupted_ticks) / counter_hertz;
  cpu.interruptions = total.interruptions;
}

void set_limits(BaselineCpu& cpu, std::uint64_t floor_ticks, std::uint64_t threshold_ticks, double counter_hertz) {
  const double ns_per_tick = 1e9 / counter_hertz;
  cpu.floor_ns = static_cast<double>(floor_ticks) * ns_per_tick;
  cpu.threshold_ns = static_cast<double>(threshold_ticks) * ns_per_tick;
}

void add_watch_windows(std::vector<BaselineWatched>& watched, const std::vector<WatchWindow>& windows,
                       const std::string& method, double outlier_threshold_ns) {
  for (const WatchWindow& w : windows) {
    if (w.seconds <= 0) continue;
    BaselineWatched* entry = entry_of_cpu(watched, w.cpu);
    if (entry == nullptr) {
      BaselineWatched added;
      added.cpu = w.cpu;
      added.method = method;
      added.outlier_threshold_ns = watch_method_pairs(method) ? outlier_threshold_ns : 0;
      entry = &watched.emplace_back(std::move(added));
    }
    entry->sub_windows.push_back(w);  // its figures: the cpu and why a count is unknown are the entry's
    if (!w.tail_unknown.empty() && entry->tail_unknown.find(w.tail_unknown) == std::string::npos)
      entry->tail_unknown += (entry->tail_unknown.empty() ? "" : "; ") + w.tail_unknown;
  }
}

void set_watched_totals(BaselineWatched& watched) {
  WatchedFigures& total = watched;
  const std::size_t thresholds =
      watched.sub_windows.empty() ? 0 : watched.sub_windows.front().over_threshold.size();
  total = WatchedFigures{};
  total.over_threshold.assign(thresholds, std::uint64_t{0});
  for (const WatchedFigures& w : watched.sub_windows) add_stretch(total, w);
}

namespace {

BaselineLoop baseline_loop(const LoopWindows& l) {
  BaselineLoop loop;
  loop.name = l.name;
  loop.cpu = l.cpu;
  loop.counter_hertz = l.counter_hertz;
  GapCountsTicks total;
  for (const LoopStepCounts& step : l.added) {
    const GapCountsTicks added = step.dense();
    add_sub_window(loop, added, l.counter_hertz);
    total.add(added);
  }
  set_totals(loop, total, l.counter_hertz);
  set_limits(loop, l.floor_ticks, l.threshold_ticks, l.counter_hertz);
  loop.max_ns = static_cast<double>(l.max_ticks) * (1e9 / l.counter_hertz);
  loop.error = l.error;
  return loop;
}

}  // namespace

void add_application_windows(Baseline& b, const ApplicationWindows& history, std::vector<std::string>& warnings) {
  for (const std::vector<WatchWindow>& reading : history.watch)
    add_watch_windows(b.watched, reading, history.watch_method, history.outlier_threshold_ns);
  std::map<std::string, std::string> files;  // by loop name, the file recorded
  for (const LoopWindows& l : history.loops) {
    if (l.counter_hertz <= 0) continue;
    const auto [file, added] = files.try_emplace(l.name, l.file);
    if (!added) {
      warnings.push_back("loop " + printable(l.name) + ": also in " + printable(l.file) +
                         ", left out of the baseline (recorded from " + printable(file->second) + ")");
      continue;
    }
    b.loops.push_back(baseline_loop(l));
  }
  for (BaselineWatched& w : b.watched) set_watched_totals(w);
}

BaselineProbe baseline_probe(const ProbeStatus& status) {
  return {status.name,         status.success,        status.error, status.result.tables,
          status.result.notes, status.result.samples, true};
}

Baseline record_baseline(const BaselineRecording& r, std::vector<BaselineCpu> cpus,
                         std::vector<BaselineProbe> probes) {
  Baseline b;
  b.created = utc_text(r.created_unix_seconds);
  b.jitterd_version = r.jitterd_version;
  b.fingerprint = baseline_fingerprint(r.machine, r.unknown_fields);
  b.tick_method = r.tick_method;
  b.counter_hertz = r.counter_hertz;
  b.duration_seconds = r.duration_seconds;
  b.sub_window_seconds = r.sub_window_seconds;
  b.tail_thresholds_ns = r.tail_thresholds_ns;
  b.histogram_bounds_ns = r.histogram_bounds_ns;
  b.configuration = {
      {"cpus", format_cpu_list(r.cpus)}, {"tick_method", r.tick_method}, {"counter_source", r.counter_source}};
  b.configuration.insert(b.configuration.end(), r.configuration.begin(), r.configuration.end());
  b.configuration.emplace_back("sub_window", fmt::format("{}s", r.sub_window_seconds));
  if (!r.unknown_fields.empty())
    b.configuration.emplace_back(kFingerprintUnknownKey,
                                 fmt::format("{}: {}", fmt::join(r.unknown_fields, ", "), r.unknown_why));
  b.cpus = std::move(cpus);
  b.probes = std::move(probes);
  return b;
}

}  // namespace jitterd
