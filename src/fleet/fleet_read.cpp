// SPDX-License-Identifier: Apache-2.0
// read_fleet_history (fleet/fleet_history.h): the queries, in batches, the ends first and the full
// reads of the hosts whose ends cannot be trusted after.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "fleet/fleet_answers.h"
#include "fleet/fleet_application.h"
#include "fleet/fleet_ends.h"
#include "fleet/fleet_history.h"
#include "host/text.h"

namespace jitterd {
namespace {

constexpr std::size_t kMostHostsPerBatch = 250;

std::string ms(double seconds) { return fmt::format("{}ms", static_cast<long long>(std::ceil(seconds * 1000))); }

std::string selector(const std::string& metric, const std::string& where, const std::string& more) {
  return fmt::format("{}{{{}{}{}}}", metric, where, !where.empty() && !more.empty() ? "," : "", more);
}

// One instant query; a refusal as bad data is a query form the server does not evaluate, said so.
Json ask(const PrometheusClient& client, const std::string& query, double time, std::size_t& queries) {
  ++queries;
  try {
    return client.query(query, time);
  } catch (const BaselineError& e) {
    if (std::string_view(e.what()).find("with error bad_data") == std::string_view::npos) throw;
    throw BaselineError(
        kExitBadBaseline,
        fmt::format("{}: it does not evaluate {}: jitterd fleet needs last_over_time, subqueries and "
                    "increase (Prometheus 2.26 or later, or an engine with the same PromQL) ({})",
                    client.url(), query, e.what()));
  }
}

// The scrape interval (seconds): the median over up to three hosts (the first, middle and last
// instance) of a window's length over the intervals between the scrapes of its fingerprint series
// in the window, which ends at END: an hour (the range where shorter), widened eightfold while no
// host has two scrapes in it (every scrape of those three series was read before: 3,000 samples a
// read at 1,000 scrapes, growing with the density; now at most an hour's worth unless the scrapes
// are sparser; an hour holds 60 scrapes at 1 minute, enough that one scrape more or less, as
// engines count a window's ends, moves the interval by under 2%). A host scraped for part of the window only makes it longer: a longer lookback, more
// samples read, the same figures.
double scrape_interval(const PrometheusClient& client, const FleetSelection& selection, std::size_t& queries) {
  const TimeRange& r = selection.range;
  const double length = r.end - r.start;
  ++queries;
  std::vector<std::string> instances = client.label_values(
      "instance", selector(kFingerprintSeries, selection.where, ""), std::pair{r.start, r.end});
  if (instances.empty()) throw_no_host(selection, client.url());
  std::sort(instances.begin(), instances.end());
  std::vector<std::string> probes{instances.front(), instances[instances.size() / 2], instances.back()};
  probes.erase(std::unique(probes.begin(), probes.end()), probes.end());
  constexpr double kFirstWindow = 3600, kWiden = 8;
  for (double window = std::min(length, kFirstWindow);; window = std::min(length, window * kWiden)) {
    const std::string query =
        fmt::format("sum by (instance) (count_over_time({}[{}]))",
                    selector(kFingerprintSeries, selection.where, instance_matcher(probes)), ms(window));
    std::vector<double> intervals;
    for (const PromSample& s :
         vector_samples(ask(client, query, r.end, queries), client.url() + " (query " + query + ")"))
      if (s.value >= 2) intervals.push_back(window / (s.value - 1));  // n scrapes, n - 1 intervals
    if (!intervals.empty()) {
      std::sort(intervals.begin(), intervals.end());
      return intervals[intervals.size() / 2];
    }
    if (window >= length) return length;  // at most one scrape of each in the range
  }
}

// Who is in the fleet: the fingerprint series at up to 100 instants of the range (each read with
// the lookback), so that the cost does not grow with the scrapes; fewer instants where Prometheus
// refuses so many.
FleetHistory fleet_members(const PrometheusClient& client, const FleetSelection& selection, double interval,
                           double lookback, std::size_t& queries) {
  const double length = selection.range.end - selection.range.start;
  for (double instants = 100;; instants = std::floor(instants / 4)) {
    const std::string query = fmt::format("count_over_time(last_over_time({}[{}])[{}:{}])",
                                          selector(kFingerprintSeries, selection.where, ""), ms(lookback),
                                          ms(length), ms(std::max(interval, length / instants)));
    try {
      FleetHistory history = fleet_hosts(ask(client, query, selection.range.end, queries), selection,
                                         fmt::format("{} (query {})", client.url(), query));
      if (instants < 100)
        history.notes.push_back(fmt::format(
            "the server refused the fleet's fingerprints at 100 instants of the range as too big; read at {:.0f}",
            instants));
      return history;
    } catch (const QueryTooLarge&) {
      if (instants <= 2) throw;
    }
  }
}

// `read` over `instances` in batches of at most `batch`, a batch the server refuses as too big
// (compare/prometheus_client.h QueryTooLarge) halved and asked again.
void in_batches(const std::vector<std::string>& instances, std::size_t batch, const PrometheusClient& client,
                const FleetSelection& selection, FleetHistory& history,
                const std::function<void(const std::vector<std::string>&, const std::string&)>& read) {
  for (std::size_t start = 0; start < instances.size();) {
    const std::size_t n = std::min(batch, instances.size() - start);
    const std::vector<std::string> some(instances.begin() + static_cast<std::ptrdiff_t>(start),
                                        instances.begin() + static_cast<std::ptrdiff_t>(start + n));
    try {
      read(some, fmt::format("{} (hosts {} to {})", client.url(), some.front(), some.back()));
    } catch (const QueryTooLarge& e) {
      if (n == 1)
        throw BaselineError(kExitBadBaseline,
                            fmt::format("{}: the server refuses the query of one host ({}) over {} for too many "
                                        "samples: shorten the range or raise its limit (Prometheus "
                                        "--query.max-samples, VictoriaMetrics -search.maxSamplesPerQuery or "
                                        "-search.maxUniqueTimeseries) ({})",
                                        client.url(), some.front(), selection.range.text, e.what()));
      batch = std::max<std::size_t>(1, n / 2);
      history.notes.push_back(fmt::format(
          "the server refused a batch of {} hosts for too many samples or series; asked again {} hosts at a time",
          n, batch));
      continue;
    }
    start += n;
  }
}

// Asks one family of a batch: `read(metric, by)`, summed by the labels `by`.
using FamilyReader = std::function<Json(const std::string&, const std::string&)>;

// A sampled CPU's four families (`family` "sampler", `unit` "cpu"), or a loop's, named alike
// ("loop", "loop"), each summed by instance and unit (the gap histogram by le too).
BatchAnswers unit_answers(const FamilyReader& read, const std::string& family, const std::string& unit) {
  const std::string prefix = "jitterd_" + family + "_", by = "instance, " + unit;
  BatchAnswers a;
  a.buckets = read(prefix + "gap_seconds_bucket", by + ", le");
  a.sampled = read(prefix + "sampled_seconds_total", by);
  a.interruptions = read(prefix + "interruptions_total", by);
  a.stolen = read(prefix + "stolen_seconds_total", by);
  return a;
}

// The application's side of a batch (fleet/fleet_application.h), each family summed by instance,
// unit and part.
// `watches` and `loops` false: that half is not asked for (null answers, read as empty).
ApplicationAnswers application_answers(const FamilyReader& read, bool watches = true, bool loops = true) {
  ApplicationAnswers a;
  for (std::size_t f = 0; watches && f < kWatchFamilyCount; ++f)
    a.watch[f] = read(kWatchFamilies[f].metric, *kWatchFamilies[f].part == '\0'
                                                    ? std::string("instance, cpu")
                                                    : fmt::format("instance, cpu, {}", kWatchFamilies[f].part));
  if (loops) a.loops = unit_answers(read, "loop", "loop");
  return a;
}

// Whether an instant-vector answer holds any series (a malformed one counts as answered, so that
// its parse, later, says what is wrong with it).
bool answered(const Json& data) {
  if (!data.is_object() || !data.contains("result") || !data["result"].is_array()) return true;
  return !data["result"].empty();
}

// The counters of a batch at the range's two ends, and the samplers' start times there; the falls
// of the watch's and the loops' time counters between 100 instants of the range.
EndsAnswers ends_answers(const PrometheusClient& client, const FleetSelection& selection,
                         const std::vector<std::string>& instances, double lookback, double interval,
                         std::size_t& queries) {
  const std::string matcher = instance_matcher(instances);
  const auto at = [&](const std::string& metric, const std::string& by, double time) {
    const std::string last = fmt::format("last_over_time({}[{}])", selector(metric, "", matcher), ms(lookback));
    return ask(client, by.empty() ? last : fmt::format("sum by ({}) ({})", by, last), time, queries);
  };
  const auto at_time = [&](double time) {
    return [&at, time](const std::string& metric, const std::string& by) { return at(metric, by, time); };
  };
  EndsAnswers a;
  a.start = unit_answers(at_time(selection.range.start), "sampler", "cpu");
  a.end = unit_answers(at_time(selection.range.end), "sampler", "cpu");
  a.started_at_start = at(kSamplerStartSeries, "", selection.range.start);
  a.started_at_end = at(kSamplerStartSeries, "", selection.range.end);
  // 100 instants, each the last scrape within the lookback: the cost does not grow with the scrapes.
  const double length = selection.range.end - selection.range.start;
  const auto restarts = [&](const char* metric, const char* by) {
    return ask(
        client,
        fmt::format("sum by ({}) (resets(last_over_time({}[{}])[{}:{}]))", by, selector(metric, "", matcher),
                    ms(lookback), ms(length), ms(std::max(interval, length / 100))),
        selection.range.end, queries);
  };
  a.watch_restarts = restarts(kWatchClockSeries, "instance");
  a.loop_restarts = restarts(kLoopClockSeries, "instance, loop");
  // The restart reads answer for every host with a watch (a loop) at any of the 100 instants: where
  // they name none, the batch's watch (loop) families are not asked for (left null: empty), which
  // spares a fleet without watches or loops 22 queries a batch.
  const bool watches = answered(a.watch_restarts), runs_loops = answered(a.loop_restarts);
  a.application_start = application_answers(at_time(selection.range.start), watches, runs_loops);
  a.application_end = application_answers(at_time(selection.range.end), watches, runs_loops);
  return a;
}

// A batch read in full: each family's increase() over the range.
FamilyReader increase_reader(const PrometheusClient& client, const FleetSelection& selection,
                             const std::vector<std::string>& instances, std::size_t& queries) {
  const std::string matcher = instance_matcher(instances), range = ms(selection.range.end - selection.range.start);
  return [&client, &selection, &queries, matcher, range](const std::string& metric, const std::string& by) {
    return ask(client, fmt::format("sum by ({}) (increase({}{{{}}}[{}]))", by, metric, matcher, range),
               selection.range.end, queries);
  };
}

// Hosts per batch read in full: the samples a batch loads (hosts x ~400 series of 16 CPUs x 25
// buckets x the scrapes in the range) under 20 million, well inside the default --query.max-samples.
std::size_t full_batch_size(double scrapes_per_series) {
  const double per_host = 400 * std::max(1.0, scrapes_per_series);
  return static_cast<std::size_t>(std::clamp(std::floor(20e6 / per_host), 1.0, double(kMostHostsPerBatch)));
}

// The instances in cohort order, so that a batch holds one cohort's hosts where it can.
std::vector<std::string> cohort_order(const FleetHistory& history, const std::string& by) {
  std::vector<std::pair<std::string, std::string>> ordered;  // cohort, instance
  for (const FleetHost& h : history.hosts) ordered.emplace_back(label_of(h.fingerprint, by), h.instance);
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::string> instances;
  for (auto& [cohort, instance] : ordered) instances.push_back(std::move(instance));
  return instances;
}

void leave_out_hosts_without_figures(FleetHistory& history, const PrometheusClient& client,
                                     const FleetSelection& selection) {
  const auto no_figures = std::remove_if(history.hosts.begin(), history.hosts.end(), [&](const FleetHost& h) {
    if (!h.cpus.empty() || !h.watched.empty() || !h.loops.empty()) return false;
    history.left_out.push_back(fmt::format(
        "{}: left out, no sampled CPU with gap-histogram samples, watched CPU or loop in the range", h.instance));
    return true;
  });
  history.hosts.erase(no_figures, history.hosts.end());
  if (history.hosts.empty())
    throw BaselineError(kExitBadBaseline,
                        fmt::format("{}: empty range: no host has sampler, watch or loop series between {} and {}",
                                    client.url(), utc_text(selection.range.start), utc_text(selection.range.end)));
}

}  // namespace

FleetHistory read_fleet_history(const PrometheusClient& client, const FleetSelection& selection) {
  std::size_t queries = 0;
  const double length = selection.range.end - selection.range.start;
  const double interval = scrape_interval(client, selection, queries);
  // Three intervals: two scrapes may be missed at an end. (Prometheus's own lookback, 5 minutes,
  // would load 20 samples a series at a 15 s interval and miss every one beyond 5 minutes.)
  const double lookback = std::max(3 * interval, 1.0);
  FleetHistory history = fleet_members(client, selection, interval, lookback, queries);
  history.most_scrapes = length / interval;
  history.reads.scrape_interval = interval;
  history.reads.lookback = lookback;
  LoopNames loops(history.loop_names);
  in_batches(cohort_order(history, selection.by), kMostHostsPerBatch, client, selection, history,
             [&](const std::vector<std::string>& some, const std::string& source) {
               EndsResult ends =
                   ends_increases(some, ends_answers(client, selection, some, lookback, interval, queries),
                                  selection.range, lookback, source, loops);
               for (const auto& [instance, seconds] : ends.counted)
                 if (FleetHost* host = host_named(history, instance)) host->counted_seconds = seconds;
               add_figures(history, ends.increases);
               add_application_figures(history, ends.application);
               history.reads.at_ends += ends.at_ends;
               history.reads.started_inside += ends.started_inside;
               for (FleetRead& read : ends.in_full) history.reads.in_full.push_back(std::move(read));
             });
  std::vector<std::string> full;
  for (const FleetRead& read : history.reads.in_full) full.push_back(read.instance);
  in_batches(full, full_batch_size(history.most_scrapes), client, selection, history,
             [&](const std::vector<std::string>& some, const std::string& source) {
               const FamilyReader increase = increase_reader(client, selection, some, queries);
               add_batch_figures(history, unit_answers(increase, "sampler", "cpu"), source);
               add_application_figures(history, application_values(application_answers(increase), source, loops));
             });
  if (std::string passed = loops.passed_over(); !passed.empty()) history.notes.push_back(std::move(passed));
  history.queries = queries;
  leave_out_hosts_without_figures(history, client, selection);
  return history;
}

}  // namespace jitterd
