// SPDX-License-Identifier: Apache-2.0
// The series of one range's Prometheus answer: parsing, increments and gathering by kind
// (prometheus_series.h).
#include "compare/prometheus_series.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <set>

#include "measure/gap_bounds.h"
#include "report/baseline_recorder.h"

namespace jitterd::history_detail {

[[noreturn]] void wrong_shape(const std::string& source, const std::string& what) {
  throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus range answer: {}", source, what));
}

namespace {

// A number of a native histogram sample, given as a string ("12", "+Inf"); finite or +Inf only
// where `infinite_ok`.
double histogram_number(const Json& v, const std::string& source, bool infinite_ok) {
  if (!v.is_string()) wrong_shape(source, "a native histogram number that is not a string");
  const std::string text = v.get<std::string>();
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || std::isnan(d) || (std::isinf(d) && !(infinite_ok && d > 0)))
    wrong_shape(source, fmt::format("a native histogram number \"{}\"", text.substr(0, 60)));
  return d;
}

// The classic _bucket series of one native histogram series with custom buckets (NHCB): per
// sample, the buckets' counts ([rule, lower, upper, count], only the non-empty ones) summed up to
// each exported bound (measure/gap_bounds.h) and any other upper bound a sample holds, +Inf
// always. Bounded: at most kMaxNhcbBounds bounds (jitterd exports 25).
constexpr std::size_t kMaxNhcbBounds = 256;

void expand_native_histogram(const Json& item, const Series& head, const std::string& source,
                             std::vector<Series>& out) {
  struct Sample {
    double t;
    std::map<double, double> counts;  // upper bound -> count in (lower, upper]
  };
  std::vector<Sample> samples;
  // The server's JSON lists only the non-empty buckets; the custom bounds are jitterd's exported
  // ones, every one of which a classic scrape would have given.
  std::set<double> bounds(gap_bounds_seconds().begin(), gap_bounds_seconds().end());
  bounds.insert(std::numeric_limits<double>::infinity());
  for (const Json& point : item["histograms"]) {
    if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_object())
      wrong_shape(source, "a native histogram sample that is not [time, {...}]");
    Sample sample{point[0].get<double>(), {}};
    const Json& h = point[1];
    if (h.contains("buckets")) {
      if (!h["buckets"].is_array()) wrong_shape(source, "native histogram buckets that are not a list");
      for (const Json& b : h["buckets"]) {
        if (!b.is_array() || b.size() != 4 || !b[0].is_number_integer())
          wrong_shape(source, "a native histogram bucket that is not [rule, lower, upper, count]");
        const double upper = histogram_number(b[2], source, true);
        const double count = histogram_number(b[3], source, false);
        if (count < 0) wrong_shape(source, "a native histogram bucket with a negative count");
        sample.counts[upper] += count;
        bounds.insert(upper);
        if (bounds.size() > kMaxNhcbBounds)
          wrong_shape(source, fmt::format("a native histogram with more than {} bucket bounds", kMaxNhcbBounds));
      }
    }
    samples.push_back(std::move(sample));
  }
  std::string name = head.label("__name__") + "_bucket";
  for (const double bound : bounds) {
    Series s = head;
    s.labels["__name__"] = name;
    s.labels["le"] = std::isinf(bound) ? "+Inf" : fmt::format("{}", bound);
    for (const Sample& sample : samples) {
      double cumulative = 0;
      for (const auto& [upper, count] : sample.counts) {
        if (upper > bound) break;
        cumulative += count;
      }
      s.points.push_back({sample.t, cumulative});
    }
    std::sort(s.points.begin(), s.points.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
    out.push_back(std::move(s));
  }
}

}  // namespace

std::vector<Series> series_of(const RangeSamples& samples) {
  const std::string& source = samples.source;
  if (!samples.matrix.is_array()) wrong_shape(source, "the result is not a list");
  std::vector<Series> out, converted;  // converted: the classic buckets of native histograms
  for (const Json& item : samples.matrix) {
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object())
      wrong_shape(source, "a result without \"metric\" and \"values\"");
    Series s;
    for (const auto& [name, value] : item["metric"].items())
      if (value.is_string()) s.labels[name] = value.get<std::string>();
    const std::string name = s.label("__name__");
    if ((name == kGapHistogram || name == kLoopGapHistogram) && item.contains("histograms") &&
        item["histograms"].is_array()) {
      expand_native_histogram(item, s, source, converted);
      continue;
    }
    if (!item.contains("values") || !item["values"].is_array())
      wrong_shape(source, "a result without \"metric\" and \"values\"");
    for (const Json& point : item["values"]) {
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string())
        wrong_shape(source, "a sample that is not [time, \"value\"]");
      const std::string text = point[1].get<std::string>();
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0')
        wrong_shape(source, fmt::format("a sample value \"{}\"", text.substr(0, 60)));
      // NaN is Prometheus's stale marker; no series jitterd exports is ever infinite (1e999 reads so).
      if (std::isinf(v))
        wrong_shape(source, fmt::format("a sample value \"{}\" that is not a finite number", text.substr(0, 60)));
      if (!std::isnan(v)) s.points.push_back({point[0].get<double>(), v});
    }
    std::sort(s.points.begin(), s.points.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
    out.push_back(std::move(s));
  }
  // A server that keeps both (always_scrape_classic_histograms beside the conversion) answers each
  // bucket twice: the classic series is the one kept.
  const auto without_le = [](std::map<std::string, std::string> labels) {
    labels.erase("le");
    return labels;
  };
  std::set<std::map<std::string, std::string>> classic;
  for (const Series& c : out)
    if (c.labels.count("le") > 0) classic.insert(without_le(c.labels));
  for (Series& c : converted)
    if (classic.count(without_le(c.labels)) == 0) out.push_back(std::move(c));
  return out;
}

