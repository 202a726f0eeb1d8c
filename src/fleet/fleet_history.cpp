// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "host/text.h"
#include "report/baseline_file.h"

namespace jitterd {
namespace {

// One sample of an instant vector.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

[[noreturn]] void wrong_shape(const std::string& source, const std::string& what) {
  throw BaselineError(kExitBadBaseline,
                      fmt::format("{}: not a Prometheus instant-vector answer: {}", source, what));
}

std::vector<Sample> vector_samples(const Json& data, const std::string& source) {
  if (!data.is_object() || !data.contains("resultType") || data["resultType"] != "vector" ||
      !data.contains("result") || !data["result"].is_array())
    wrong_shape(source, "no vector result");
  std::vector<Sample> out;
  for (const Json& item : data["result"]) {
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object() || !item.contains("value") ||
        !item["value"].is_array() || item["value"].size() != 2 || !item["value"][1].is_string())
      wrong_shape(source, "a result without \"metric\" and \"value\": [time, \"value\"]");
    Sample s;
    for (const auto& [name, value] : item["metric"].items())
      if (value.is_string()) s.labels[name] = value.get<std::string>();
    const std::string text = item["value"][1].get<std::string>();
    char* end = nullptr;
    s.value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || std::isinf(s.value))
      wrong_shape(source, fmt::format("a sample value \"{}\" that is not a finite number", text.substr(0, 60)));
    if (!std::isnan(s.value)) out.push_back(std::move(s));
  }
  return out;
}

std::string label(const std::map<std::string, std::string>& labels, const std::string& name) {
  const auto it = labels.find(name);
  return it == labels.end() ? "" : it->second;
}

std::string promql_string(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Which label sets an instance showed over the range, and what to do with it.
void settle_host(FleetHistory& history, const std::string& instance, const std::vector<const Sample*>& sets,
                 const std::vector<std::string>& identity_fields) {
  std::vector<std::string> changed;
  for (const std::string& field : identity_fields) {
    std::set<std::string> values;
    for (const Sample* s : sets) values.insert(label(s->labels, field));
    if (values.size() > 1) changed.push_back(fmt::format("{} \"{}\"", field, fmt::join(values, "\", \"")));
  }
  if (!changed.empty()) {
    history.left_out.push_back(
        fmt::format("{}: left out, its {} changed inside the range", instance, fmt::join(changed, "; ")));
    return;
  }
  const Sample* most = *std::max_element(sets.begin(), sets.end(),
                                         [](const Sample* a, const Sample* b) { return a->value < b->value; });
  if (sets.size() > 1)
    history.notes.push_back(
        fmt::format("{}: its fingerprint changed inside the range (in fields other than the cohort's and the "
                    "class's); the one scraped most is used",
                    instance));
  FleetHost host{instance, most->labels, {}};
  host.fingerprint.erase("__name__");
  host.fingerprint.erase("instance");
  history.hosts.push_back(std::move(host));
}

}  // namespace

FleetHistory fleet_hosts(const Json& data, const FleetSelection& selection, const std::string& source) {
  const std::vector<Sample> samples = vector_samples(data, source);
  if (samples.empty())
    throw BaselineError(
        kExitBadBaseline,
        fmt::format("{}: no {} series{} between {} and {}: no jitterd host to compare", source, kFingerprintSeries,
                    selection.where.empty() ? "" : " matching " + selection.where, utc_text(selection.range.start),
                    utc_text(selection.range.end)));
  std::set<std::string> fields;
  std::map<std::string, std::vector<const Sample*>> by_instance;
  for (const Sample& s : samples) {
    for (const auto& [name, value] : s.labels)
      if (name != "__name__" && name != "instance") fields.insert(name);
    const std::string instance = label(s.labels, "instance");
    if (instance.empty())
      wrong_shape(source, fmt::format("a {} series without an instance label", kFingerprintSeries));
    by_instance[instance].push_back(&s);
  }
  std::vector<std::string> identity{selection.by, "cpu_model"};
  identity.insert(identity.end(), selection.class_fields.begin(), selection.class_fields.end());
  for (const std::string& field : identity)
    if (fields.count(field) == 0)
      throw BaselineError(kExitFleetUsage,
                          fmt::format("{}: no {} series has a label \"{}\" (given to {}); its labels: {}", source,
                                      kFingerprintSeries, field, field == selection.by ? "--by" : "--class",
                                      fmt::join(fields, ", ")));
  FleetHistory history;
  for (const Sample& s : samples) history.most_scrapes = std::max(history.most_scrapes, s.value);
  for (const auto& [instance, sets] : by_instance) settle_host(history, instance, sets, identity);
  return history;
}

