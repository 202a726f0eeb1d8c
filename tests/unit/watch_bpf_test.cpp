// SPDX-License-Identifier: Apache-2.0
// The watch's BPF engine as the probe exports it, on literal readings: every source named and
// given a cause, figures summed by cause, the duration histogram cumulative, an outlier named by
// who caused it, the latest outliers kept in order and bounded, tick-stop dependencies named; the
// outlier threshold in the configuration. (Loading the program is tested as root by
// fidelity_watch and integration_watch_bpf.)
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "config/config.h"
#include "fake_kernel_watch.h"
#include "probe_result_lookup.h"
#include "probes/watch_paired_result.h"
#include "probes/watch_probe.h"
#include "watch/bpf_watch.h"
#include "watch/ipi_senders.h"

using namespace jitterd;
using jitterd::testing::named;
using jitterd::testing::value;

namespace {

std::size_t source_named(std::string_view name) {
  for (std::size_t s = 0; s < watch_source_count(); ++s)
    if (watch_source_name(s) == name) return s;
  FAIL("no source " << name);
  return 0;
}

PairedCpuFigures bpf_cpu_figures(int cpu) {
  PairedCpuFigures c;
  c.cpu = cpu;
  c.sources.resize(watch_source_count());
  return c;
}

void observe(SourceFigures& f, std::uint64_t ns) {
  f.count += 1;
  f.ns += ns;
  f.max_ns = std::max(f.max_ns, ns);
  std::size_t bucket = 0;
  while (bucket + 1 < kSourceBuckets && (std::uint64_t{2} << bucket) <= ns) ++bucket;
  f.buckets[bucket] += 1;
}

}  // namespace

TEST_CASE("bpf sources: each named, with a cause of attribution's and a class for preemptions", "[watch][bpf]") {
  std::set<std::string_view> names;
  for (std::size_t s = 0; s < watch_source_count(); ++s) {
    CHECK_FALSE(watch_source_name(s).empty());
    CHECK_FALSE(watch_source_cause(s).empty());
    names.insert(watch_source_name(s));
    CHECK((watch_source_cause(s) == "preempted") == !watch_source_task_class(s).empty());
  }
  CHECK(names.size() == watch_source_count());
  CHECK(watch_source_cause(source_named("local_timer")) == "timer");
  CHECK(watch_source_cause(source_named("softirq_HRTIMER")) == "timer");
  CHECK(watch_source_cause(source_named("tlb")) == "tlb");
  CHECK(watch_source_cause(source_named("call_function_single")) == "ipi_call");
  CHECK(watch_source_cause(source_named("softirq_NET_RX")) == "softirq_net");
  CHECK(watch_source_cause(source_named("softirq_RCU")) == "softirq_rcu");  // attribution's cause_of
  CHECK(watch_source_cause(source_named("softirq_HI")) == "softirq_other");
  CHECK(watch_source_cause(source_named("thermal_apic")) == "other_irq");  // the vectors' table
  CHECK(watch_source_task_class(source_named("preempt_stray")) == "stray");
  CHECK(tick_dependency_name(2) == "SCHED");
}

