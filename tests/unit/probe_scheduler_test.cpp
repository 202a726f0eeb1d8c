// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "daemon/probe_scheduler.h"
#include "export/collector.h"
#include "export/text_format.h"
#include "probes/probe_registry.h"

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

TEST_CASE("the scheduler runs every probe repeatedly, never two of one lane at once, and records failures",
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

namespace {
using SteadyClock = std::chrono::steady_clock;

// The first probe the registry marks as a reader (`reader`) or not: the scheduler's lanes follow
// the registry's facts, so the fakes below borrow real names rather than spell them.
std::string registry_name(bool reader) {
  for (std::string_view name : probe_names())
    if (is_reader(name) == reader) return std::string(name);
  FAIL("the registry has no probe with reader = " << reader);
  return {};
}

// A reader: notes when each run started, and how many started while the active probe was running.
class CadenceReader : public Probe {
 public:
  CadenceReader(std::chrono::milliseconds interval, const std::atomic<bool>& active_running)
      : name_(registry_name(true)), interval_(interval), active_running_(active_running) {}
  std::string_view name() const override { return name_; }
  std::chrono::nanoseconds interval() const override { return interval_; }
  ProbeResult run(ProbeContext&) override {
    std::lock_guard lock(mutex_);
    starts_.push_back(SteadyClock::now());
    if (active_running_.load()) ++during_active_;
    return {};
  }
  // The longest time between two run starts so far, and the runs while the active probe ran.
  std::pair<SteadyClock::duration, int> figures() const {
    std::lock_guard lock(mutex_);
    SteadyClock::duration longest{};
    for (std::size_t i = 1; i < starts_.size(); ++i) longest = std::max(longest, starts_[i] - starts_[i - 1]);
    return {longest, during_active_};
  }

 private:
  std::string name_;
  std::chrono::milliseconds interval_;
  const std::atomic<bool>& active_running_;
  mutable std::mutex mutex_;
  std::vector<SteadyClock::time_point> starts_;
  int during_active_ = 0;
};

// An active probe that holds its lane for `hold` (in 10 ms units, so a stop cancels it quickly).
class SlowActiveProbe : public Probe {
 public:
  SlowActiveProbe(std::chrono::milliseconds hold, std::atomic<bool>& running, std::atomic<int>& runs)
      : name_(registry_name(false)), hold_(hold), running_(running), runs_(runs) {}
  std::string_view name() const override { return name_; }
  std::chrono::nanoseconds interval() const override { return std::chrono::hours(1); }
  ProbeResult run(ProbeContext& context) override {
    running_ = true;
    const auto until = SteadyClock::now() + hold_;
    while (SteadyClock::now() < until) {
      context.check_cancelled();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    running_ = false;
    ++runs_;
    return {};
  }

 private:
  std::string name_;
  std::chrono::milliseconds hold_;
  std::atomic<bool>& running_;
  std::atomic<int>& runs_;
};

struct CadenceRun {
  SteadyClock::duration longest{};
  int reader_runs_during_active = 0;
};

// One slow active probe (2 s, ten of the reader's 200 ms intervals) and one reader, until the active
// probe has run once.
CadenceRun run_cadence(bool separate_readers) {
  constexpr auto reader_interval = std::chrono::milliseconds(200);
  std::atomic<bool> active_running{false};
  std::atomic<int> active_runs{0};
  // The reader first: in one lane it runs, then the active probe, then the reader again 2 s later.
  std::vector<std::unique_ptr<Probe>> probes;
  auto reader_owned = std::make_unique<CadenceReader>(reader_interval, active_running);
  const CadenceReader& reader = *reader_owned;
  probes.push_back(std::move(reader_owned));
  probes.push_back(
      std::make_unique<SlowActiveProbe>(std::chrono::milliseconds(2000), active_running, active_runs));
  ProbeScheduler scheduler(std::move(probes), ProbeContext{}, std::chrono::milliseconds(0), nullptr,
                           separate_readers);
  scheduler.start();
  const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (active_runs.load() == 0 && SteadyClock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // One more reader interval after it, so that a reader held behind it has run again.
  std::this_thread::sleep_for(reader_interval * 2);
  scheduler.stop();
  REQUIRE(active_runs.load() >= 1);
  const auto [longest, during] = reader.figures();
  return {longest, during};
}
}  // namespace

TEST_CASE("a reader keeps its cadence while an active probe holds its lane for ten of its intervals",
          "[probe_scheduler][concurrency]") {
  const CadenceRun run = run_cadence(true);
  const double longest_ms = std::chrono::duration<double, std::milli>(run.longest).count();
  INFO("longest interval between two readings: " << longest_ms << " ms");
  // The active probe sleeps, leaving the CPUs free: the reader ran through its 2 s many times. With
  // one lane it would not have run once (the case below), and its longest interval would be 2 s.
  CHECK(run.reader_runs_during_active >= 2);
  CHECK(run.longest < std::chrono::milliseconds(1000));
}

TEST_CASE("in one lane, as before readers had their own, a reader waits behind an active probe",
          "[probe_scheduler][concurrency]") {
  const CadenceRun run = run_cadence(false);
  CHECK(run.reader_runs_during_active == 0);
  CHECK(run.longest >= std::chrono::milliseconds(2000));
}

TEST_CASE("the readers' and the active probes' lanes open the shared BPF engine once, from either thread",
          "[probe_scheduler][concurrency]") {
  // Nothing wanted: the engine is not loaded, but both lanes race through get() and why_not().
  auto engine = std::make_shared<SharedBpfWatch>(SharedBpfWatch::Wants{});
  // Counted in the threads and checked after the joins: Catch2's assertions are not thread-safe.
  std::atomic<int> nulls{0}, reasons{0};
  auto use = [&] {
    for (int i = 0; i < 200; ++i) {
      if (engine->get(nullptr) == nullptr) ++nulls;
      if (!engine->why_not().empty()) ++reasons;
    }
  };
  std::thread a(use), b(use);
  a.join();
  b.join();
  CHECK(nulls.load() == 400);
  CHECK(reasons.load() == 400);
  CHECK(engine->why_not() == "nothing asks for the BPF engine");
}
