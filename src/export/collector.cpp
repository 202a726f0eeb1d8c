// SPDX-License-Identifier: Apache-2.0
#include "export/collector.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "export/metric_families.h"
#include "export/sampler_families.h"
#include "export/text_format.h"
#include "host/text.h"
#include "measure/clock_ns.h"

namespace jitterd {

namespace {
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
}  // namespace

void read_sampler_state(const SamplerShared& shared, WindowDetail window, SamplerReading& r) {
  r.sampling = true;
  shared.histogram.snapshot(r.counts.gaps);
  r.counts.interruptions = shared.interruption_count.load(std::memory_order_relaxed);
  r.counts.interrupted_ticks = shared.interrupted_ticks.load(std::memory_order_relaxed);
  r.counts.sampled_ticks = shared.sampled_ticks.load(std::memory_order_relaxed);
  r.window_detail = std::move(window);
}

CpuFigures window_figures(const SamplerReading& r) {
  CpuFigures f = r.window_detail.summary;
  f.valid = r.sampling && f.valid && f.span_seconds > 0;
  const TickScale& scale = r.settings.scale;
  set_counted(f, r.window_detail.sampled_ticks, r.window_detail.interruptions, r.window_detail.interrupted_ticks,
              scale);
  set_limits(f, r.startup.floor_ticks, r.startup.threshold_ticks, scale);
  return f;
}

std::vector<SamplerReading> read_samplers(const SamplerSet& set) {
  std::vector<SamplerReading> out;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const SamplerWorker& w = set.worker(i);
    SamplerReading r;
    r.settings = w.settings();
    r.startup = w.startup();
    r.up = w.alive(read_ticks(r.settings.method));
    r.off_cpu = w.off_cpu();
    if (r.off_cpu) {
      r.off_cpu_since = w.off_cpu_since();
      r.pin_error = w.pin_error();
    }
    r.cpu_losses = w.cpu_losses();
    if (const SamplerShared* shared = w.shared()) read_sampler_state(*shared, set.window_detail(i), r);
    out.push_back(std::move(r));
  }
  return out;
}

Collector::Collector(HostReader host, BuildInfo build) : host_(std::move(host)), build_(std::move(build)) {}

void Collector::set_samplers(std::shared_ptr<const SamplerSet> samplers, CounterFrequency frequency,
                             TickMethod method) {
  std::function<std::vector<WindowParts>()> parts = [samplers] {
    std::vector<WindowParts> out;
    for (std::size_t i = 0; i < samplers->size(); ++i) out.push_back(samplers->window_parts(i));
    return out;
  };
  set_samplers([samplers = std::move(samplers)] { return read_samplers(*samplers); }, std::move(frequency),
               method);
  std::lock_guard lock(mutex_);
  window_parts_ = std::move(parts);
  advance_generation();
}

void Collector::set_samplers(std::function<std::vector<SamplerReading>()> readings, CounterFrequency frequency,
                             TickMethod method) {
  std::lock_guard lock(mutex_);
  window_parts_ = nullptr;
  sampler_readings_ = std::move(readings);
  frequency_ = std::move(frequency);
  method_ = method;
  advance_generation();
}

void Collector::set_probes(std::function<ProbeStatuses()> statuses) {
  std::lock_guard lock(mutex_);
  probe_statuses_ = std::move(statuses);
  advance_generation();
}

void Collector::record_samplers_start(double unix_seconds) {
  std::lock_guard lock(mutex_);
  samplers_started_ = unix_seconds;
  advance_generation();
}

void Collector::record_reload(bool success, double unix_seconds) {
  std::lock_guard lock(mutex_);
  last_reload_ok_ = success;
  if (success) last_reload_success_ = unix_seconds;
  advance_generation();
}

std::vector<MetricFamily> Collector::Collect() const {
  std::lock_guard lock(mutex_);
  const ProbeStatuses statuses = probe_statuses_ ? probe_statuses_() : ProbeStatuses{};
  std::vector<MetricFamily> out = collect_without_results(statuses);
  for (MetricFamily& f : result_families(statuses)) out.push_back(std::move(f));
  return out;
}

std::string Collector::metrics_text() const {
  std::lock_guard lock(mutex_);
  const ProbeStatuses statuses = probe_statuses_ ? probe_statuses_() : ProbeStatuses{};
  std::string text = serialize_text(collect_without_results(statuses));
  text += results_text(statuses);
  return text;
}