std::string instance_matcher(const std::vector<std::string>& instances) {
  std::string pattern;
  for (const std::string& instance : instances) {
    if (!pattern.empty()) pattern += '|';
    for (char c : instance) {
      if (std::string_view(".^$*+?()[]{}|\\").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
    }
  }
  return fmt::format("instance=~\"{}\"", promql_string(pattern));
}

namespace {

using CpuKey = std::pair<std::string, int>;  // instance, cpu

int cpu_of(const Sample& s, const std::string& source) {
  const std::string text = label(s.labels, "cpu");
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos)
    wrong_shape(source, "a sampler series without a cpu label");
  return std::stoi(text);
}

std::map<CpuKey, double> per_cpu(const Json& data, const std::string& source) {
  std::map<CpuKey, double> out;
  for (const Sample& s : vector_samples(data, source))
    out[{label(s.labels, "instance"), cpu_of(s, source)}] += s.value;
  return out;
}

double bound_ns(double seconds) { return std::round(seconds * 1e12) / 1e3; }

double quantile_ns(const std::map<double, double>& cumulative, double q) {
  const double total = cumulative.rbegin()->second;
  const double rank = q * total;
  double finite = 0;
  for (const auto& [le, count] : cumulative) {
    if (std::isinf(le)) break;
    finite = le;
    if (count >= rank - 1e-9 * total) return le;
  }
  return finite;
}

std::string threshold_name(double ns) {
  return ns >= 1e6 ? fmt::format("gaps_over_{}ms_per_s", ns / 1e6) : fmt::format("gaps_over_{}us_per_s", ns / 1e3);
}

// The host of that instance, by binary search (history.hosts is by instance): a map of every host
// rebuilt per batch made reading the answers quadratic in hosts.
FleetHost* host_named(FleetHistory& history, const std::string& instance) {
  auto& hosts = history.hosts;
  const auto at = std::lower_bound(hosts.begin(), hosts.end(), instance,
                                   [](const FleetHost& h, const std::string& name) { return h.instance < name; });
  return at != hosts.end() && at->instance == instance ? &*at : nullptr;
}

}  // namespace

