// SPDX-License-Identifier: Apache-2.0
// fleet_bench: jitterd fleet's own side at scale, on synthetic answers of the size Prometheus
// gives for N hosts x 16 sampled CPUs (`fleet_bench [HOSTS]`, 1,000 by default; docs/benchmarks.md,
// "A fleet of 1,000 hosts" and "50,000 hosts"; one size per process, so the peak RSS is its own): each
// batch's four aggregated answers (250 hosts: 92,000 bucket series) as the API's JSON text, parsed
// as the client parses them (prometheus_data), turned into per-CPU figures (add_batch_figures),
// then the cohorts judged with the A/A splits and the drifted hosts (analyse_fleet) and the text
// printed. The answers' size does not depend on the range (the aggregations run in Prometheus), so
// this is the cost of a 24 h range as of a 1 h one; Prometheus's own work is not in it. A program,
// not a test: it prints figures, it asserts nothing.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fleet/fleet_history.h"
#include "fleet/fleet_report.h"

namespace {

using namespace jitterd;
using Clock = std::chrono::steady_clock;

constexpr int kCpus = 16, kBatch = 250;
int host_count = 1000;  // the first argument
const std::vector<double> kBoundsSeconds = [] {
  std::vector<double> b;
  for (int e = -8; e <= -2; ++e)
    for (double m : {1.0, 2.5, 5.0}) b.push_back(m * std::pow(10.0, e));
  b.push_back(0.1);
  return b;
}();

std::string instance(int h) { return fmt::format("host-{:04d}.example.net:9978", h); }

std::string fingerprints_text() {
  std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int h = 0; h < host_count; ++h)
    out += fmt::format(
        R"({}{{"metric":{{"__name__":"jitterd_fingerprint_info","instance":"{}","job":"jitterd","kernel":"{}","cpu_model":"{}","bios_version":"1.4","hypervisor":"no"}},"value":[1800086400,"5760"]}})",
        h == 0 ? "" : ",", instance(h), h % 2 ? "6.6.0-1-amd64" : "6.1.0-13-amd64", h % 3 ? "Xeon X" : "Xeon Y");
  return out + "]}}";
}

// The four answers of hosts [first, first + kBatch), as JSON text.
std::vector<std::string> batch_texts(int first, std::mt19937_64& random) {
  std::lognormal_distribution<double> spread(0, 0.3);
  std::string buckets = R"({"status":"success","data":{"resultType":"vector","result":[)";
  std::string sampled = buckets, interruptions = buckets, stolen = buckets;
  bool any = false;
  for (int h = first; h < first + kBatch; ++h)
    for (int cpu = 0; cpu < kCpus; ++cpu) {
      const std::string cpu_labels = fmt::format(R"("instance":"{}","cpu":"{}")", instance(h), cpu);
      const double total = 8.64e10, tail = spread(random) * (h % 2 ? 2 : 1);
      for (double le : kBoundsSeconds) {
        const double above = le < 1e-7 ? 1 : std::min(1.0, 0.5 * std::pow(1e-7 / le, 1.3) * tail);
        buckets += fmt::format(R"({}{{"metric":{{{},"le":"{}"}},"value":[1800086400,"{:.17g}"]}})", any ? "," : "",
                               cpu_labels, le, total * (1 - above));
        any = true;
      }
      buckets +=
          fmt::format(R"(,{{"metric":{{{},"le":"+Inf"}},"value":[1800086400,"{:.17g}"]}})", cpu_labels, total);
      const char* comma = h == first && cpu == 0 ? "" : ",";
      sampled += fmt::format(R"({}{{"metric":{{{}}},"value":[1800086400,"86000"]}})", comma, cpu_labels);
      interruptions += fmt::format(R"({}{{"metric":{{{}}},"value":[1800086400,"{:.17g}"]}})", comma, cpu_labels,
                                   8.6e6 * spread(random));
      stolen += fmt::format(R"({}{{"metric":{{{}}},"value":[1800086400,"{:.17g}"]}})", comma, cpu_labels,
                            43 * spread(random));
    }
  for (std::string* s : {&buckets, &sampled, &interruptions, &stolen}) *s += "]}}";
  return {buckets, sampled, interruptions, stolen};
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This process's CPU time (user and system): on a shared machine the wall time says more about the
// neighbours than about fleet.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) host_count = std::max(kBatch, std::atoi(argv[1]) / kBatch * kBatch);
  const Clock::time_point begin = Clock::now();
  std::mt19937_64 random(1);
  FleetSelection selection{{1800000000, 1800086400, "24h"}, "kernel", "", {}};
  const std::string where = "bench";
  Clock::time_point start = Clock::now();
  FleetHistory history = fleet_hosts(prometheus_data(200, fingerprints_text(), where), selection, where);
  double parse = seconds_since(start), figures = 0, largest_answer = 0;
  for (int first = 0; first < host_count; first += kBatch) {
    const std::vector<std::string> texts = batch_texts(first, random);
    largest_answer = std::max(largest_answer, static_cast<double>(texts[0].size()));
    start = Clock::now();
    BatchAnswers answers{prometheus_data(200, texts[0], where), prometheus_data(200, texts[1], where),
                         prometheus_data(200, texts[2], where), prometheus_data(200, texts[3], where)};
    parse += seconds_since(start);
    start = Clock::now();
    add_batch_figures(history, answers, where);
    figures += seconds_since(start);
  }
  start = Clock::now();
  const double cpu_before_judging = cpu_seconds();
  const FleetReport report = analyse_fleet(history, selection, {});
  const double judge = seconds_since(start), judge_cpu = cpu_seconds() - cpu_before_judging;
  start = Clock::now();
  const std::string text = fleet_text(report);
  const double print = seconds_since(start);
  std::printf("fleet_bench: %d hosts x %d CPUs, %zu figure rows, batches of %d hosts (largest answer %.1f MiB)\n",
              host_count, kCpus, report.figures.size(), kBatch, largest_answer / (1 << 20));
  std::printf("  parse the answers (JSON)        %8.2f s\n", parse);
  std::printf("  per-CPU figures                 %8.2f s\n", figures);
  std::printf("  judge (tests, %zu A/A splits, drift) %8.2f s (%.2f s of CPU)\n", report.aa.splits, judge,
              judge_cpu);
  std::printf("  print the table                 %8.2f s (%zu bytes)\n", print, text.size());
  std::printf("  wall, all of it                 %8.2f s (%.2f s of CPU)\n", seconds_since(begin), cpu_seconds());
  std::printf("  peak RSS                        %8.1f MiB\n", static_cast<double>(peak_rss_kib()) / 1024);
  std::printf("  verdicts: %zu tests, A/A %zu of %zu, %zu drifted hosts\n", report.tests, report.aa.with_verdict,
              report.aa.splits, report.drift.hosts.size());
  return 0;
}
