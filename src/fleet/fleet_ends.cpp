// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_ends.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "host/text.h"

namespace jitterd {
namespace {

// A start time more than this after the instant it was read for is a clock ahead of Prometheus's
// (it is read from a scrape at or before that instant); the slack covers rounding.
constexpr double kClockSlackSeconds = 1;

std::string duration_text(double seconds) {
  return seconds >= 120 ? fmt::format("{:.0f} min", seconds / 60) : fmt::format("{:.0f} s", seconds);
}

std::string times_text(const std::set<double>& times) {
  std::vector<std::string> out;
  for (double t : times) out.push_back(utc_text(t));
  return fmt::format("{}", fmt::join(out, ", "));
}

// A clock ahead: a start time after the instant it was read for.
std::string clock_doubt(const std::set<double>& started, double at, const char* end) {
  if (started.empty() || *started.rbegin() <= at + kClockSlackSeconds) return "";
  return fmt::format(
      "its clock is ahead of Prometheus's: at {} ({}) its samplers say they started at {}, {:.0f} s later (ahead "
      "by at least that); a start time from that clock cannot tell a restart",
      end, utc_text(at), utc_text(*started.rbegin()), *started.rbegin() - at);
}

}  // namespace

std::string ends_doubt(const HostEnds& h, const TimeRange& range, double lookback) {
  if (!h.at_end)
    return fmt::format(
        "no sampler, watch or loop series within {} before END: its scrapes stopped or paused inside the range "
        "(or it samples, watches and loops nothing)",
        duration_text(lookback));
  if (h.started_end.empty())
    return fmt::format("no {} at END (jitterd 0.1.0 and older export none): a counter reset cannot be told",
                       kSamplerStartSeries);
  if (std::string clock = clock_doubt(h.started_end, range.end, "END"); !clock.empty()) return clock;
  if (std::string clock = clock_doubt(h.started_start, range.start, "START"); !clock.empty()) return clock;
  if (h.started_end.size() > 1)
    return fmt::format("its series disagree on when its samplers started ({}) at END", times_text(h.started_end));
  if (!h.at_start) {
    if (*h.started_end.begin() >= range.start) return "";  // its counters began at zero inside the range
    return fmt::format(
        "no sampler, watch or loop series within {} before START although its samplers started before it ({}): "
        "its scrapes "
        "began inside the range",
        duration_text(lookback), utc_text(*h.started_end.begin()));
  }
  if (h.started_start.empty())
    return fmt::format("no {} at START: a counter reset cannot be told", kSamplerStartSeries);
  if (h.started_start != h.started_end)
    return fmt::format("restarted inside the range: its samplers started at {} (at START: {})",
                       times_text(h.started_end), times_text(h.started_start));
  return "";
}

namespace {

// The first key of a host's series in a map by key.
CpuKey first_key(const CpuKey& k) { return {k.first, std::numeric_limits<int>::min()}; }
WatchKey first_key(const WatchKey& k) { return {std::get<0>(k), std::numeric_limits<int>::min(), ""}; }

// `end` - `start` per series of one host into `out`; a counter that fell, or a series at START
// missing at END, is a reason to read the host in full. A series missing at START counts from
// zero (it began after START: a CPU added by a reload that kept the samplers). `unit` names a
// series' unit in the reasons ("cpu 3", "loop \"rx0\"").
template <typename Key, typename Values, typename Subtract, typename Unit>
std::string difference(const std::map<Key, Values>& start, const std::map<Key, Values>& end,
                       const std::string& instance, const char* what, std::map<Key, Values>& out,
                       Subtract subtract, Unit unit) {
  Key first;
  std::get<0>(first) = instance;
  first = first_key(first);
  for (auto it = start.lower_bound(first); it != start.end() && std::get<0>(it->first) == instance; ++it)
    if (end.count(it->first) == 0)
      return fmt::format("its {} series of {} has a sample at START and none at END", what, unit(it->first));
  for (auto it = end.lower_bound(first); it != end.end() && std::get<0>(it->first) == instance; ++it) {
    const auto before = start.find(it->first);
    std::string fell;
    Values d = subtract(it->second, before == start.end() ? nullptr : &before->second, fell);
    if (!fell.empty())
      return fmt::format("its {} of {} fell between the ends{} with no change of start time (a counter reset)",
                         what, unit(it->first), fell);
    out[it->first] = std::move(d);
  }
  return "";
}

double counter_difference(double end, const double* start, std::string& fell) {
  const double before = start == nullptr ? 0 : *start;
  if (end < before) fell = fmt::format(" ({:.9g} to {:.9g})", before, end);
  return end - before;
}

std::map<double, double> bucket_difference(const std::map<double, double>& end,
                                           const std::map<double, double>* start, std::string& fell) {
  std::map<double, double> out;
  for (const auto& [le, count] : end) {
    double before = 0;
    if (start != nullptr)
      if (const auto it = start->find(le); it != start->end()) before = it->second;
    if (count < before && fell.empty())
      fell = fmt::format(" (bucket le {} ns: {:.9g} to {:.9g})", le, before, count);
    out[le] = count - before;
  }
  if (start != nullptr)
    for (const auto& [le, count] : *start)
      if (end.count(le) == 0 && fell.empty()) fell = fmt::format(" (bucket le {} ns: gone at END)", le);
  return out;
}

std::string short_name(const std::string& name) {
  return name.size() > 60 ? fmt::format("\"{}...\"", name.substr(0, 60)) : fmt::format("\"{}\"", name);
}

// The host's increases into `out`, or why it must be read in full; `unit` names a unit ("cpu 3",
// "loop \"rx0\"").
template <typename Unit>
std::string host_increases(const CounterValues& start, const CounterValues& end, const std::string& instance,
                           CounterValues& out, Unit unit, const char* prefix) {
  const std::string gaps = std::string(prefix) + "gap histogram",
                    sampled = std::string(prefix) + "sampled seconds",
                    interruptions = std::string(prefix) + "interruptions",
                    stolen = std::string(prefix) + "stolen seconds";
  std::string why =
      difference(start.buckets, end.buckets, instance, gaps.c_str(), out.buckets, bucket_difference, unit);
  if (why.empty())
    why = difference(start.sampled, end.sampled, instance, sampled.c_str(), out.sampled, counter_difference, unit);
  if (why.empty())
    why = difference(start.interruptions, end.interruptions, instance, interruptions.c_str(), out.interruptions,
                     counter_difference, unit);
  if (why.empty())
    why = difference(start.stolen, end.stolen, instance, stolen.c_str(), out.stolen, counter_difference, unit);
  return why;
}

std::string sampled_increases(const CounterValues& start, const CounterValues& end, const std::string& instance,
                              CounterValues& out) {
  return host_increases(
      start, end, instance, out, [](const CpuKey& k) { return fmt::format("cpu {}", k.second); }, "");
}

// The application's side of the host: the watched CPUs' series, then the loops'.
std::string application_increases(const ApplicationValues& start, const ApplicationValues& end,
                                  const std::string& instance, const std::vector<std::string>& loop_names,
                                  ApplicationValues& out) {
  for (std::size_t f = 0; f < kWatchFamilyCount; ++f) {
    const auto unit = [](const WatchKey& k) {
      return std::get<2>(k).empty() ? fmt::format("watched cpu {}", std::get<1>(k))
                                    : fmt::format("watched cpu {} ({})", std::get<1>(k), std::get<2>(k));
    };
    if (std::string why = difference(start.watch[f], end.watch[f], instance, kWatchFamilies[f].metric,
                                     out.watch[f], counter_difference, unit);
        !why.empty())
      return why;
  }
  return host_increases(
      start.loops, end.loops, instance, out.loops,
      [&](const CpuKey& k) {
        return "loop " + (k.second >= 0 && static_cast<std::size_t>(k.second) < loop_names.size()
                              ? short_name(loop_names[static_cast<std::size_t>(k.second)])
                              : std::string("?"));
      },
      "loop ");
}

// Marks the hosts a counter map shows.
template <typename Key, typename Values>
void mark(const std::map<Key, Values>& values, std::map<std::string, HostEnds>& hosts, bool HostEnds::*at) {
  for (const auto& [key, value] : values)
    if (const auto it = hosts.find(std::get<0>(key)); it != hosts.end()) it->second.*at = true;
}

void mark_all(const CounterValues& v, std::map<std::string, HostEnds>& hosts, bool HostEnds::*at) {
  mark(v.buckets, hosts, at);
  mark(v.sampled, hosts, at);
  mark(v.interruptions, hosts, at);
  mark(v.stolen, hosts, at);
}

void mark_all(const ApplicationValues& v, std::map<std::string, HostEnds>& hosts, bool HostEnds::*at) {
  for (const auto& family : v.watch) mark(family, hosts, at);
  mark_all(v.loops, hosts, at);
}

void add_start_times(const Json& answer, const std::string& source, std::map<std::string, HostEnds>& hosts,
                     std::set<double> HostEnds::*started) {
  for (const PromSample& s : vector_samples(answer, source))
    if (const auto it = hosts.find(label_of(s.labels, "instance")); it != hosts.end())
      (it->second.*started).insert(std::round(s.value * 1000) / 1000);  // to the millisecond
}

// Per host, why its watch or a loop started again inside the range (its time counter fell at one of
// the 100 instants read), or nothing.
std::map<std::string, std::string> application_restarts(const EndsAnswers& answers, const std::string& source) {
  std::map<std::string, std::string> out;
  if (!answers.watch_restarts.is_null())
    for (const PromSample& s : vector_samples(answers.watch_restarts, source))
      if (s.value > 0)
        out.emplace(label_of(s.labels, "instance"),
                    fmt::format("its watch started again inside the range ({} fell {:.0f} times between 100 "
                                "instants of the range; its samplers' start time did not change)",
                                kWatchClockSeries, s.value));
  if (!answers.loop_restarts.is_null())
    for (const PromSample& s : vector_samples(answers.loop_restarts, source))
      if (s.value > 0)
        out.emplace(label_of(s.labels, "instance"),
                    fmt::format("its loop {} started again inside the range (its {} fell {:.0f} times between 100 "
                                "instants of the range: the application restarted it)",
                                short_name(label_of(s.labels, "loop")), kLoopClockSeries, s.value));
  return out;
}

// Where the host's counters began counting: START, or its samplers' start inside the range when
// it has no sample at START (its counters were zero then).
double counted_from(const HostEnds& h, const TimeRange& range) {
  if (h.at_start || h.started_end.empty()) return range.start;
  return std::clamp(*h.started_end.begin(), range.start, range.end);
}

void merge_into(CounterValues& to, CounterValues& from) {
  to.buckets.merge(from.buckets);
  to.sampled.merge(from.sampled);
  to.interruptions.merge(from.interruptions);
  to.stolen.merge(from.stolen);
}

}  // namespace

EndsResult ends_increases(const std::vector<std::string>& instances, const EndsAnswers& answers,
                          const TimeRange& range, double lookback, const std::string& source, LoopNames& loops) {
  const CounterValues start = counter_values(answers.start, source), end = counter_values(answers.end, source);
  const ApplicationValues app_start = application_values(answers.application_start, source, loops),
                          app_end = application_values(answers.application_end, source, loops);
  const std::map<std::string, std::string> restarts = application_restarts(answers, source);
  std::map<std::string, HostEnds> hosts;
  for (const std::string& instance : instances) hosts[instance];
  mark_all(start, hosts, &HostEnds::at_start);
  mark_all(end, hosts, &HostEnds::at_end);
  mark_all(app_start, hosts, &HostEnds::at_start);
  mark_all(app_end, hosts, &HostEnds::at_end);
  add_start_times(answers.started_at_start, source, hosts, &HostEnds::started_start);
  add_start_times(answers.started_at_end, source, hosts, &HostEnds::started_end);
  EndsResult result;
  for (const auto& [instance, h] : hosts) {
    result.counted[instance] = range.end - counted_from(h, range);
    CounterValues mine;
    ApplicationValues app;
    std::string why = ends_doubt(h, range, lookback);
    if (why.empty()) why = sampled_increases(start, end, instance, mine);
    if (const auto restart = restarts.find(instance); why.empty() && restart != restarts.end())
      why = restart->second;
    if (why.empty()) why = application_increases(app_start, app_end, instance, loops.names(), app);
    if (!why.empty()) {
      result.in_full.push_back({instance, std::move(why)});
      continue;
    }
    merge_into(result.increases, mine);
    for (std::size_t f = 0; f < kWatchFamilyCount; ++f) result.application.watch[f].merge(app.watch[f]);
    merge_into(result.application.loops, app.loops);
    ++result.at_ends;
    result.started_inside += h.at_start ? 0 : 1;
  }
  return result;
}

}  // namespace jitterd
