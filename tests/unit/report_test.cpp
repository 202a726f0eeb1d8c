#include <catch2/catch.hpp>

#include "cli/report.h"

using namespace jitterd;

namespace {
GapReport sample_report() {
  GapReport r;
  r.method = "lfence_rdtsc";
  r.frequency = {2'400'000'000.0, "calibrated_monotonic_raw", 0.5};
  r.duration_seconds = 10;
  CpuGapReport c;
  c.cpu = 3;
  c.samples = 1000;
  c.mean_ticks = 48;
  c.mean_ns = 20;
  c.p50_ns = 20;
  c.max_ns = 25000;
  c.interruptions = 7;
  c.stolen_share = 0.0012;
  c.kept = {{100, 60000}, {9000000, 48000}};
  r.cpus.push_back(c);
  CpuGapReport failed;
  failed.cpu = 5;
  failed.error = "cpu 5: cannot pin the sampler thread: Invalid argument";
  r.cpus.push_back(failed);
  return r;
}
}  // namespace

TEST_CASE("the table has a row per CPU and says how to read it", "[report]") {
  const std::string t = format_report_table(sample_report());
  CHECK_THAT(t, Catch::Contains("lfence_rdtsc at 2400.000 MHz (calibrated_monotonic_raw)"));
  CHECK_THAT(t, Catch::Contains("p99.99_ns"));
  CHECK_THAT(t, Catch::Contains("   3         1000"));
  CHECK_THAT(t, Catch::Contains("cpu 5: not sampled: cpu 5: cannot pin"));
  CHECK_THAT(t, Catch::Contains("upper edge of a histogram bucket"));
}

TEST_CASE("csv has a header and one line per CPU", "[report]") {
  const std::string csv = format_report_csv(sample_report());
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);
  CHECK_THAT(csv, Catch::StartsWith("cpu,samples,mean_ticks"));
  CHECK_THAT(csv, Catch::Contains("\n3,1000,48.000,"));
}

TEST_CASE("json lists kept interruptions on request and escapes text", "[report]") {
  GapReport r = sample_report();
  r.cpus[1].error = "quote \" and\nnewline";
  const std::string with = format_report_json(r, true);
  CHECK_THAT(with, Catch::Contains("\"kept_interruptions\":[[100,60000],[9000000,48000]]"));
  CHECK_THAT(with, Catch::Contains("quote \\\" and\\u000anewline"));
  CHECK_THAT(format_report_json(r, false), !Catch::Contains("kept_interruptions"));
}