std::vector<MetricFamily> Collector::collect_without_results(const ProbeStatuses& statuses) const {
  std::vector<MetricFamily> out;
  add_single(out,
             family("jitterd_build_info", "Version and build of the running jitterd; value 1.", MetricType::Gauge),
             {{"version", build_.version},
              {"revision", build_.revision},
              {"compiler", build_.compiler},
              {"arch", build_.arch}},
             1);
  add_single(out,
             family("jitterd_config_last_reload_successful",
                    "1 if the last configuration load succeeded, 0 if it was rejected and the previous one kept.",
                    MetricType::Gauge),
             {}, last_reload_ok_ ? 1 : 0);
  add_single(out,
             family("jitterd_config_last_reload_success_timestamp_seconds",
                    "Unix time of the last successful configuration load.", MetricType::Gauge),
             {}, last_reload_success_);
  if (sampler_readings_ && samplers_started_ > 0)
    add_single(out,
               family("jitterd_sampler_start_time_seconds",
                      "Unix time the running samplers started (jitterd's start, or a reload that started new "
                      "samplers): the jitterd_sampler_ counters count from zero since then.",
                      MetricType::Gauge),
               {}, samplers_started_);
  add_web_families(web_counters_, out);
  if (sampler_readings_) {
    add_tick_families(out, frequency_, method_);
    add_sampler_families(out, sampler_readings_());
  }
  if (probe_statuses_) collect_probe_runs(statuses, out);
  // A family with no sample (say, no sampler started yet) is left out rather than sent empty.
  std::erase_if(out, [](const MetricFamily& f) { return f.metric.empty(); });
  return out;
}

StatusSnapshot Collector::status() const {
  StatusSnapshot s;
  std::lock_guard lock(mutex_);
  s.build = build_;
  s.unix_seconds = unix_seconds();
  s.frequency = frequency_;
  s.method = method_;
  s.last_reload_ok = last_reload_ok_;
  s.last_reload_success = last_reload_success_;
  if (sampler_readings_) s.samplers = sampler_readings_();
  if (probe_statuses_) s.probes = probe_statuses_();
  s.hostname = std::string(trim(host_.read_proc("sys/kernel/hostname").value_or("")));
  return s;
}

std::vector<WindowParts> Collector::window_parts() const {
  std::lock_guard lock(mutex_);
  return window_parts_ ? window_parts_() : std::vector<WindowParts>{};
}

MetricType to_metric_type(ProbeMetricType type) {
  switch (type) {
    case ProbeMetricType::counter:
      return MetricType::Counter;
    case ProbeMetricType::histogram:
      return MetricType::Histogram;
    case ProbeMetricType::summary:
      return MetricType::Summary;
    default:
      return MetricType::Gauge;
  }
}

ClientMetric to_client_metric(const ProbeMetric& m) {
  ClientMetric c;
  for (const auto& [name, value] : m.labels) c.label.push_back({name, value});
  if (m.type == ProbeMetricType::histogram) {
    for (const auto& [bound, count] : m.buckets) c.histogram.bucket.push_back({count, bound});
    c.histogram.bucket.push_back({m.count, std::numeric_limits<double>::infinity()});
    c.histogram.sample_count = m.count;
    c.histogram.sample_sum = m.sum;
  } else if (m.type == ProbeMetricType::summary) {
    for (const auto& [quantile, value] : m.quantiles) c.summary.quantile.push_back({quantile, value});
    c.summary.sample_count = m.count;
    c.summary.sample_sum = m.sum;
  } else if (m.type == ProbeMetricType::counter) {
    c.counter.value = m.value;
  } else {
    c.gauge.value = m.value;
  }
  return c;
}

void Collector::collect_probe_runs(const ProbeStatuses& statuses, std::vector<MetricFamily>& out) const {
  MetricFamily success =
      family("jitterd_probe_success", "1 if the probe's last run succeeded, 0 if it failed.", MetricType::Gauge);
  MetricFamily duration =
      family("jitterd_probe_duration_seconds", "How long the probe's last run took.", MetricType::Gauge);
  MetricFamily last_run =
      family("jitterd_probe_last_run_timestamp_seconds", "Unix time the probe last ran.", MetricType::Gauge);
  for (const std::shared_ptr<const ProbeStatus>& shared : statuses) {
    const ProbeStatus& status = *shared;
    if (!status.ran) continue;
    sample(success, {{"probe", status.name}}, status.success ? 1 : 0);
    sample(duration, {{"probe", status.name}}, status.duration_seconds);
    sample(last_run, {{"probe", status.name}}, status.last_run_unix_seconds);
  }
  out.push_back(std::move(success));
  out.push_back(std::move(duration));
  out.push_back(std::move(last_run));
}

