// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <prometheus/text_serializer.h>

#include <atomic>
#include <thread>

#include "daemon/probe_scheduler.h"
#include "export/collector.h"
#include "export/text_format.h"

using namespace jitterd;

namespace {
// Succeeds on its first run and fails on every later one; notes whether two runs ever overlapped.
class ScriptedProbe : public Probe {
 public:
  ScriptedProbe(std::string name, std::atomic<int>& running, std::atomic<bool>& overlapped)
      : name_(std::move(name)), running_(running), overlapped_(overlapped) {}
  std::string_view name() const override { return name_; }
  std::chrono::nanoseconds interval() const override { return std::chrono::milliseconds(5); }
  ProbeResult run(ProbeContext&) override {
    if (running_.fetch_add(1) != 0) overlapped_ = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    running_.fetch_sub(1);
    if (++runs_ >= 2) throw std::runtime_error("scripted failure " + std::to_string(runs_));
    ProbeResult r;
    r.metrics.push_back(gauge("jitterd_test_value", "A scripted value.", {{"probe_run", "first"}}, runs_));
    r.tables.push_back({"scripted", {"run", "value"}, {{std::to_string(runs_), "1.5"}}});
    return r;
  }
  int runs() const { return runs_; }

 private:
  std::string name_;
  std::atomic<int>& running_;
  std::atomic<bool>& overlapped_;
  int runs_ = 0;
};

const prometheus::MetricFamily* find(const std::vector<prometheus::MetricFamily>& families,
                                     const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}
}  // namespace

TEST_CASE("the scheduler runs every probe repeatedly, never two at once, and records failures",
          "[probe_scheduler][concurrency]") {
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<ScriptedProbe>("first", running, overlapped));
  probes.push_back(std::make_unique<ScriptedProbe>("second", running, overlapped));
  ProbeScheduler scheduler(std::move(probes), ProbeContext{}, std::chrono::milliseconds(0));
  scheduler.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto statuses = scheduler.statuses();
  // Wait for each probe to have failed (its second run and every later one).
  while (std::chrono::steady_clock::now() < deadline &&
         !(statuses[0]->ran && !statuses[0]->success && statuses[1]->ran && !statuses[1]->success)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    statuses = scheduler.statuses();
  }
  scheduler.stop();
  REQUIRE(statuses.size() == 2);
  CHECK(statuses[0]->name == "first");
  CHECK(statuses[1]->name == "second");
  for (const auto& s : statuses) {
    CHECK(s->ran);
    CHECK_FALSE(s->success);
    CHECK_THAT(s->error, Catch::StartsWith("scripted failure"));
    CHECK(s->last_run_unix_seconds > 1.6e9);
  }
  CHECK_FALSE(overlapped);
}

TEST_CASE("probe results become families; a failed run exports status but no numbers",
          "[probe_scheduler][concurrency]") {
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  ScriptedProbe probe("scripted", running, overlapped);
  ProbeContext context;
  const ProbeStatus ok = run_probe(probe, context);
  CHECK(ok.success);
  CHECK(ok.duration_seconds > 0);
  const ProbeStatus failed = run_probe(probe, context);
  CHECK_FALSE(failed.success);
  CHECK(failed.error == "scripted failure 2");

  // Through a running scheduler into the collector: first a success, then stop after it.
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<ScriptedProbe>("scripted", running, overlapped));
  auto scheduler =
      std::make_shared<ProbeScheduler>(std::move(probes), ProbeContext{}, std::chrono::milliseconds(0));
  Collector collector(HostReader(), this_build());
  collector.set_probes([scheduler] { return scheduler->statuses(); });
  // As the daemon does: the run's text is made on the scheduler's thread, after it is stored.
  std::atomic<int> after_runs{0};
  scheduler->set_after_run([&] {
    collector.render_probe_results();
    ++after_runs;
  });
  scheduler->start();
  while (after_runs.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  scheduler->stop();
  CHECK(scheduler->statuses()[0]->ran);
  const std::uint64_t made = collector.results_made();
  if (scheduler->statuses()[0]->success) CHECK(made >= 1);
  CHECK(collector.metrics_text() == serialize_text(collector.Collect()));
  CHECK(collector.results_made() == made);  // the scrape made none
  const auto families = collector.Collect();
  const bool succeeded = scheduler->statuses()[0]->success;
  REQUIRE(find(families, "jitterd_probe_success") != nullptr);
  CHECK(find(families, "jitterd_probe_success")->metric[0].gauge.value == (succeeded ? 1 : 0));
  CHECK(find(families, "jitterd_probe_duration_seconds") != nullptr);
  CHECK(find(families, "jitterd_probe_last_run_timestamp_seconds") != nullptr);
  CHECK((find(families, "jitterd_test_value") != nullptr) == succeeded);
}

