// SPDX-License-Identifier: Apache-2.0
#include "report/baseline_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "host/file_writer.h"
#include "host/host_reader.h"
#include "report/baseline_reader.h"

namespace jitterd {
namespace {

Json string_pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json object = Json::object();
  for (const auto& [key, value] : pairs) object[key] = value;
  return object;
}

Json histogram_json(const HistogramSnapshot& histogram) {
  Json buckets = Json::array();  // sparse: [bucket index, count] for every non-empty bucket
  for (std::size_t i = 0; i < kHistogramBuckets; ++i)
    if (histogram.counts[i] != 0) buckets.push_back({i, histogram.counts[i]});
  return buckets;
}

Json sub_window_json(const SubWindow& w) {
  return {{"seconds", w.sampled_seconds},
          {"samples", w.samples},
          {"p50_ns", w.p50_ns},
          {"p99_ns", w.p99_ns},
          {"p99_9_ns", w.p999_ns},
          {"p99_99_ns", w.p9999_ns},
          {"interruptions", w.interruptions},
          {"stolen_seconds", w.stolen_seconds},
          {"over_threshold", w.over_threshold}};
}

Json cpu_json(const BaselineCpu& c) {
  return {{"cpu", c.cpu},
          {"error", c.error},
          {"samples", c.samples},
          {"sampled_seconds", c.sampled_seconds},
          {"stolen_seconds", c.stolen_seconds},
          {"interruptions", c.interruptions},
          {"floor_ns", c.floor_ns},
          {"threshold_ns", c.threshold_ns},
          {"max_ns", c.max_ns},
          {"histogram_ticks", histogram_json(c.histogram)},
          {"sub_windows", json_array(c.sub_windows, sub_window_json)}};
}

Json loop_json(const BaselineLoop& l) {
  Json j = cpu_json(l);
  j["name"] = l.name;
  j["counter_hertz"] = l.counter_hertz;
  return j;
}

template <typename T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json watched_figures_json(const WatchedFigures& f) {
  return {{"seconds", f.seconds},
          {"interruptions", f.interruptions},
          {"preemptions", f.preemptions},
          {"stolen_seconds", f.stolen_seconds},
          {"longest_ns", optional_json(f.longest_ns)},
          {"over_threshold", json_array(f.over_threshold, optional_json<std::uint64_t>)}};
}

Json watched_json(const BaselineWatched& w) {
  Json j = watched_figures_json(w);
  j["cpu"] = w.cpu;
  j["method"] = w.method;
  j["outlier_threshold_ns"] = w.outlier_threshold_ns;
  j["tail_unknown"] = w.tail_unknown;
  j["sub_windows"] = json_array(w.sub_windows, watched_figures_json);
  return j;
}

Json samples_json(const ProbeSamples& s) {
  Json values = Json::array();
  for (const auto& [value, count] : s.values) values.push_back({value, count});
  Json quantiles = Json::object();
  for (const auto& [column, q] : s.quantiles) quantiles[column] = q;
  return {{"labels", string_pairs_json(s.labels)},
          {"quantiles", std::move(quantiles)},
          {"unit_ns", s.unit_ns},
          {"values", std::move(values)}};
}

Json probe_json(const BaselineProbe& p) {
  return {{"name", p.name},   {"success", p.success},
          {"error", p.error}, {"tables", json_array(p.tables, table_json)},
          {"notes", p.notes}, {"samples", json_array(p.samples, samples_json)}};
}

}  // namespace

