// SPDX-License-Identifier: Apache-2.0
// The golden /metrics: one scrape of the real collector, serialized by prometheus-cpp's
// TextSerializer as the web server sends it, checked by `promtool check metrics` and compared
// with tests/golden/metrics.prom, so that a renamed, added or removed series is a reviewed diff.
//
// Every value is fixed here rather than masked: the samplers are plain readings with fixed
// histograms and counters; the posture probe runs for real over the tuned_server fixture and the
// attribution probe over a scratch /proc whose counts move between two windows; the other probes'
// metrics come from their own pure *_metrics functions over fixed measurements; the build, the
// reload time, the web server's counters, the probes' run times and durations and the fingerprint's first-seen time are
// set by the test. Both detail options are on (irq_detail 2, source_detail 3), so their families
// are in the file too.
//
// On a mismatch the test prints a unified diff. JITTERD_UPDATE_GOLDEN=1 rewrites the file instead:
//   JITTERD_UPDATE_GOLDEN=1 build/tests/jitterd_golden_tests && git diff tests/golden/metrics.prom
#include <catch2/catch.hpp>

#include <prometheus/text_serializer.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "export/collector.h"
#include "export/text_format.h"
#include "fixture_tree.h"
#include "probes/attribution_probe.h"
#include "probes/c2c_probe.h"
#include "probes/clock_probe.h"
#include "probes/kernel_cost_probe.h"
#include "probes/pacing_probe.h"
#include "probes/pinning_probe.h"
#include "probes/posture_probe.h"

using namespace jitterd;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path golden_file = fs::path(JITTERD_SOURCE_DIR) / "tests/golden/metrics.prom";
constexpr double start_time = 1.7e9;  // every timestamp of the scrape is a few seconds after it
const TickScale scale(2e9);           // a 2 GHz counter: one tick is 0.5 ns

