// SPDX-License-Identifier: Apache-2.0
// The one baseline recorder: the fingerprint recipe, its unknown fields, the sub-windows it
// records from tick counts.
#include "report/baseline_recorder.h"

#include <catch2/catch.hpp>

using namespace jitterd;

namespace {

MachineFacts recorder_facts() {
  MachineFacts facts;
  facts.fingerprint.kernel = "6.1.0-9-amd64";
  facts.fingerprint.cpu_model = "Example CPU";
  facts.fingerprint.hypervisor = "no";
  facts.hostname = "box";
  facts.governors = {{1, "performance"}, {2, "performance"}};
  facts.clocksource = "tsc";
  return facts;
}

}  // namespace

TEST_CASE("the fingerprint recipe gives every field in one order", "[baseline_recorder]") {
  const BaselineFields fields = baseline_fingerprint(recorder_facts());
  std::vector<std::string> keys;
  for (const auto& [key, value] : fields) keys.push_back(key);
  CHECK(keys == baseline_fingerprint_keys());
  CHECK(keys == std::vector<std::string>{"kernel", "cmdline", "microcode", "bios_vendor", "bios_version",
                                         "bios_date", "cpu_model", "hypervisor", "hostname", "governor",
                                         "clocksource", "isolation"});
  CHECK(field_value(fields, "governor") == "performance");
  CHECK(field_value(fields, "clocksource") == "tsc");
  MachineFacts mixed = recorder_facts();
  mixed.governors[2] = "powersave";
  CHECK(field_value(baseline_fingerprint(mixed), "governor") == "1:performance 2:powersave");
  mixed.governors.clear();
  CHECK(field_value(baseline_fingerprint(mixed), "governor").empty());
}

TEST_CASE("a field the source cannot know is left out and named with why", "[baseline_recorder]") {
  BaselineRecording r;
  r.machine = recorder_facts();
  r.machine.hostname.clear();
  r.unknown_fields = {"hostname"};
  r.unknown_why = "no exported metric carries it";
  r.tick_method = "rdtsc";
  r.counter_hertz = 1e9;
  r.counter_source = "cpuid";
  r.cpus = {1, 2, 3};
  r.configuration = {{"duty_cycle", "continuous"}};
  r.created_unix_seconds = 1.7e9;
  const Baseline b = record_baseline(r, {});
  CHECK(b.fingerprint.size() == baseline_fingerprint_keys().size() - 1);
  CHECK(std::none_of(b.fingerprint.begin(), b.fingerprint.end(),
                     [](const auto& field) { return field.first == "hostname"; }));
  CHECK(field_value(b.configuration, kFingerprintUnknownKey) == "hostname: no exported metric carries it");
  CHECK(field_value(b.configuration, "cpus") == "1-3");
  CHECK(field_value(b.configuration, "sub_window") == "1s");
  CHECK(b.configuration.front().first == "cpus");
  CHECK(b.sub_window_seconds == kSubWindowSeconds);
  CHECK(b.created == "2023-11-14T22:13:20Z");
}

TEST_CASE("sub-windows and totals come from tick counts", "[baseline_recorder]") {
  GapCountsTicks added;
  added.gaps.counts[histogram_bucket_index(100)] = 10;
  added.sampled_ticks = 500'000'000;
  added.interruptions = 2;
  added.interrupted_ticks = 1'000;
  BaselineCpu cpu;
  add_sub_window(cpu, added, 1e9);
  add_sub_window(cpu, GapCountsTicks{}, 1e9);  // nothing sampled: no sub-window
  REQUIRE(cpu.sub_windows.size() == 1);
  CHECK(cpu.sub_windows[0].sampled_seconds == Approx(0.5));
  CHECK(cpu.sub_windows[0].samples == 10);
  CHECK(cpu.sub_windows[0].interruptions == 2);
  set_totals(cpu, added, 1e9);
  CHECK(cpu.samples == 10);
  CHECK(cpu.sampled_seconds == Approx(0.5));
  CHECK(cpu.stolen_seconds == Approx(1e-6));
}

TEST_CASE("a per-CPU text reads back each CPU's value", "[baseline_recorder]") {
  const std::string one = per_cpu_text({{1, "continuous"}, {2, "continuous"}});
  CHECK(one == "continuous");
  CHECK(per_cpu_value(one, 7) == "continuous");  // one value for every CPU
  const std::string pairs = per_cpu_text({{1, "0.1"}, {12, "0.25"}});
  CHECK(pairs == "1:0.1 12:0.25");
  CHECK(per_cpu_value(pairs, 1) == "0.1");
  CHECK(per_cpu_value(pairs, 12) == "0.25");
  CHECK(per_cpu_value(pairs, 2) == "");  // "12:" is not "2:"
  CHECK(per_cpu_value("", 1) == "");
}