TEST_CASE("bpf result: figures by cause, the histogram, preemptions by class, tick stops", "[watch][bpf]") {
  PairedReading before;
  before.cpus.push_back(bpf_cpu_figures(3));
  PairedReading now = before;
  PairedCpuFigures& c = now.cpus[0];
  observe(c.sources[source_named("local_timer")], 3000);
  observe(c.sources[source_named("local_timer")], 5000);
  observe(c.sources[source_named("softirq_TIMER")], 700);  // a timer's too: 3 timer interruptions
  observe(c.sources[source_named("call_function")], 2000);
  observe(c.sources[source_named("call_function_single")], 4000);
  observe(c.sources[source_named("preempt_stray")], 250000);
  observe(c.sources[source_named("preempt_kernel_percpu")], 20000);
  c.device_irqs[36] = {2, 9000, 6000};
  c.tick_stop_failures[2] = 7;
  c.outliers_lost = 1;
  WatchReading counts;
  counts.window_seconds = 1.0;
  WatchedCpu watched;
  watched.cpu = 3;
  watched.device_irqs[{"36", "virtio0-input"}] = 2;
  counts.cpus.push_back(watched);
  WatchPairedHistory history;
  ProbeResult result;
  for (int i = 0; i < 20; ++i) c.ipi_senders["task" + std::to_string(i)] = static_cast<std::uint64_t>(100 - i);
  c.ipi_senders_other = 5;  // names beyond what the loader keeps
  now.programs.resize(bpf_program_count());
  std::size_t sched_switch = 0;  // the handler's index, by its name
  while (sched_switch < bpf_program_count() && bpf_program_name(sched_switch) != "sched_switch") ++sched_switch;
  REQUIRE(sched_switch < bpf_program_count());
  now.programs[sched_switch] = {{10, 20000}, {}, {1000, 0}};
  jitterd::testing::FakeKernelWatch engine;
  engine.missing = {"irq_vectors:thermal_apic_entry"};
  add_paired_result(now, &before, counts, history, engine, result);

  CHECK(value(result, "jitterd_watch_interruptions_total", {{"cpu", "3"}, {"cause", "timer"}}) == 3);
  CHECK(value(result, "jitterd_watch_stolen_seconds_total", {{"cpu", "3"}, {"cause", "timer"}}) ==
        Approx(8700e-9));
  CHECK(value(result, "jitterd_watch_interruptions_total", {{"cpu", "3"}, {"cause", "ipi_call"}}) == 2);
  CHECK(value(result, "jitterd_watch_interruptions_total", {{"cpu", "3"}, {"cause", "preempted"}}) == 2);
  CHECK(value(result, "jitterd_watch_stolen_seconds_total", {{"cpu", "3"}, {"cause", "preempted"}}) ==
        Approx(270000e-9));
  CHECK(value(result, "jitterd_watch_longest_interruption_seconds", {{"cpu", "3"}, {"cause", "preempted"}}) ==
        Approx(250000e-9));
  CHECK(value(result, "jitterd_watch_interruptions_total", {{"cpu", "3"}, {"cause", "tlb"}}) == 0);
  CHECK(value(result, "jitterd_watch_preemptions_by_class_total", {{"cpu", "3"}, {"class", "stray"}}) == 1);
  CHECK(value(result, "jitterd_watch_preemptions_by_class_total", {{"cpu", "3"}, {"class", "kernel_percpu"}}) ==
        1);
  CHECK(value(result, "jitterd_watch_preemptions_by_class_total", {{"cpu", "3"}, {"class", "jitterd"}}) == 0);
  CHECK(value(result, "jitterd_watch_tick_stop_failures_total", {{"cpu", "3"}, {"dependency", "SCHED"}}) == 7);
  CHECK(value(result, "jitterd_watch_device_irq_seconds_total", {{"irq", "36"}, {"name", "virtio0-input"}}) ==
        Approx(9000e-9));
  CHECK(value(result, "jitterd_watch_bpf_faults_total", {{"cpu", "3"}, {"kind", "outliers_lost"}}) == 1);
  CHECK(value(result, "jitterd_watch_tracepoint_missing", {{"tracepoint", "irq_vectors:thermal_apic_entry"}}) ==
        1);

  // IPI senders: the 16 busiest by name, the other four summed.
  CHECK(named(result, "jitterd_watch_ipis_sent_total").size() == kMaxIpiSendersPerCpu + 1);
  CHECK(value(result, "jitterd_watch_ipis_sent_total", {{"cpu", "3"}, {"sender", "task0"}}) == 100);
  CHECK(value(result, "jitterd_watch_ipis_sent_total", {{"cpu", "3"}, {"sender", "other"}}) ==
        84 + 83 + 82 + 81 + 5);
  CHECK(top_ipi_senders({{"a", 3}}, 2) ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"a", 3}, {"other", 2}});

  // The program's own cost: runs by role, time where it was measured (not on CPUs with no role).
  CHECK(value(result, "jitterd_watch_bpf_runs_total", {{"program", "sched_switch"}, {"role", "watched"}}) == 10);
  CHECK(value(result, "jitterd_watch_bpf_run_seconds_total", {{"program", "sched_switch"}, {"role", "watched"}}) ==
        Approx(20000e-9));
  CHECK(value(result, "jitterd_watch_bpf_runs_total", {{"program", "sched_switch"}, {"role", "none"}}) == 1000);
  CHECK(named(result, "jitterd_watch_bpf_run_seconds_total").size() == 1);
  CHECK(named(result, "jitterd_watch_bpf_runs_total").size() == 2);  // a role without runs is not exported

  const auto histograms = named(result, "jitterd_watch_interruption_duration_seconds");
  REQUIRE(histograms.size() == 1);
  const ProbeMetric& h = *histograms[0];
  CHECK(h.count == 7);
  CHECK(h.sum == Approx(284700e-9));
  // Cumulative, each bound exclusive: under 1.024 us the 700 ns softirq; under 4.096 us also
  // the 2 and 4 us IPIs and the 3 us tick; under 262.144 us everything.
  for (const auto& [bound, n] : h.buckets) {
    if (bound == Approx(1.024e-6)) CHECK(n == 1);
    if (bound == Approx(4.096e-6)) CHECK(n == 4);
    if (bound == Approx(262.144e-6)) CHECK(n == 7);
  }
  CHECK(std::is_sorted(h.buckets.begin(), h.buckets.end()));
}