const char* header =
    "# Golden /metrics of tests/unit/golden_metrics_test.cpp: fixed inputs, real collector and probes.\n"
    "# Regenerate: JITTERD_UPDATE_GOLDEN=1 build/tests/jitterd_golden_tests, then review the diff.\n";

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Runs a shell command with `input` on stdin; returns its exit status and merged output.
std::pair<int, std::string> run_with_input(const std::string& command, const std::string& input) {
  const fs::path in = fs::temp_directory_path() / ("jitterd_golden_in_" + std::to_string(::getpid()));
  const fs::path out = fs::temp_directory_path() / ("jitterd_golden_out_" + std::to_string(::getpid()));
  std::ofstream(in) << input;
  const int status = std::system((command + " < " + in.string() + " > " + out.string() + " 2>&1").c_str());
  std::string output = read_text(out);
  fs::remove(in);
  fs::remove(out);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

HistogramSnapshot gaps(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> ticks_and_counts) {
  HistogramSnapshot s;
  for (const auto& [ticks, count] : ticks_and_counts) s.counts[histogram_bucket_index(ticks)] += count;
  return s;
}

SamplerReading sampler(int cpu, bool window_ready) {
  SamplerReading r;
  r.settings.cpu = cpu;
  r.settings.method = TickMethod::lfence_rdtsc;
  r.settings.scale = scale;
  r.startup = {0, true, true, 0, 40, 800, {}, "", "", ""};  // floor 20 ns, threshold 400 ns
  r.up = true;
  r.sampling = true;
  // 20 ns and 30 ns gaps, 990 of 1 us and 10 of 100 us: 1000 interruptions.
  r.counts.gaps = gaps({{40, 900000}, {60, 99000}, {2000, 990}, {200000, 10}});
  r.counts.interruptions = 1000;
  r.counts.interrupted_ticks = 990 * 2000 + 10 * 200000;
  r.counts.sampled_ticks = 900000 * 40 + 99000 * 60 + r.counts.interrupted_ticks;
  if (window_ready) {
    r.window_detail.summary = summarize(r.counts.gaps, 200000, scale);
    r.window_detail.summary.valid = true;
  }
  r.window_detail.context_switches = ContextSwitches{12, 3};
  return r;
}

void pin_value(ProbeResult& result, const std::string& name, double value) {
  for (ProbeMetric& m : result.metrics) {
    if (m.name == name) m.value = value;
  }
}

ProbeStatus succeeded(const std::string& name, ProbeResult result, int order) {
  ProbeStatus status(name);
  status.ran = status.success = true;
  status.duration_seconds = 0.25;
  status.last_run_unix_seconds = start_time + order;
  status.result = std::move(result);
  return status;
}

ProbeResult posture_result() {
  PostureExpectations expect;  // tests/fixtures/posture/tuned_server.yaml
  expect.isolated = std::vector<int>{2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15};
  expect.nohz_full = expect.isolated;
  expect.governor = "performance";
  expect.clocksource = "tsc";
  expect.no_device_irqs = true;
  expect.max_exit_latency = 10us;
  PostureProbe probe(PostureSettings{true, 1min, expect, 2});
  ProbeContext context;
  context.host = jitterd::testing::fixture_reader("tuned_server");
  context.sampled = {3, 4};
  ProbeResult result = probe.run(context);
  pin_value(result, "jitterd_fingerprint_since_timestamp_seconds", start_time);
  return result;
}

// /proc/interrupts and /proc/softirqs of a 5-CPU machine, with `n` added to the sampled CPUs'
// (3 and 4) counts of a few rows.
std::string interrupts(std::uint64_t n) {
  const auto row = [](const std::string& source, std::array<std::uint64_t, 5> counts, const std::string& name) {
    std::ostringstream out;
    out << std::setw(4) << source << ":";
    for (std::uint64_t c : counts) out << std::setw(11) << c;
    out << "  " << name << "\n";
    return out.str();
  };
  return "           CPU0       CPU1       CPU2       CPU3       CPU4       \n" +
         row("0", {31, 0, 0, 0, 0}, "IR-IO-APIC   2-edge      timer") +
         row("45", {0, 0, 0, 48211 + 2 * n, 0}, "IR-PCI-MSI 1572868-edge      mlx5_comp3@pci:0000:3b:00.0") +
         row("NMI", {14, 14, 3, 3, 3}, "Non-maskable interrupts") +
         row("LOC", {4812345, 4812345, 10233, 10233 + 10 * n, 10233 + 4 * n}, "Local timer interrupts") +
         row("RES", {90211, 90211, 17, 17 + n, 17}, "Rescheduling interrupts") +
         row("CAL", {40132, 40132, 311, 311, 311 + n}, "Function call interrupts") +
         row("TLB", {5512, 5512, 2, 2, 2}, "TLB shootdowns") +
         row("MCP", {1436, 1436, 1436, 1436 + n, 1436 + n}, "Machine check polls");
}

std::string softirqs(std::uint64_t n) {
  const auto row = [](const std::string& source, std::array<std::uint64_t, 5> counts) {
    std::ostringstream out;
    out << std::setw(12) << source << ":";
    for (std::uint64_t c : counts) out << std::setw(11) << c;
    out << "\n";
    return out.str();
  };
  return "                    CPU0       CPU1       CPU2       CPU3       CPU4       \n" +
         row("TIMER", {301233, 301233, 41, 41 + 10 * n, 41 + 4 * n}) + row("NET_RX", {4012844, 4012844, 0, 0, 0}) +
         row("RCU", {702134, 702134, 12, 12 + n, 12});
}

ProbeResult attribution_result() {
  jitterd::testing::ScratchTree sys, proc;
  proc.write("interrupts", interrupts(0));
  proc.write("softirqs", softirqs(0));
  // Steal on both sampled CPUs (USER_HZ ticks), an SMI counter on cpu 3 only.
  proc.write("stat", "cpu3 100 0 50 800 0 0 0 250 0 0\ncpu4 100 0 50 800 0 0 0 0 0 0\n");
  SamplerShared cpu3(16, 1'000'000, 16), cpu4(16, 1'000'000, 16);
  cpu3.smi_count = 2;
  cpu3.smi_in_spans = 2;
  cpu3.smi_counted = true;
  ProbeContext context;
  context.host = HostReader(sys.root(), proc.root());  // no tracefs: window deltas
  context.method = TickMethod::lfence_rdtsc;
  context.frequency.hertz = scale.hertz();
  context.sampled = {3, 4};
  context.sampler_of = [&](int cpu) { return cpu == 3 ? &cpu3 : cpu == 4 ? &cpu4 : nullptr; };
  AttributionProbe probe(AttributionSettings{true, 10s, true, 3});
  probe.run(context);  // the baseline
  proc.write("interrupts", interrupts(5));
  proc.write("softirqs", softirqs(5));
  proc.write("stat", "cpu3 100 0 50 900 0 0 0 251 0 0\ncpu4 100 0 50 900 0 0 0 0 0 0\n");
  cpu3.smi_count = 5;  // 3 of the 35 unexplained are SMIs', the rest the hypervisor's
  cpu3.smi_in_spans = 5;
  cpu3.interruption_count = 100;  // 50 timer ticks, 10 NIC interrupts, 5 IPIs, 35 unexplained
  cpu3.interrupted_ticks = 100 * 2000;
  cpu4.interruption_count = 3;
  cpu4.interrupted_ticks = 3 * 1000;
  return probe.run(context);
}

// A probe's result that holds only its metrics (every other member default, whatever members
// ProbeResult gains).
ProbeResult metrics_only(std::vector<ProbeMetric> metrics) {
  ProbeResult result;
  result.metrics = std::move(metrics);
  return result;
}

ProbeResult clock_result() {
  ClockReading r;
  r.in_use_hertz = scale.hertz();
  r.estimates = {{"pause_loop", 2.0000004e9}, {"nanosleep", 1.9999996e9}, {"cpuinfo_mhz", 1.9999e9}};
  r.tsc_known_freq = false;
  r.drift_ratio = 1.5e-7;
  r.clocksource = ClocksourceInfo{"tsc", {"tsc", "hpet", "acpi_pm"}};
  r.sleep_overshoots = {SleepOvershoot{1us, 50, 52000, 61000, 80000, 50 * 53000},
                        SleepOvershoot{1ms, 50, 55000, 70000, 90000, 50 * 56000}};
  return metrics_only(clock_metrics(r));
}

ProbeResult kernel_cost_result() {
  const auto cost = [](const char* op, std::size_t samples, std::uint64_t min, std::uint64_t median,
                       std::uint64_t p99) { return OpCost{op, samples, median, p99, min, median * samples, {}}; };
  const std::vector<OpCost> costs = {cost("counter_read", 1000, 90, 98, 123),
                                     cost("clock_gettime_monotonic", 1000, 110, 122, 147),
                                     cost("clock_gettime_monotonic_raw", 1000, 110, 122, 123),
                                     cost("clock_gettime_realtime", 1000, 110, 122, 135),
                                     cost("syscall_getppid", 1000, 400, 441, 980),
                                     cost("thread_create_join", 100, 50000, 55933, 106477),
                                     cost("fork_wait", 20, 900000, 998791, 1580348)};
  return metrics_only(kernel_cost_metrics(costs, scale));
}

ProbeResult pinning_result() {
  MigrationLoopResult pinned, unpinned;
  pinned.gaps = gaps({{40, 9000}, {60, 990}, {4000, 10}});
  pinned.samples = pinned.gaps.total();
  pinned.sum_ticks = 9000 * 40 + 990 * 60 + 10 * 4000;
  pinned.cpus_seen = {0};
  unpinned.gaps = gaps({{40, 8000}, {60, 1900}, {20000, 100}});
  unpinned.samples = unpinned.gaps.total();
  unpinned.sum_ticks = 8000 * 40 + 1900 * 60 + 100 * 20000;
  unpinned.migrations = 3;
  unpinned.cpus_seen = {0, 1};
  return metrics_only(pinning_metrics(pinned, unpinned, scale));
}

ProbeResult pacing_result() {
  const auto run = [](const char* method, double units_per_second, double ratio, std::uint64_t max_late) {
    PacingResult r;
    r.target_per_second = 1000;
    r.achieved_per_second = 1000 * ratio;
    r.ratio = ratio;
    r.sends = 500;
    r.max_lateness = max_late;
    r.lateness = gaps({{24, 480}, {200, 19}, {max_late, 1}});
    return PacingRun{method, 1000, r, units_per_second};
  };
  return metrics_only(pacing_metrics({run("counter", 2e9, 1.0, 40000), run("clock_gettime", 1e9, 0.999998, 30000)},
                                     251614, 240000));
}

ProbeResult c2c_pairs_result() {
  const auto record = [](int a, int b, CpuRelation relation, double median_ns) {
    PairRecord r;
    r.pair = CpuPair{a, b, relation, 0, 0};
    r.samples = 100;
    r.min = (median_ns - 2) * 1e-9;
    r.p10 = (median_ns - 1) * 1e-9;
    r.median = median_ns * 1e-9;
    r.p90 = (median_ns + 1.5) * 1e-9;
    r.sum = 100 * (median_ns + 0.25) * 1e-9;
    r.line_node = 0;
    r.unix_seconds = start_time;
    r.duration_seconds = 0.008;
    r.measured = true;
    return r;
  };
  PairRecord failed = record(4, 12, CpuRelation::smt_sibling, 0);
  failed.measured = false;
  failed.failures = 2;
  const std::vector<PairRecord> records = {record(3, 4, CpuRelation::shared_l3, 28),
                                           record(3, 11, CpuRelation::smt_sibling, 10), failed};
  return c2c_result(records, C2cSettings{}, 3, 3);
}

// The golden state in a collector; scrape_families() and metrics_text() read it.
std::unique_ptr<Collector> golden_collector() {
  auto collector = std::make_unique<Collector>(jitterd::testing::fixture_reader("tuned_server"),
                                               BuildInfo{"0.0.0-golden", "0000000", "g++ (golden)", "x86_64"});
  collector->record_reload(true, start_time);
  collector->record_samplers_start(start_time);
  // The web server's counters, each its own value, so a swapped label shows in the file.
  WebCounters& web = collector->web_counters();
  web.telemetry_lane = 1200;
  web.page_lane = 340;
  web.per_address_limit = 3;
  web.evicted = 41;
  web.request_deadline = 17;
  web.refused_by_server = 0;
  web.closed_unserved = 0;
  web.accept_holds = 2;
  web.page_waiters_full = 5;
  web.password_checks_full = 7;
  collector->set_samplers(
      [] {
        return std::vector<SamplerReading>{sampler(3, true), sampler(4, false)};
      },
      CounterFrequency{scale.hertz(), "calibrated_monotonic_raw", 0.2}, TickMethod::lfence_rdtsc);
  std::vector<ProbeStatus> statuses = {
      succeeded("posture", posture_result(), 0), succeeded("attribution", attribution_result(), 1),
      succeeded("clock", clock_result(), 2),     succeeded("kernel_cost", kernel_cost_result(), 3),
      succeeded("pinning", pinning_result(), 4), succeeded("pacing", pacing_result(), 5),
      succeeded("c2c", c2c_pairs_result(), 6)};
  collector->set_probes([shared = share_statuses(std::move(statuses))] { return shared; });
  return collector;
}

std::vector<prometheus::MetricFamily> scrape_families() { return golden_collector()->Collect(); }

// The exposition as the web server writes it (Collector::metrics_text).
std::string scrape() { return header + golden_collector()->metrics_text(); }

}  // namespace