std::vector<MetricFamily> Collector::result_families(const ProbeStatuses& statuses) {
  std::vector<MetricFamily> results;
  std::map<std::string, std::size_t, std::less<>> family_of;  // name -> index in results
  for (const std::shared_ptr<const ProbeStatus>& shared : statuses) {
    const ProbeStatus& status = *shared;
    if (!status.ran || !status.success) continue;  // a failed run's numbers are not measurements
    for (const ProbeMetric& m : status.result.metrics) {
      // A map, not a search of the families per metric: a 1,024-CPU scrape has 50,000 probe metrics.
      auto found = family_of.find(m.name);
      if (found == family_of.end()) {
        found = family_of.emplace(m.name, results.size()).first;
        results.push_back(family(m.name, m.help, to_metric_type(m.type)));
      }
      results[found->second].metric.push_back(to_client_metric(m));
    }
  }
  return results;
}

Collector::ResultText Collector::make_result_text(std::shared_ptr<const ProbeStatus> status) {
  ResultText made{std::move(status), {}, {}};
  const std::vector<MetricFamily> families = result_families({made.status});
  for (const MetricFamily& f : families) made.names.push_back(f.name);
  made.text = serialize_text(families);
  return made;
}

void Collector::render_probe_results() const {
  std::lock_guard rendering(render_mutex_);
  ProbeStatuses statuses;
  {
    std::lock_guard lock(mutex_);
    if (!probe_statuses_) return;
    statuses = probe_statuses_();
  }
  // Made without the lock, so a scrape meanwhile does not wait for them.
  std::vector<ResultText> made;
  for (const std::shared_ptr<const ProbeStatus>& status : statuses) {
    if (!status->ran || !status->success) continue;
    std::unique_lock lock(mutex_);
    const bool known = std::ranges::find(result_texts_, status, &ResultText::status) != result_texts_.end();
    lock.unlock();
    if (!known) made.push_back(make_result_text(status));
  }
  std::lock_guard lock(mutex_);
  results_made_ += made.size();
  // Only the current results are kept: a superseded run's snapshot is let go.
  std::erase_if(result_texts_,
                [&](const ResultText& r) { return std::ranges::find(statuses, r.status) == statuses.end(); });
  for (ResultText& m : made) {
    if (std::ranges::find(result_texts_, m.status, &ResultText::status) == result_texts_.end())
      result_texts_.push_back(std::move(m));
  }
  advance_generation();
}

std::uint64_t Collector::results_made() const {
  std::lock_guard lock(mutex_);
  return results_made_;
}

// Each successful run's text is made once, when its snapshot first appears (by
// render_probe_results on the scheduler's lane that ran it, or else by the first scrape that sees it).
// Concatenated in the probes' order it is exactly the merged families' text as long as no two
// probes share a family name (none of jitterd's do); if some did, the merged families are
// serialized instead.
std::string Collector::results_text(const ProbeStatuses& statuses) const {
  std::vector<ResultText> kept;
  kept.reserve(statuses.size());  // `names` points into the kept entries' names
  std::set<std::string_view> names;
  bool shared_name = false;
  std::size_t size = 0;
  for (const std::shared_ptr<const ProbeStatus>& status : statuses) {
    if (!status->ran || !status->success) continue;
    const auto cached = std::ranges::find(result_texts_, status, &ResultText::status);
    if (cached != result_texts_.end()) {
      kept.push_back(std::move(*cached));
    } else {
      kept.push_back(make_result_text(status));
      ++results_made_;
    }
    for (const std::string& name : kept.back().names) shared_name = !names.insert(name).second || shared_name;
    size += kept.back().text.size();
  }
  result_texts_ = std::move(kept);
  if (shared_name) return serialize_text(result_families(statuses));
  std::string text;
  text.reserve(size);
  for (const ResultText& r : result_texts_) text += r.text;
  return text;
}

}  // namespace jitterd
