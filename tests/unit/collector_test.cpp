// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <prometheus/text_serializer.h>

#include <map>
#include <thread>

#include <cmath>
#include <limits>

#include "export/collector.h"
#include "export/text_format.h"
#include "fixture_tree.h"
#include "measure/gap_bounds.h"
#include "sampling/sampling_plan.h"

using namespace jitterd;

namespace {
const prometheus::MetricFamily* find_family(const std::vector<prometheus::MetricFamily>& families,
                                            const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

SamplerSettings quick_settings(int cpu, const TickScale& scale) {
  SamplerSettings s;
  s.cpu = cpu;
  s.method = default_tick_method();
  s.scale = scale;
  s.continuous = true;
  s.warmup = std::chrono::milliseconds(20);
  s.window = std::chrono::seconds(10);
  s.lock_memory = false;
  return s;
}
}  // namespace

TEST_CASE("coarse le counts include a fine bucket only when all of it is below the bound", "[collector]") {
  const TickScale ns(1e9);  // one tick = 1 ns
  HistogramSnapshot s;
  s.counts[histogram_bucket_index(9)] = 1;               // 9 ns: exact bucket
  s.counts[histogram_bucket_index(10)] = 2;              // 10 ns: exact bucket, at the bound
  s.counts[histogram_bucket_index(11)] = 4;              // 11 ns
  s.counts[histogram_bucket_index(24)] = 8;              // bucket [24, 25]: within 25 ns
  s.counts[histogram_bucket_index(26)] = 16;             // bucket [26, 27]: above 25 ns
  s.counts[histogram_bucket_index(5'000'000'000)] = 32;  // 5 s: only +Inf
  const std::vector<double> bounds = {1e-8, 2.5e-8, 5e-8, 1e-1};
  const auto counts = coarse_cumulative_counts(s, ns, bounds);
  CHECK(counts == std::vector<std::uint64_t>{3, 15, 31, 31});
}

TEST_CASE("the default bounds run from 10 ns to 100 ms, increasing", "[collector]") {
  const auto& b = gap_bounds_seconds();
  CHECK(b.front() == Approx(1e-8));
  CHECK(b.back() == Approx(0.1));
  for (std::size_t i = 1; i < b.size(); ++i) CHECK(b[i] > b[i - 1]);
}

TEST_CASE("a scrape while samplers run gives consistent families", "[collector][concurrency]") {
  const auto cpus = current_affinity();
  REQUIRE(!cpus.empty());
  const CounterFrequency f = counter_frequency(default_tick_method(), std::chrono::milliseconds(50));
  const TickScale scale(f.hertz);
  auto set = std::make_shared<SamplerSet>(std::vector<SamplerSettings>{quick_settings(cpus.back(), scale)});
  set->start();
  auto collector = std::make_shared<Collector>(HostReader("/sys", "/proc"), this_build());
  collector->set_samplers(set, f, default_tick_method());
  collector->record_reload(true, 1700000000.0);
  // Fixed sleeps alone may pass before a loaded machine runs the sampler: wait (bounded) until it
  // has published samples.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (set->worker(0).shared()->samples.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The window families appear once a rolled window holds the sampler's published gaps; on a
  // loaded machine that may take several rolls, so roll until it does (bounded).
  std::vector<prometheus::MetricFamily> families;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    set->update_windows();
    families = collector->Collect();
  } while (find_family(families, "jitterd_sampler_window_max_gap_seconds") == nullptr &&
           std::chrono::steady_clock::now() < deadline);
  // Scraping concurrently with the writer is the point: serialize as the Exposer would.
  const std::string text = prometheus::TextSerializer().Serialize(families);
  set->stop();

  for (const char* name :
       {"jitterd_build_info", "jitterd_config_last_reload_successful", "jitterd_tick_frequency_hertz",
        "jitterd_tick_info", "jitterd_sampler_gap_seconds", "jitterd_sampler_interruptions_total",
        "jitterd_sampler_stolen_seconds_total", "jitterd_sampler_sampled_seconds_total",
        "jitterd_sampler_window_gap_seconds", "jitterd_sampler_window_max_gap_seconds",
        "jitterd_sampler_loop_floor_seconds", "jitterd_sampler_interruption_threshold_seconds",
        "jitterd_sampler_duty_cycle_ratio", "jitterd_sampler_pinned", "jitterd_sampler_memory_locked",
        "jitterd_sampler_realtime_priority", "jitterd_sampler_context_switches_total", "jitterd_sampler_up"}) {
    INFO(name);
    CHECK(find_family(families, name) != nullptr);
  }
  const auto* hist = find_family(families, "jitterd_sampler_gap_seconds");
  REQUIRE(hist != nullptr);
  REQUIRE(hist->metric.size() == 1);
  const auto& h = hist->metric[0].histogram;
  CHECK(h.sample_count > 0);
  CHECK(h.bucket.back().cumulative_count == h.sample_count);
  for (std::size_t i = 1; i < h.bucket.size(); ++i)
    CHECK(h.bucket[i].cumulative_count >= h.bucket[i - 1].cumulative_count);
  CHECK(find_family(families, "jitterd_sampler_up")->metric[0].gauge.value == 1);
  CHECK(find_family(families, "jitterd_sampler_pinned")->metric[0].gauge.value == 1);
  const auto* quantiles = find_family(families, "jitterd_sampler_window_gap_seconds");
  REQUIRE(quantiles->metric.size() == 1);
  REQUIRE(quantiles->metric[0].summary.quantile.size() == 4);
  CHECK(quantiles->metric[0].summary.sample_count == h.sample_count);
  const double max = find_family(families, "jitterd_sampler_window_max_gap_seconds")->metric[0].gauge.value;
  for (const auto& q : quantiles->metric[0].summary.quantile) CHECK(q.value <= max);
  CHECK(text.find("jitterd_sampler_gap_seconds_bucket{cpu=\"" + std::to_string(cpus.back()) + "\",le=\"+Inf\"}") !=
        std::string::npos);
}

TEST_CASE("without samplers only the daemon families are exported", "[collector]") {
  Collector collector(HostReader("/sys", "/proc"), this_build());
  collector.record_reload(false, 0);
  const auto families = collector.Collect();
  CHECK(find_family(families, "jitterd_sampler_gap_seconds") == nullptr);
  CHECK(find_family(families, "jitterd_config_last_reload_successful")->metric[0].gauge.value == 0);
}

TEST_CASE("a probe's summary is exported with its quantiles, count and sum", "[collector]") {
  Collector collector(HostReader("/sys", "/proc"), this_build());
  ProbeStatus status("kernel_cost");
  status.ran = status.success = true;
  status.result.metrics.push_back(summary_metric("jitterd_test_seconds", "A test summary.", {{"op", "x"}},
                                                 {{0, 1e-9}, {0.5, 2e-9}, {1, 4e-9}}, 3, 7e-9));
  collector.set_probes([status] { return share_statuses({status}); });
  const auto families = collector.Collect();
  const auto* f = find_family(families, "jitterd_test_seconds");
  REQUIRE(f != nullptr);
  CHECK(f->type == prometheus::MetricType::Summary);
  REQUIRE(f->metric.size() == 1);
  const auto& s = f->metric[0].summary;
  REQUIRE(s.quantile.size() == 3);
  CHECK(s.quantile[0].quantile == 0);
  CHECK(s.quantile[2].value == 4e-9);
  CHECK(s.sample_count == 3);
  CHECK(s.sample_sum == 7e-9);
  const std::string text = prometheus::TextSerializer().Serialize(families);
  CHECK(text.find("jitterd_test_seconds{op=\"x\",quantile=\"0.5\"} 2e-09") != std::string::npos);
  CHECK(text.find("jitterd_test_seconds_count{op=\"x\"} 3") != std::string::npos);
}

TEST_CASE("serialize_text writes exactly what prometheus-cpp's TextSerializer writes", "[collector]") {
  using prometheus::ClientMetric;
  using prometheus::MetricFamily;
  using prometheus::MetricType;
  const double inf = std::numeric_limits<double>::infinity();
  const auto metric = [](std::vector<ClientMetric::Label> labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = m.gauge.value = m.untyped.value = value;
    return m;
  };
  std::vector<MetricFamily> families;
  families.push_back({"c_total",
                      "A counter.",
                      MetricType::Counter,
                      {metric({}, 0), metric({{"cpu", "1"}}, 12345678901234567.0),
                       metric({{"a", "quote\" back\\slash\nnewline"}, {"b", ""}}, 0.009987910000000001)}});
  families.push_back({"g",
                      "",
                      MetricType::Gauge,
                      {metric({}, std::nan("")), metric({{"x", "y"}}, inf), metric({}, -inf), metric({}, -0.0),
                       metric({}, 1e-300), metric({}, 2.05e-08), metric({}, 1700000000), metric({}, 1.0 / 3)}});
  families.back().metric[1].timestamp_ms = 1700000000123;
  families.push_back({"u", "Untyped.", MetricType::Untyped, {metric({{"k", "v"}}, 42)}});
  ClientMetric h;
  h.label = {{"cpu", "3"}};
  h.histogram.sample_count = 7;
  h.histogram.sample_sum = 1.5e-6;
  h.histogram.bucket = {{1, 1e-8}, {5, 2.5e-8}, {7, 0.1}};  // no +Inf bucket: the writer adds it
  ClientMetric h_inf = h;
  h_inf.label.clear();
  h_inf.histogram.bucket.push_back({7, inf});
  families.push_back({"h_seconds", "A histogram.", MetricType::Histogram, {h, h_inf}});
  ClientMetric s;
  s.summary.sample_count = 3;
  s.summary.sample_sum = std::nan("");
  s.summary.quantile = {{0.5, 2.05e-08}, {0.999, inf}, {0.9999, 0}};
  ClientMetric s_labelled = s;
  s_labelled.label = {{"cpu", "0"}};
  s_labelled.timestamp_ms = -5;
  families.push_back({"s_seconds", "A summary.", MetricType::Summary, {s, s_labelled}});
  families.push_back({"empty", "No metrics.", MetricType::Gauge, {}});
  CHECK(jitterd::serialize_text(families) == prometheus::TextSerializer().Serialize(families));
  CHECK(jitterd::serialize_text({}).empty());
}

TEST_CASE("the context switches a scrape exports are the window update's reading, not a read per scrape",
          "[collector][concurrency]") {
  const auto cpus = current_affinity();
  REQUIRE(!cpus.empty());
  // A procfs root of our own, holding only this process's task directory: what it says is what
  // jitterd must export, and a scrape must not see it change until the next window update.
  jitterd::testing::ScratchTree proc;
  const std::string tasks = std::to_string(::getpid()) + "/task/";
  proc.write(tasks + ".keep", "");
  const HostReader host("/sys", proc.root());
  const CounterFrequency f = counter_frequency(default_tick_method(), std::chrono::milliseconds(50));
  auto set = std::make_shared<SamplerSet>(
      std::vector<SamplerSettings>{quick_settings(cpus.back(), TickScale(f.hertz))}, host);
  set->start();
  const pid_t tid = set->worker(0).startup().tid;
  REQUIRE(set->worker(0).shared() != nullptr);
  const auto status = [&](int voluntary, int involuntary) {
    proc.write(tasks + std::to_string(tid) + "/status",
               "Name:\tjitterd-cpu\nvoluntary_ctxt_switches:\t" + std::to_string(voluntary) +
                   "\nnonvoluntary_ctxt_switches:\t" + std::to_string(involuntary) + "\n");
  };
  Collector collector(HostReader("/sys", "/proc"), this_build());
  collector.set_samplers(set, f, default_tick_method());
  const auto switches = [&] {
    std::map<std::string, double> by_kind;
    const auto families = collector.Collect();
    if (const auto* family = find_family(families, "jitterd_sampler_context_switches_total"))
      for (const auto& m : family->metric) by_kind[m.label.at(1).value] = m.counter.value;
    return by_kind;
  };
  CHECK(switches().empty());  // no window update yet: nothing read
  status(11, 3);
  CHECK(switches().empty());  // the scrape reads no file
  set->update_windows();
  CHECK(switches() == std::map<std::string, double>{{"involuntary", 3}, {"voluntary", 11}});
  status(12, 5);
  CHECK(switches() == std::map<std::string, double>{{"involuntary", 3}, {"voluntary", 11}});
  CHECK(collector.status().samplers.at(0).window_detail.context_switches->voluntary == 11);
  set->update_windows();
  CHECK(switches() == std::map<std::string, double>{{"involuntary", 5}, {"voluntary", 12}});
  std::filesystem::remove(proc.root() / tasks / std::to_string(tid) / "status");
  set->update_windows();
  CHECK(switches().empty());  // unreadable: left out, as before
  set->stop();
}

TEST_CASE("a scrape and the status page share the probes' snapshots instead of copying them", "[collector]") {
  Collector collector(HostReader("/sys", "/proc"), this_build());
  ProbeStatus run("kernel_cost");
  run.ran = run.success = true;
  run.result.metrics.push_back(gauge("jitterd_test_value", "A test gauge.", {{"op", "x"}}, 1));
  const ProbeStatuses statuses = share_statuses({run});
  collector.set_probes([&statuses] { return statuses; });
  const long before = statuses.front().use_count();
  const StatusSnapshot snapshot = collector.status();
  REQUIRE(snapshot.probes.size() == 1);
  CHECK(snapshot.probes.front().get() == statuses.front().get());  // the same object
  CHECK(statuses.front().use_count() == before + 1);
}

TEST_CASE("metrics_text is serialize_text(Collect()) as probe results come, change and share family names",
          "[collector]") {
  Collector collector(HostReader("/sys", "/proc"), this_build());
  const auto run = [](const std::string& name, double value, std::vector<std::string> families) {
    ProbeStatus status(name);
    status.ran = status.success = true;
    status.last_run_unix_seconds = 1.7e9 + value;
    for (const std::string& family : families)
      status.result.metrics.push_back(gauge(family, "Help of " + family + ".", {{"probe_value", name}}, value));
    return std::make_shared<const ProbeStatus>(std::move(status));
  };
  ProbeStatuses statuses = {run("a", 1, {"jitterd_a_value", "jitterd_a_other"}), run("b", 2, {"jitterd_b_value"})};
  collector.set_probes([&statuses] { return statuses; });
  const auto same = [&] {
    const std::string text = collector.metrics_text();
    CHECK(text == serialize_text(collector.Collect()));
    return text;
  };
  const std::string first = same();
  CHECK(first.find("jitterd_a_value{probe_value=\"a\"} 1") != std::string::npos);
  CHECK(same() == first);                                             // from the kept text
  statuses[0] = run("a", 3, {"jitterd_a_value", "jitterd_a_other"});  // a new run replaces the snapshot
  const std::string second = same();
  CHECK(second.find("jitterd_a_value{probe_value=\"a\"} 3") != std::string::npos);
  CHECK(second.find("jitterd_a_value{probe_value=\"a\"} 1") == std::string::npos);
  // Two probes with a family of the same name: one family with both samples, as Collect() has it.
  statuses.push_back(run("c", 4, {"jitterd_a_other"}));
  const std::string merged = same();
  const std::size_t type_line = merged.find("# TYPE jitterd_a_other gauge");
  REQUIRE(type_line != std::string::npos);
  CHECK(merged.find("# TYPE jitterd_a_other gauge", type_line + 1) == std::string::npos);
  // A failed run drops its results from the text.
  ProbeStatus failed("b");
  failed.ran = true;
  failed.error = "scripted";
  statuses[1] = std::make_shared<const ProbeStatus>(failed);
  CHECK(same().find("jitterd_b_value") == std::string::npos);
}

TEST_CASE("render_probe_results makes a new result's text before the scrape, which then only copies it",
          "[collector]") {
  Collector collector(HostReader("/sys", "/proc"), this_build());
  const auto run = [](double value) {
    ProbeStatus status("posture");
    status.ran = status.success = true;
    status.result.metrics.push_back(gauge("jitterd_test_value", "A test gauge.", {}, value));
    return std::make_shared<const ProbeStatus>(std::move(status));
  };
  ProbeStatuses statuses = {run(1)};
  collector.set_probes([&statuses] { return statuses; });
  collector.render_probe_results();
  CHECK(collector.results_made() == 1);
  const std::string text = collector.metrics_text();
  CHECK(collector.results_made() == 1);  // the scrape made nothing
  CHECK(text == serialize_text(collector.Collect()));
  collector.render_probe_results();
  CHECK(collector.results_made() == 1);  // nothing new to make
  statuses = {run(2)};
  collector.render_probe_results();
  CHECK(collector.results_made() == 2);
  CHECK(collector.metrics_text().find("jitterd_test_value 2") != std::string::npos);
  CHECK(collector.results_made() == 2);
  statuses = {run(3)};  // not rendered: the scrape makes it
  CHECK(collector.metrics_text().find("jitterd_test_value 3") != std::string::npos);
  CHECK(collector.results_made() == 3);
}