std::vector<Increment> increments(const Series& s, std::vector<double>* resets) {
  std::vector<Increment> out;
  for (std::size_t i = 1; i < s.points.size(); ++i) {
    const double d = s.points[i].v - s.points[i - 1].v;
    if (d < 0 && resets != nullptr) resets->push_back(s.points[i].t);
    out.push_back({s.points[i].t, d >= 0 ? d : s.points[i].v});
  }
  return out;
}

bool later(const Series& a, const Series& b) { return a.points.back().t > b.points.back().t; }

Gathered gather(const std::vector<Series>& all, const RangeSamples& samples, double sub_window_seconds,
                std::size_t windows) {
  const TimeRange& range = samples.range;
  const auto window_of = [&](double t) {
    const double k = std::floor((t - range.start) / sub_window_seconds);
    return static_cast<std::size_t>(std::clamp(k, 0.0, static_cast<double>(windows - 1)));
  };
  Gathered g;
  for (const Series& s : all) {
    if (s.points.empty()) continue;
    const std::string name = s.label("__name__");
    const bool per_cpu = name.rfind("jitterd_sampler_", 0) == 0 || name == kGovernor;
    if (!per_cpu) {
      const auto known = g.info.find(name);
      if (known == g.info.end() || later(s, known->second)) g.info[name] = s;
      if (name == kFingerprint) g.fingerprints.push_back(&s);
      continue;
    }
    const int cpu = cpu_label(s);
    if (cpu < 0) wrong_shape(samples.source, fmt::format("a {} series without a cpu label", name));
    std::vector<double>* target = nullptr;
    CpuWindows* c = nullptr;
    if (name == kGapBuckets || name == kSampled || name == kInterruptions || name == kStolen) {
      if (g.cpus.size() >= kBaselineMaxCpus && g.cpus.count(cpu) == 0)
        wrong_shape(samples.source, fmt::format("sampler series of more than {} CPUs", kBaselineMaxCpus));
      c = &g.cpus[cpu];
      for (auto* v : {&c->sampled, &c->interruptions, &c->stolen}) v->resize(windows);
    }
    if (name == kGapBuckets) {
      const std::string le = s.label("le");
      const double bound = le_bound_ns(le);
      if (std::isnan(bound)) wrong_shape(samples.source, fmt::format("a {} series with le=\"{}\"", name, le));
      auto& counts = c->cumulative[bound];
      counts.resize(windows);
      target = &counts;
    } else if (name == kSampled) {
      target = &c->sampled;
    } else if (name == kInterruptions) {
      target = &c->interruptions;
    } else if (name == kStolen) {
      target = &c->stolen;
    } else if (name == kWindowMax) {
      for (const Point& p : s.points) g.window_max[cpu] = std::max(g.window_max[cpu], p.v);
    } else {
      std::map<int, Series>& latest = name == kFloor       ? g.floor
                                      : name == kThreshold ? g.threshold
                                      : name == kDuty      ? g.duty
                                      : name == kRealtime  ? g.realtime
                                                           : g.governor;
      const auto known = latest.find(cpu);
      if (known == latest.end() || later(s, known->second)) latest[cpu] = s;
    }
    if (target != nullptr)
      for (const Increment& inc : increments(s, name == kSampled ? &c->resets : nullptr))
        (*target)[window_of(inc.t)] += inc.amount;
  }
  return g;
}

std::vector<Series> loops_as_samplers(const std::vector<Series>& all, const RangeSamples& samples,
                                      std::vector<std::pair<std::string, int>>& loops) {
  std::vector<Series> out;
  for (const Series& s : all) {
    const std::string name = s.label("__name__");
    if (name.rfind(kLoopPrefix, 0) != 0) continue;
    const auto family = std::find_if(std::begin(kLoopFamilies), std::end(kLoopFamilies),
                                     [&](const auto& f) { return name == f.first; });
    if (family == std::end(kLoopFamilies)) continue;
    const std::string loop = s.label("loop");
    const int cpu = cpu_label(s);
    if (loop.empty() || cpu < 0)
      wrong_shape(samples.source, fmt::format("a {} series without loop and cpu labels", name));
    auto known = std::find_if(loops.begin(), loops.end(), [&](const auto& l) { return l.first == loop; });
    if (known == loops.end()) {
      if (loops.size() >= kBaselineMaxLoops)
        wrong_shape(samples.source, fmt::format("loop series of more than {} loops", kBaselineMaxLoops));
      loops.emplace_back(loop, cpu);
      known = std::prev(loops.end());
    }
    Series renamed = s;
    renamed.labels["__name__"] = family->second;
    renamed.labels["cpu"] = std::to_string(known - loops.begin());
    out.push_back(std::move(renamed));
  }
  return out;
}

int cpu_label(const Series& s) {
  const std::string text = s.label("cpu");
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(text);
}

}  // namespace jitterd::history_detail