TEST_CASE("the golden /metrics: promtool accepts it and it matches tests/golden/metrics.prom",
          "[golden_metrics]") {
  const std::string text = scrape();

  if (std::system("command -v promtool > /dev/null 2>&1") == 0) {
    const auto [status, output] = run_with_input("promtool check metrics", text);
    INFO(output);
    CHECK(status == 0);
    CHECK(output.empty());
  } else {
    WARN("promtool not found (install the prometheus package): the exposition was not linted");
  }

  const char* update = std::getenv("JITTERD_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden_file.parent_path());
    std::ofstream(golden_file) << text;
    WARN("rewrote " << golden_file.string() << ": review the diff and commit it");
    return;
  }
  REQUIRE(fs::exists(golden_file));
  const std::string expected = read_text(golden_file);
  if (text != expected) {
    const fs::path actual =
        fs::temp_directory_path() / ("jitterd_golden_actual_" + std::to_string(::getpid()) + ".prom");
    std::ofstream(actual) << text;
    const auto [status, diff] = run_with_input("diff -u " + golden_file.string() + " " + actual.string(), "");
    fs::remove(actual);
    std::cerr << diff;  // unwrapped, unlike Catch's messages
    FAIL_CHECK("the scrape differs from " << golden_file.string()
                                          << " (the diff above: - expected, + actual); if the "
                                             "change is meant, regenerate with JITTERD_UPDATE_GOLDEN=1 "
                                             "build/tests/jitterd_golden_tests and review it");
  }
}

TEST_CASE("the golden /metrics: serialize_text writes what prometheus-cpp's TextSerializer writes",
          "[golden_metrics]") {
  const std::vector<prometheus::MetricFamily> families = scrape_families();
  CHECK(jitterd::serialize_text(families) == prometheus::TextSerializer().Serialize(families));
}

TEST_CASE("the golden /metrics: metrics_text, with the probes' text kept, is serialize_text(Collect())",
          "[golden_metrics]") {
  const std::unique_ptr<Collector> collector = golden_collector();
  const std::string expected = jitterd::serialize_text(collector->Collect());
  CHECK(collector->metrics_text() == expected);
  CHECK(collector->metrics_text() == expected);  // the second from the kept text
}