SubWindow sub_window_of(const HistogramSnapshot& delta, double ns_per_tick, double seconds,
                        std::uint64_t interruptions, double stolen_seconds,
                        const std::vector<double>& thresholds_ns) {
  SubWindow w;
  w.sampled_seconds = seconds;
  w.samples = delta.total();
  const auto quantile_ns = [&](double q) { return static_cast<double>(delta.quantile(q)) * ns_per_tick; };
  w.p50_ns = quantile_ns(0.5);
  w.p99_ns = quantile_ns(0.99);
  w.p999_ns = quantile_ns(0.999);
  w.p9999_ns = quantile_ns(0.9999);
  w.interruptions = interruptions;
  w.stolen_seconds = stolen_seconds;
  // A bucket counts when its lowest value is at or above the threshold: the same rule in every
  // baseline of the same counter frequency, so the counts compare exactly.
  for (double threshold_ns : thresholds_ns) {
    std::uint64_t over = 0;
    for (std::size_t i = 0; i < kHistogramBuckets; ++i)
      if (delta.counts[i] != 0 && static_cast<double>(histogram_bucket_lowest(i)) * ns_per_tick >= threshold_ns)
        over += delta.counts[i];
    w.over_threshold.push_back(over);
  }
  return w;
}

Json baseline_json(const Baseline& b) {
  return {{"format", kBaselineFormatName},
          {"format_version", fmt::format("{}.{}", kBaselineFormatMajor, kBaselineFormatMinor)},
          {"created", b.created},
          {"jitterd_version", b.jitterd_version},
          {"fingerprint", string_pairs_json(b.fingerprint)},
          {"configuration", string_pairs_json(b.configuration)},
          {"tick_method", b.tick_method},
          {"counter_hertz", b.counter_hertz},
          {"duration_seconds", b.duration_seconds},
          {"sub_window_seconds", b.sub_window_seconds},
          {"tail_thresholds_ns", b.tail_thresholds_ns},
          {"cpus", json_array(b.cpus, cpu_json)},
          {"probes", json_array(b.probes, probe_json)},
          {"loops", json_array(b.loops, loop_json)},  // (JSON key)
          {"watched", json_array(b.watched, watched_json)}};
}

Baseline read_baseline(const std::string& path) {
  std::string reason;
  bool too_big = false;
  const std::optional<std::string> text = read_file_up_to(path, kBaselineMaxBytes, &reason, &too_big);
  if (!text)
    throw BaselineError(too_big ? kExitBadBaseline : kExitUnreadableBaseline,
                        fmt::format("{}: cannot read{}: {}", path, too_big ? " as a baseline" : "", reason));
  return parse_baseline(*text, path);
}

void write_baseline(const Baseline& baseline, const std::string& path) {
  if (!baseline.histogram_bounds_ns.empty())
    throw BaselineError(kExitBadBaseline,
                        fmt::format("{}: a baseline read from Prometheus (exported-bucket resolution) is not "
                                    "written to a file; take one with jitterd baseline",
                                    path));
  const std::string text = baseline_json(baseline).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  if (path == kStandardOutputPath) {
    if (const std::optional<std::string> error = write_all(STDOUT_FILENO, text))
      throw BaselineError(kExitCannotWrite, fmt::format("standard output: cannot write: {}", *error));
    return;
  }
  if (const std::optional<std::string> error = replace_file(path, text))
    throw BaselineError(kExitCannotWrite, fmt::format("{}: {}", path, *error));
}

void check_baseline_target(const std::string& path) {
  if (path == kStandardOutputPath) return;
  if (const std::optional<std::string> problem = replace_problem(path))
    throw BaselineError(kExitCannotWrite, fmt::format("{}: {}", path, *problem));
}

std::string field_value(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& key) {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return "";
}

double baseline_quantile_ns(const Baseline& baseline, const BaselineCpu& cpu, double q) {
  return baseline_quantile_ns(baseline, cpu, q, baseline.counter_hertz);
}

double baseline_quantile_ns(const Baseline& baseline, const BaselineCpu& cpu, double q, double counter_hertz) {
  const double ns_per_tick = 1e9 / counter_hertz;
  const double edge = static_cast<double>(cpu.histogram.quantile(q)) * ns_per_tick;
  // A fine bucket is at most 1/16 wide and exported bounds are 2x or more apart, so the bound
  // whose fine bucket holds the quantile is the first one within 1/8 below the fine edge.
  for (double bound : baseline.histogram_bounds_ns)
    if (bound * (1 + 1.0 / 8) >= edge) return std::min(bound, cpu.max_ns);
  return std::min(edge, cpu.max_ns);
}

}  // namespace jitterd