TEST_CASE("probe histograms keep the cumulative rule and serialize", "[probe_scheduler]") {
  HistogramSnapshot s;
  s.counts[histogram_bucket_index(50)] = 3;    // 50 ns
  s.counts[histogram_bucket_index(5000)] = 2;  // 5 us
  const ProbeMetric m = histogram_seconds("jitterd_test_seconds", "Test.", {{"method", "x"}}, s, TickScale(1e9),
                                          {1e-7, 1e-6, 1e-5}, 1e-5);
  REQUIRE(m.buckets.size() == 3);
  CHECK(m.buckets[0].second == 3);
  CHECK(m.buckets[1].second == 3);
  CHECK(m.buckets[2].second == 5);
  CHECK(m.count == 5);
}

namespace {
// Works in units of `unit`, checking for cancellation between them, `units` times.
class UnitProbe : public Probe {
 public:
  UnitProbe(std::chrono::milliseconds unit, int units, std::atomic<bool>& started)
      : unit_(unit), units_(units), started_(started) {}
  std::string_view name() const override { return "units"; }
  std::chrono::nanoseconds interval() const override { return std::chrono::hours(1); }
  ProbeResult run(ProbeContext& context) override {
    started_ = true;
    for (int i = 0; i < units_; ++i) {
      context.check_cancelled();
      std::this_thread::sleep_for(unit_);
    }
    return {};
  }

 private:
  std::chrono::milliseconds unit_;
  int units_;
  std::atomic<bool>& started_;
};

void wait_for(const std::atomic<bool>& flag) {
  while (!flag) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
}  // namespace

TEST_CASE("stopping cancels a probe at its next unit boundary", "[probe_scheduler][concurrency]") {
  std::atomic<bool> started{false};
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<UnitProbe>(std::chrono::milliseconds(10), 100000, started));
  ProbeScheduler scheduler(std::move(probes), ProbeContext{}, std::chrono::milliseconds(0));
  scheduler.start();
  wait_for(started);
  CHECK(scheduler.stop());                    // returns once the probe left at a boundary (no grace limit)
  CHECK_FALSE(scheduler.statuses()[0]->ran);  // a cancelled run is neither a result nor a failure
}

TEST_CASE("stop with a grace period reports a probe stuck in one long unit", "[probe_scheduler][concurrency]") {
  std::atomic<bool> started{false};
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<UnitProbe>(std::chrono::milliseconds(1500), 1, started));
  auto scheduler =
      std::make_unique<ProbeScheduler>(std::move(probes), ProbeContext{}, std::chrono::milliseconds(0));
  scheduler->start();
  wait_for(started);
  CHECK_FALSE(scheduler->stop(std::chrono::milliseconds(50)));
  CHECK(scheduler->stop());  // the unit ends, the thread follows
}

TEST_CASE("a probe state is logged when it first appears and again only when it changes", "[probe_scheduler]") {
  ProbeStateLog log;
  const ProbeState deltas{"window_deltas (tracepoints: false in the configuration)", false};
  CHECK(log.log_if_changed("attribution", "method", deltas));
  CHECK_FALSE(log.log_if_changed("attribution", "method", deltas));
  // Another subject or another probe is another state.
  CHECK(log.log_if_changed("attribution", "other", deltas));
  CHECK(log.log_if_changed("posture", "method", deltas));
  // The same method with another reason, or the same line at another level, is a change.
  const ProbeState refused{"window_deltas (tracepoints unavailable: no tracefs)", true};
  CHECK(log.log_if_changed("attribution", "method", refused));
  CHECK_FALSE(log.log_if_changed("attribution", "method", refused));
  CHECK(log.log_if_changed("attribution", "method", ProbeState{refused.line, false}));
  CHECK(log.log_if_changed("attribution", "method", deltas));
}