void add_batch_figures(FleetHistory& history, const BatchAnswers& answers, const std::string& source) {
  std::map<CpuKey, std::map<double, double>> buckets;
  std::set<double> bounds;
  for (const Sample& s : vector_samples(answers.buckets, source)) {
    const std::string le = label(s.labels, "le");
    char* end = nullptr;
    const double bound = std::strtod(le.c_str(), &end);
    if (le.empty() || *end != '\0' || !(bound > 0))
      wrong_shape(source, fmt::format("a bucket with le=\"{}\"", le));
    const double key = std::isinf(bound) ? bound : bound_ns(bound);
    if (!std::isinf(key)) bounds.insert(key);
    buckets[{label(s.labels, "instance"), cpu_of(s, source)}][key] += s.value;
  }
  if (history.figure_names.empty() && !bounds.empty()) {
    history.figure_names = {"p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "interruptions_per_s", "stolen_share"};
    for (double threshold : kTailThresholdsNs) {
      const auto at = bounds.lower_bound(threshold);
      if (at != bounds.end() && std::find(history.figure_names.begin(), history.figure_names.end(),
                                          threshold_name(*at)) == history.figure_names.end())
        history.figure_names.push_back(threshold_name(*at));
    }
  }
  const auto sampled = per_cpu(answers.sampled, source), interruptions = per_cpu(answers.interruptions, source),
             stolen = per_cpu(answers.stolen, source);
  for (auto& [cpu_key, cumulative] : buckets) {
    const CpuKey key = cpu_key;  // a lambda below uses it (clang 14 cannot capture a binding)
    FleetHost* const host = host_named(history, key.first);
    const auto seconds = sampled.find(key);
    if (host == nullptr || seconds == sampled.end() || !(seconds->second > 0)) continue;
    if (!std::isinf(cumulative.rbegin()->first) || !(cumulative.rbegin()->second > 0)) continue;
    double running = 0;  // cumulative counts never fall (extrapolation may make them uneven)
    for (auto& [le, count] : cumulative) count = running = std::max(running, count);
    const double s = seconds->second, total = cumulative.rbegin()->second;
    std::vector<double> values{quantile_ns(cumulative, 0.5), quantile_ns(cumulative, 0.99),
                               quantile_ns(cumulative, 0.999), quantile_ns(cumulative, 0.9999)};
    const auto count_of = [&](const std::map<CpuKey, double>& m) {
      const auto it = m.find(key);
      return it == m.end() ? NAN : it->second;
    };
    values.push_back(count_of(interruptions) / s);
    values.push_back(count_of(stolen) / s);
    for (std::size_t i = 6; i < history.figure_names.size(); ++i) {
      double over = NAN;
      for (const auto& [le, count] : cumulative)
        if (!std::isinf(le) && threshold_name(le) == history.figure_names[i]) over = (total - count) / s;
      values.push_back(over);
    }
    host->cpus[key.second] = std::move(values);
  }
}

namespace {

std::string range_text(const TimeRange& range) {
  return fmt::format("{}ms", static_cast<long long>(std::ceil((range.end - range.start) * 1000)));
}

// The four answers of one batch of hosts.
BatchAnswers batch_answers(const PrometheusClient& client, const FleetSelection& selection,
                           const std::vector<std::string>& instances, std::size_t& queries) {
  const std::string matcher = instance_matcher(instances), range = range_text(selection.range);
  const auto ask = [&](const char* metric, const char* by) {
    ++queries;
    return client.query(fmt::format("sum by ({}) (increase({}{{{}}}[{}]))", by, metric, matcher, range),
                        selection.range.end);
  };
  BatchAnswers a;
  a.buckets = ask("jitterd_sampler_gap_seconds_bucket", "instance, cpu, le");
  a.sampled = ask("jitterd_sampler_sampled_seconds_total", "instance, cpu");
  a.interruptions = ask("jitterd_sampler_interruptions_total", "instance, cpu");
  a.stolen = ask("jitterd_sampler_stolen_seconds_total", "instance, cpu");
  return a;
}

// Hosts per batch: the samples a batch loads (hosts x ~400 series of 16 CPUs x 25 buckets x the
// scrapes in the range) under 20 million, well inside the default --query.max-samples.
std::size_t first_batch_size(double scrapes_per_series) {
  const double per_host = 400 * std::max(1.0, scrapes_per_series);
  return static_cast<std::size_t>(std::clamp(std::floor(20e6 / per_host), 1.0, 250.0));
}

}  // namespace

FleetHistory read_fleet_history(const PrometheusClient& client, const FleetSelection& selection) {
  const std::string fingerprint_query = fmt::format("count_over_time({}{{{}}}[{}])", kFingerprintSeries,
                                                    selection.where, range_text(selection.range));
  FleetHistory history = fleet_hosts(client.query(fingerprint_query, selection.range.end), selection,
                                     fmt::format("{} (query {})", client.url(), fingerprint_query));
  history.queries = 1;
  // Hosts in cohort order, so that a batch holds one cohort's hosts where it can.
  std::vector<std::pair<std::string, std::string>> ordered;  // cohort, instance
  for (const FleetHost& h : history.hosts) ordered.emplace_back(label(h.fingerprint, selection.by), h.instance);
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::string> instances;
  for (const auto& [cohort, instance] : ordered) instances.push_back(instance);
  std::size_t batch = first_batch_size(history.most_scrapes);
  for (std::size_t start = 0; start < instances.size();) {
    const std::size_t n = std::min(batch, instances.size() - start);
    const std::vector<std::string> some(instances.begin() + static_cast<std::ptrdiff_t>(start),
                                        instances.begin() + static_cast<std::ptrdiff_t>(start + n));
    try {
      add_batch_figures(history, batch_answers(client, selection, some, history.queries),
                        fmt::format("{} (hosts {} to {})", client.url(), some.front(), some.back()));
    } catch (const QueryTooLarge& e) {
      if (n == 1)
        throw BaselineError(kExitBadBaseline,
                            fmt::format("{}: the server refuses the query of one host ({}) over {} for too many "
                                        "samples: shorten the range or raise its limit (Prometheus "
                                        "--query.max-samples, VictoriaMetrics -search.maxSamplesPerQuery or "
                                        "-search.maxUniqueTimeseries) ({})",
                                        client.url(), some.front(), selection.range.text, e.what()));
      batch = std::max<std::size_t>(1, n / 2);
      history.notes.push_back(
          fmt::format("the server refused a batch of {} hosts for too many samples or series; asked "
                      "again {} hosts at a time",
                      n, batch));
      continue;
    }
    start += n;
  }
  const auto no_figures = std::remove_if(history.hosts.begin(), history.hosts.end(), [&](const FleetHost& h) {
    if (!h.cpus.empty()) return false;
    history.left_out.push_back(
        fmt::format("{}: left out, no sampled CPU with gap-histogram samples in the range", h.instance));
    return true;
  });
  history.hosts.erase(no_figures, history.hosts.end());
  if (history.hosts.empty())
    throw BaselineError(kExitBadBaseline,
                        fmt::format("{}: empty range: no host has sampler series between {} and {}", client.url(),
                                    utc_text(selection.range.start), utc_text(selection.range.end)));
  return history;
}

}  // namespace jitterd