TEST_CASE("bpf outliers: named by who caused them, the latest kept in order", "[watch][bpf]") {
  PairedOutlier preemption;
  preemption.source = source_named("preempt_stray");
  preemption.id = 4242;
  preemption.name = "noise_injector";
  preemption.duration_ns = 200000;
  CHECK(name_outlier(preemption).who == "noise_injector[4242] (stray)");
  CHECK(name_outlier(preemption).cause == "preempted");
  PairedOutlier irq;
  irq.source = source_named("device_irq");
  irq.id = 36;
  irq.name = "virtio0-input";
  CHECK(name_outlier(irq).who == "irq 36 virtio0-input");
  CHECK(name_outlier(irq).cause == "device_irq");
  PairedOutlier hostile = preemption;
  hostile.name = "evil\nname\x1b";  // a task names itself: nothing unprintable reaches a page
  CHECK(name_outlier(hostile).who.find('\n') == std::string::npos);
  CHECK(name_outlier(hostile).who.find('\x1b') == std::string::npos);
  PairedOutlier timer;
  timer.source = source_named("local_timer");
  CHECK(name_outlier(timer).who == "local_timer");

  WatchPairedHistory history;
  PairedReading reading;
  for (std::uint64_t i = 0; i < kRecentOutliers + 5; ++i) {
    PairedOutlier o = i % 2 ? preemption : timer;
    o.end_ns = i;
    o.cpu = 2;
    reading.outliers.push_back(o);
  }
  reading.outliers_dropped = 3;
  history.add(reading);
  REQUIRE(history.recent.size() == kRecentOutliers);
  CHECK(history.recent.front().outlier.end_ns == 5);
  CHECK(history.recent.back().outlier.end_ns == kRecentOutliers + 4);
  CHECK(history.outliers.at({2, "preempted"}) + history.outliers.at({2, "timer"}) == kRecentOutliers + 5);
  CHECK(history.outliers_dropped == 3);
}

TEST_CASE("configuration: watch.outlier_threshold", "[watch][bpf][config]") {
  CHECK(parse_config("watch:\n  cpus: 1\n", "t.yaml").probes.watch.outlier_threshold ==
        std::chrono::microseconds(10));
  CHECK(parse_config("watch:\n  cpus: 1\n  outlier_threshold: 150us\n", "t.yaml").probes.watch.outlier_threshold ==
        std::chrono::microseconds(150));
  CHECK_THROWS_AS(parse_config("watch:\n  outlier_threshold: 10ns\n", "t.yaml"), ConfigErrors);
}

TEST_CASE("bpf IPI senders: totals by rise, idle entries returned for deletion, names bounded", "[watch][bpf]") {
  IpiSenderTotals totals;
  CHECK(totals.update({{1, "kworker/0:1", 5}, {1, "trader", 2}}).empty());  // new: counted, not idle
  CHECK(totals.totals(1) == std::map<std::string, std::uint64_t>{{"kworker/0:1", 5}, {"trader", 2}});
  // A window later: kworker sent 3 more, trader none: trader's entry is idle, to be deleted.
  const std::vector<std::size_t> idle = totals.update({{1, "kworker/0:1", 8}, {1, "trader", 2}});
  CHECK(idle == std::vector<std::size_t>{1});
  CHECK(totals.totals(1).at("kworker/0:1") == 8);
  // Deleted, then sent again: the program makes the entry anew, from 0; the total goes on.
  CHECK(totals.update({{1, "kworker/0:1", 9}, {1, "trader", 1}}).empty());
  CHECK(totals.totals(1).at("trader") == 3);
  // An entry that could not be deleted is not added again.
  const std::vector<std::size_t> again = totals.update({{1, "kworker/0:1", 9}, {1, "trader", 1}});
  CHECK(again.size() == 2);
  totals.not_deleted({1, "trader", 1});
  CHECK(totals.update({{1, "trader", 1}}) == std::vector<std::size_t>{0});
  CHECK(totals.totals(1).at("trader") == 3);
  // Beyond kMaxIpiSenderNames names a CPU's further names count as other.
  std::vector<IpiSenderEntry> many;
  for (std::size_t i = 0; i < kMaxIpiSenderNames + 10; ++i) many.push_back({2, "s" + std::to_string(i), 1});
  totals.update(many);
  CHECK(totals.totals(2).size() == kMaxIpiSenderNames);
  CHECK(totals.other(2) == 10);
  CHECK(totals.other(1) == 0);
}
