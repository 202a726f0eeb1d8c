// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_answers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "report/baseline_file.h"

namespace jitterd {

[[noreturn]] void wrong_vector_shape(const std::string& source, const std::string& what) {
  throw BaselineError(kExitBadBaseline,
                      fmt::format("{}: not a Prometheus instant-vector answer: {}", source, what));
}

std::vector<PromSample> vector_samples(const Json& data, const std::string& source) {
  if (!data.is_object() || !data.contains("resultType") || data["resultType"] != "vector" ||
      !data.contains("result") || !data["result"].is_array())
    wrong_vector_shape(source, "no vector result");
  std::vector<PromSample> out;
  for (const Json& item : data["result"]) {
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object() || !item.contains("value") ||
        !item["value"].is_array() || item["value"].size() != 2 || !item["value"][1].is_string())
      wrong_vector_shape(source, "a result without \"metric\" and \"value\": [time, \"value\"]");
    PromSample s;
    for (const auto& [name, value] : item["metric"].items())
      if (value.is_string()) s.labels[name] = value.get<std::string>();
    const std::string text = item["value"][1].get<std::string>();
    char* end = nullptr;
    s.value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || std::isinf(s.value))
      wrong_vector_shape(source,
                         fmt::format("a sample value \"{}\" that is not a finite number", text.substr(0, 60)));
    if (!std::isnan(s.value)) out.push_back(std::move(s));
  }
  return out;
}

std::string label_of(const std::map<std::string, std::string>& labels, const std::string& name) {
  const auto it = labels.find(name);
  return it == labels.end() ? "" : it->second;
}

int cpu_label_of(const PromSample& s, const std::string& source, const std::string& series) {
  const std::string text = label_of(s.labels, "cpu");
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos)
    wrong_vector_shape(source, fmt::format("a {} series without a cpu label", series));
  return std::stoi(text);
}

namespace {

std::map<CpuKey, double> per_cpu(const Json& data, const std::string& source, const UnitOf& unit) {
  std::map<CpuKey, double> out;
  if (data.is_null()) return out;
  for (const PromSample& s : vector_samples(data, source))
    if (const int u = unit(s); u >= 0) out[{label_of(s.labels, "instance"), u}] += s.value;
  return out;
}

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

// The figure names, once, from the exported bounds the first batch shows.
void name_figures(std::vector<std::string>& names, const CounterValues& increases) {
  std::set<double> bounds;
  for (const auto& [key, cumulative] : increases.buckets)
    for (const auto& [le, count] : cumulative)
      if (!std::isinf(le)) bounds.insert(le);
  if (!names.empty() || bounds.empty()) return;
  names = {"p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "interruptions_per_s", "stolen_share"};
  for (double bound : tail_bounds(bounds))  // each name once: two bounds could share one
    if (std::find(names.begin(), names.end(), threshold_name(bound)) == names.end())
      names.push_back(threshold_name(bound));
}

// The figures of each unit (a sampled CPU, a loop) into (host.*units)[unit], in `names`' order.
void add_unit_figures(FleetHistory& history, const CounterValues& increases, std::vector<std::string>& names,
                      std::map<int, std::vector<double>> FleetHost::*units) {
  name_figures(names, increases);
  for (const auto& [key, counts] : increases.buckets) {
    FleetHost* const host = host_named(history, key.first);
    const auto seconds = increases.sampled.find(key);
    if (host == nullptr || seconds == increases.sampled.end() || !(seconds->second > 0)) continue;
    if (!std::isinf(counts.rbegin()->first) || !(counts.rbegin()->second > 0)) continue;
    std::map<double, double> cumulative = counts;
    double running = 0;  // cumulative counts never fall (increase()'s extrapolation may make them uneven)
    for (auto& [le, count] : cumulative) count = running = std::max(running, count);
    const double s = seconds->second, total = cumulative.rbegin()->second;
    std::vector<double> values{quantile_ns(cumulative, 0.5), quantile_ns(cumulative, 0.99),
                               quantile_ns(cumulative, 0.999), quantile_ns(cumulative, 0.9999)};
    const auto count_of = [&key = key](const std::map<CpuKey, double>& m) {
      const auto it = m.find(key);
      return it == m.end() ? NAN : it->second;
    };
    values.push_back(count_of(increases.interruptions) / s);
    values.push_back(count_of(increases.stolen) / s);
    for (std::size_t i = 6; i < names.size(); ++i) {
      double over = NAN;
      for (const auto& [le, count] : cumulative)
        if (!std::isinf(le) && threshold_name(le) == names[i]) over = (total - count) / s;
      values.push_back(over);
    }
    ((*host).*units)[key.second] = std::move(values);
  }
}

}  // namespace

std::string threshold_name(double ns) {
  return ns >= 1e6 ? fmt::format("gaps_over_{}ms_per_s", ns / 1e6) : fmt::format("gaps_over_{}us_per_s", ns / 1e3);
}

// By binary search (history.hosts is by instance): a map of every host rebuilt per batch made
// reading the answers quadratic in hosts.
FleetHost* host_named(FleetHistory& history, const std::string& instance) {
  auto& hosts = history.hosts;
  const auto at = std::lower_bound(hosts.begin(), hosts.end(), instance,
                                   [](const FleetHost& h, const std::string& name) { return h.instance < name; });
  return at != hosts.end() && at->instance == instance ? &*at : nullptr;
}

CounterValues counter_values(const BatchAnswers& answers, const std::string& source) {
  return counter_values(answers, source,
                        [&source](const PromSample& s) { return cpu_label_of(s, source, "sampler"); });
}

CounterValues counter_values(const BatchAnswers& answers, const std::string& source, const UnitOf& unit) {
  CounterValues v;
  if (!answers.buckets.is_null())
    for (const PromSample& s : vector_samples(answers.buckets, source)) {
      const std::string le = label_of(s.labels, "le");
      const double key = le_bound_ns(le);
      if (std::isnan(key)) wrong_vector_shape(source, fmt::format("a bucket with le=\"{}\"", le.substr(0, 60)));
      if (const int u = unit(s); u >= 0) v.buckets[{label_of(s.labels, "instance"), u}][key] += s.value;
    }
  v.sampled = per_cpu(answers.sampled, source, unit);
  v.interruptions = per_cpu(answers.interruptions, source, unit);
  v.stolen = per_cpu(answers.stolen, source, unit);
  return v;
}

void add_figures(FleetHistory& history, const CounterValues& increases) {
  add_unit_figures(history, increases, history.figure_names, &FleetHost::cpus);
}

void add_loop_figures(FleetHistory& history, const CounterValues& increases) {
  add_unit_figures(history, increases, history.loop_figure_names, &FleetHost::loops);
}

}  // namespace jitterd
