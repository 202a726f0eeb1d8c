// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_ends.h"

#include <fmt/format.h>

#include <cmath>
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
        "no sampler series within {} before END: its scrapes stopped or paused inside the range (or it samples "
        "no CPU)",
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
        "no sampler series within {} before START although its samplers started before it ({}): its scrapes "
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

// `end` - `start` per series of one host into `out`; a counter that fell, or a series at START
// missing at END, is a reason to read the host in full. A series missing at START counts from
// zero (it began after START: a CPU added by a reload that kept the samplers).
template <typename Values, typename Subtract>
std::string difference(const std::map<CpuKey, Values>& start, const std::map<CpuKey, Values>& end,
                       const std::string& instance, const char* what, std::map<CpuKey, Values>& out,
                       Subtract subtract) {
  const CpuKey first{instance, -1};
  for (auto it = start.lower_bound(first); it != start.end() && it->first.first == instance; ++it)
    if (end.count(it->first) == 0)
      return fmt::format("its {} series of cpu {} has a sample at START and none at END", what, it->first.second);
  for (auto it = end.lower_bound(first); it != end.end() && it->first.first == instance; ++it) {
    const auto before = start.find(it->first);
    std::string fell;
    Values d = subtract(it->second, before == start.end() ? nullptr : &before->second, fell);
    if (!fell.empty())
      return fmt::format("its {} of cpu {} fell between the ends{} with no change of start time (a counter reset)",
                         what, it->first.second, fell);
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

// The host's increases into `out`, or why it must be read in full.
std::string host_increases(const CounterValues& start, const CounterValues& end, const std::string& instance,
                           CounterValues& out) {
  const auto counter = [](double e, const double* s, std::string& fell) { return counter_difference(e, s, fell); };
  std::string why =
      difference(start.buckets, end.buckets, instance, "gap histogram", out.buckets, bucket_difference);
  if (why.empty()) why = difference(start.sampled, end.sampled, instance, "sampled seconds", out.sampled, counter);
  if (why.empty())
    why =
        difference(start.interruptions, end.interruptions, instance, "interruptions", out.interruptions, counter);
  if (why.empty()) why = difference(start.stolen, end.stolen, instance, "stolen seconds", out.stolen, counter);
  return why;
}

// Marks the hosts a counter map shows.
template <typename Values>
void mark(const std::map<CpuKey, Values>& values, std::map<std::string, HostEnds>& hosts, bool HostEnds::*at) {
  for (const auto& [key, value] : values)
    if (const auto it = hosts.find(key.first); it != hosts.end()) it->second.*at = true;
}

void mark_all(const CounterValues& v, std::map<std::string, HostEnds>& hosts, bool HostEnds::*at) {
  mark(v.buckets, hosts, at);
  mark(v.sampled, hosts, at);
  mark(v.interruptions, hosts, at);
  mark(v.stolen, hosts, at);
}

void add_start_times(const Json& answer, const std::string& source, std::map<std::string, HostEnds>& hosts,
                     std::set<double> HostEnds::*started) {
  for (const PromSample& s : vector_samples(answer, source))
    if (const auto it = hosts.find(label_of(s.labels, "instance")); it != hosts.end())
      (it->second.*started).insert(std::round(s.value * 1000) / 1000);  // to the millisecond
}

}  // namespace

EndsResult ends_increases(const std::vector<std::string>& instances, const EndsAnswers& answers,
                          const TimeRange& range, double lookback, const std::string& source) {
  const CounterValues start = counter_values(answers.start, source), end = counter_values(answers.end, source);
  std::map<std::string, HostEnds> hosts;
  for (const std::string& instance : instances) hosts[instance];
  mark_all(start, hosts, &HostEnds::at_start);
  mark_all(end, hosts, &HostEnds::at_end);
  add_start_times(answers.started_at_start, source, hosts, &HostEnds::started_start);
  add_start_times(answers.started_at_end, source, hosts, &HostEnds::started_end);
  EndsResult result;
  for (const auto& [instance, h] : hosts) {
    CounterValues mine;
    std::string why = ends_doubt(h, range, lookback);
    if (why.empty()) why = host_increases(start, end, instance, mine);
    if (!why.empty()) {
      result.in_full.push_back({instance, std::move(why)});
      continue;
    }
    result.increases.buckets.merge(mine.buckets);
    result.increases.sampled.merge(mine.sampled);
    result.increases.interruptions.merge(mine.interruptions);
    result.increases.stolen.merge(mine.stolen);
    ++result.at_ends;
    result.started_inside += h.at_start ? 0 : 1;
  }
  return result;
}

}  // namespace jitterd
