// SPDX-License-Identifier: Apache-2.0
// jitterd_bench: the cost of jitterd's sampler loop against a bare loop with the same counter
// read, on the same CPU, interleaved in one run; the c2c probe's cost per pair and its agreement
// with an independent ping-pong on the same pair; then scrape time and memory. A program, not a
// test: it prints figures for docs/benchmarks.md, it asserts nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/text_serializer.h>

#include "export/collector.h"
#include "export/web_server.h"
#include "host/cpu_list.h"
#include "host/topology.h"
#include "host/trace_events.h"
#include "measure/counter_calibration.h"
#include "measure/sampler_loop.h"
#include "probes/attribution_probe.h"
#include "probes/c2c_probe.h"
#include "sampling/sampling_plan.h"
#include "watch/trace_watch.h"

using namespace jitterd;
using Clock = std::chrono::steady_clock;

namespace {
constexpr int kRounds = 10;
constexpr std::size_t kBareCapacity = 1 << 25;  // gaps stored per bare round: more than 200 ms holds

// The bare loop: read, subtract, store. Its only work beyond the read is one sequential store.
template <TickMethod M>
std::size_t bare_loop(std::uint32_t* gaps, std::size_t capacity, std::uint64_t end_tick) {
  std::uint64_t prev = read_ticks<M>();
  std::size_t n = 0;
  while (n < capacity) {
    const std::uint64_t now = read_ticks<M>();
    gaps[n++] = static_cast<std::uint32_t>(std::min<std::uint64_t>(now - prev, UINT32_MAX));
    prev = now;
    if (now >= end_tick) break;
  }
  return n;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

struct LoopFigures {
  std::uint64_t floor = std::numeric_limits<std::uint64_t>::max();
  HistogramSnapshot quantized;  // every gap through the same log-linear buckets
  std::uint64_t sum = 0;        // exact sum of the gaps, for the exact mean
};

void compare_loops(int cpu, TickMethod method, const TickScale& scale) {
  pin_to(cpu);
  std::vector<std::uint32_t> gaps(kBareCapacity, 0);  // touched before timing starts
  auto shared = std::make_unique<SamplerShared>(4096, scale.from_ns(250'000'000), 16);
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  LoopFigures bare, jitterd;
  const std::uint64_t round_ticks = scale.from_ns(200'000'000);
  GapHistogram bare_histogram;
  for (int round = 0; round < kRounds; ++round) {
    dispatch_tick_method(method, [&]<TickMethod M>() {
      const std::size_t n = bare_loop<M>(gaps.data(), gaps.size(), read_ticks<M>() + round_ticks);
      // Discard the first gap of each round like the sampler's span start does not record one.
      for (std::size_t i = 1; i < n; ++i) {
        bare_histogram.record(gaps[i]);
        bare.sum += gaps[i];
        bare.floor = std::min<std::uint64_t>(bare.floor, gaps[i]);
      }
      static_cast<void>(run_sampler_span<M>(*shared, state, std::numeric_limits<std::uint64_t>::max(),
                                            read_ticks<M>() + round_ticks, stop, cpu));
    });
  }
  bare_histogram.snapshot(bare.quantized);
  shared->histogram.snapshot(jitterd.quantized);
  jitterd.floor = state.min_gap;
  jitterd.sum = state.sampled_ticks;
  const double bare_p50 = static_cast<double>(bare.quantized.quantile(0.5));
  const double loop_p50 = static_cast<double>(jitterd.quantized.quantile(0.5));
  const auto ns = [&](double ticks) { return ticks * 1e9 / scale.hertz(); };
  const double bare_mean = static_cast<double>(bare.sum) / static_cast<double>(bare.quantized.total());
  const double loop_mean = static_cast<double>(jitterd.sum) / static_cast<double>(jitterd.quantized.total());
  const std::string name(to_string(method));
  // The tail, both loops through the same log-linear buckets (upper edges): the loop's own
  // bookkeeping (one gap in kSamplerCheckEvery = 0.098%) would show at p99.9 first.
  constexpr double tail[] = {0.99, 0.999, 0.9999};
  const auto print_row = [&](const char* what, const LoopFigures& f, double mean) {
    std::printf("cpu %d  %-12s %s: floor %5.1f ns  mean %6.2f ns  p50 %6.1f", cpu, name.c_str(), what,
                ns(static_cast<double>(f.floor)), mean, ns(static_cast<double>(f.quantized.quantile(0.5))));
    for (double q : tail) std::printf("  p%g %8.1f", q * 100, ns(static_cast<double>(f.quantized.quantile(q))));
    std::printf(" ns  (%llu gaps)\n", static_cast<unsigned long long>(f.quantized.total()));
  };
  print_row("bare", bare, ns(bare_mean));
  print_row("loop", jitterd, ns(loop_mean));
  std::printf("cpu %d  %-12s ratio loop/bare: floor %.3f  mean %.3f  p50 %.3f (target <= 1.05)\n", cpu,
              name.c_str(), static_cast<double>(jitterd.floor) / static_cast<double>(bare.floor),
              loop_mean / bare_mean, loop_p50 / bare_p50);
  // "One counter step" is the bare loop's floor: one read to the next with nothing else done.
  std::printf("cpu %d  %-12s loop - bare, in counter steps of %.1f ns:", cpu, name.c_str(),
              ns(static_cast<double>(bare.floor)));
  for (double q : tail) {
    const double diff =
        static_cast<double>(jitterd.quantized.quantile(q)) - static_cast<double>(bare.quantized.quantile(q));
    std::printf("  p%g %+.2f", q * 100, diff / static_cast<double>(bare.floor));
  }
  std::printf(" (goal: each within 1)\n\n");
}

std::string http_get(const std::string& address, const std::string& path) {
  const auto colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  std::string body;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[65536];
      for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;)
        body.append(buffer, static_cast<std::size_t>(got));
    }
  }
  close(fd);
  return body;
}

std::string proc_status_field(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  }
  return "?";
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
}

void scrape_costs(const std::vector<int>& cpus, const std::vector<int>& housekeeping, TickMethod method,
                  const CounterFrequency& frequency) {
  restrict_current_thread(housekeeping);
  const TickScale scale(frequency.hertz);
  std::vector<SamplerSettings> settings;
  for (int cpu : cpus) {
    SamplerSettings s;
    s.cpu = cpu;
    s.method = method;
    s.scale = scale;
    s.warmup = std::chrono::milliseconds(100);
    settings.push_back(s);
  }
  const std::string rss_before = proc_status_field("VmRSS");
  auto samplers = std::make_shared<SamplerSet>(settings);
  samplers->start();
  auto collector = std::make_shared<Collector>(HostReader(), this_build());
  collector->set_samplers(samplers, frequency, method);
  WebConfig web_config;
  web_config.listen_address = "127.0.0.1:0";
  WebServer web(web_config, collector);
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    samplers->update_windows();
  }
  std::vector<double> in_process, over_http;
  std::size_t bytes = 0;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = Clock::now();
    const std::string text = prometheus::TextSerializer().Serialize(collector->Collect());
    const auto t1 = Clock::now();
    const std::string response = http_get(web.bound_address(), "/metrics");
    const auto t2 = Clock::now();
    bytes = text.size();
    in_process.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    over_http.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  std::printf(
      "scrape with %zu sampler(s): collect+serialize p50 %.0f us, p99 %.0f us; HTTP GET /metrics p50 %.0f us, "
      "p99 %.0f us; %zu bytes\n",
      cpus.size(), percentile(in_process, 0.5), percentile(in_process, 0.99), percentile(over_http, 0.5),
      percentile(over_http, 0.99), bytes);
  std::printf("memory: VmRSS before samplers%s, with samplers and web server%s, peak%s\n", rss_before.c_str(),
              proc_status_field("VmRSS").c_str(), proc_status_field("VmHWM").c_str());
  samplers->stop();
}
}  // namespace

// The independent measurement, written apart from measure/ping_pong.h on purpose: a
// compare_exchange ping-pong on one line the way core-to-core-latency does it (`cas`), or
// seq_cst load/store the way c2clat does it, timed by steady_clock around each sample of
// `round_trips`. Returns the median one-way ns over `samples`.
double independent_one_way_ns(int cpu_a, int cpu_b, int samples, int round_trips, bool cas) {
  struct alignas(128) Line {
    std::atomic<long> value{0};
  };
  auto line = std::make_unique<Line>();
  // Side `side` (0 or 1) waits for a value of its parity, then hands over the next one.
  const auto hand_over = [&](long expected) {
    if (cas) {
      long seen = expected;
      while (!line->value.compare_exchange_weak(seen, expected + 1)) seen = expected;
    } else {
      while (line->value.load() != expected) {
      }
      line->value.store(expected + 1);
    }
  };
  const long trips = static_cast<long>(samples) * round_trips;
  std::thread responder([&] {
    pin_to(cpu_b);
    for (long i = 0; i < trips; ++i) hand_over(2 * i + 1);
  });
  pin_to(cpu_a);
  std::vector<double> one_way;
  long next = 0;
  for (int s = 0; s < samples; ++s) {
    const auto start = Clock::now();
    for (int r = 0; r < round_trips; ++r, ++next) hand_over(2 * next);
    one_way.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                      (2.0 * round_trips));
  }
  responder.join();
  return percentile(one_way, 0.5);
}

// Per pair of the first (at most 4) online CPUs: the probe's wall time per pair at the default
// 100 × 1000, and its median next to the independent one, alternating, in one run.
void c2c_costs(std::vector<int> cpus, TickMethod method, const CounterFrequency& frequency) {
  if (cpus.size() < 2) {
    std::printf("c2c: skipped, one CPU\n\n");
    return;
  }
  cpus.resize(std::min<std::size_t>(cpus.size(), 4));
  ProbeContext context;
  context.method = method;
  context.frequency = frequency;
  context.run_on_cpu = run_on_pinned_thread;
  const PingPongSettings settings{PingPongMethod::cas, 100, 1000, static_cast<std::uint64_t>(frequency.hertz)};
  PingPongSettings two_lines = settings;
  two_lines.method = PingPongMethod::two_lines;
  std::printf(
      "c2c per pair (%s, 100 samples x 1000 round trips), medians of 5 alternating runs; independent: "
      "the bench's own ping-pong, steady_clock, same sample shape:\n",
      std::string(to_string(method)).c_str());
  std::printf("  %-7s %8s %8s %10s %12s %12s %9s\n", "pair", "pair_ms", "cas_ns", "indep_cas", "two_lines_ns",
              "indep_ld_st", "cas/indep");
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    for (std::size_t j = i + 1; j < cpus.size(); ++j) {
      const CpuPair pair{cpus[i], cpus[j], CpuRelation::cross_package, std::nullopt, std::nullopt};
      std::vector<double> cost_ms, cas_ns, lines_ns, indep_cas_ns, indep_load_store_ns;
      for (int round = 0; round < 5; ++round) {
        const PairRecord cas = measure_pair(context, pair, settings);
        cost_ms.push_back(cas.duration_seconds * 1e3);
        cas_ns.push_back(cas.median * 1e9);
        indep_cas_ns.push_back(independent_one_way_ns(cpus[i], cpus[j], 100, 1000, true));
        lines_ns.push_back(measure_pair(context, pair, two_lines).median * 1e9);
        indep_load_store_ns.push_back(independent_one_way_ns(cpus[i], cpus[j], 100, 1000, false));
      }
      std::printf("  %d-%-5d %8.1f %8.1f %10.1f %12.1f %12.1f %9.3f\n", cpus[i], cpus[j], percentile(cost_ms, 0.5),
                  percentile(cas_ns, 0.5), percentile(indep_cas_ns, 0.5), percentile(lines_ns, 0.5),
                  percentile(indep_load_store_ns, 0.5), percentile(cas_ns, 0.5) / percentile(indep_cas_ns, 0.5));
    }
  }
  std::printf("\n");
}

// What attribution by tracepoints costs the CPU it samples: the sampler loop for 1 s with the
// tracepoints engine's tracepoints (watch/trace_watch.h) open on its CPU, alternating with 1 s without, five times each; the extra stolen
// time divided by the events recorded is the cost of one traced event (on a noisy VM, a bound at
// best: the host's own noise moves both sides).
void tracing_cost(int cpu, TickMethod method, const TickScale& scale) {
  const HostReader host;
  const TraceAvailability availability = TraceEventReader::probe(host, watch_tracepoint_specs());
  if (!availability.available) {
    std::printf("tracing cost: skipped (%s)\n\n", availability.reason.c_str());
    return;
  }
  pin_to(cpu);
  struct Side {
    double interruptions = 0, stolen = 0, sampled = 0, events = 0;
  } sides[2];
  const std::uint64_t threshold = scale.from_ns(1000);
  for (int round = 0; round < 5; ++round) {
    for (int traced = 0; traced < 2; ++traced) {
      std::unique_ptr<TraceEventReader> reader;
      try {
        if (traced)
          reader = std::make_unique<TraceEventReader>(
              host, std::vector<int>{cpu},
              kSampledTraceRingBytes / static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)),
              watch_tracepoint_specs());
      } catch (const std::exception& e) {
        std::printf("tracing cost: skipped (%s)\n\n", e.what());
        return;
      }
      auto shared = std::make_unique<SamplerShared>(4096, scale.from_ns(1'250'000'000), 16);
      SamplerWriterState state;
      std::atomic<bool> stop{false};
      dispatch_tick_method(method, [&]<TickMethod M>() {
        static_cast<void>(run_sampler_span<M>(*shared, state, threshold,
                                              read_ticks<M>() + scale.from_ns(1'000'000'000), stop, cpu));
      });
      Side& side = sides[traced];
      side.interruptions += static_cast<double>(shared->interruption_count.load());
      side.stolen += scale.to_seconds(shared->interrupted_ticks.load());
      side.sampled += scale.to_seconds(state.sampled_ticks);
      if (reader) side.events += static_cast<double>(reader->drain().size());
    }
  }
  const auto share = [](const Side& s) { return s.stolen / s.sampled; };
  std::printf("tracing cost on cpu %d (5 x 1 s each way, interruptions >= 1 us):\n", cpu);
  std::printf("  untraced: %8.0f interruptions/s, stolen %.4f%%\n", sides[0].interruptions / sides[0].sampled,
              100 * share(sides[0]));
  std::printf("  traced:   %8.0f interruptions/s, stolen %.4f%%, %.0f events/s recorded\n",
              sides[1].interruptions / sides[1].sampled, 100 * share(sides[1]),
              sides[1].events / sides[1].sampled);
  if (sides[1].events > 0) {
    std::printf("  extra stolen per recorded event: %.0f ns\n\n",
                (share(sides[1]) - share(sides[0])) * sides[1].sampled / sides[1].events * 1e9);
  }
}

int main() {
  const HostReader host;
  const Topology topology = read_topology(host);
  const CpuSelectionResult selection = select_cpus(CpuRequest{}, topology, current_affinity());
  if (!selection.selection) {
    for (const auto& e : selection.errors) std::fprintf(stderr, "jitterd_bench: %s\n", e.c_str());
    return 77;
  }
  const auto& cpus = selection.selection->sampled;
  std::string model = "unknown CPU";
  if (std::ifstream cpuinfo("/proc/cpuinfo"); cpuinfo) {
    for (std::string line; std::getline(cpuinfo, line);) {
      if (line.rfind("model name", 0) == 0) {
        model = line.substr(line.find(':') + 2);
        break;
      }
    }
  }
  std::printf("machine: %s, %u CPUs online; sampled by auto: %s\n\n", model.c_str(),
              std::thread::hardware_concurrency(), format_cpu_list(cpus).c_str());
  for (TickMethod method : supported_tick_methods()) {
    const CounterFrequency frequency = counter_frequency(method, std::chrono::milliseconds(200));
    const TickScale scale(frequency.hertz);
    for (int cpu : cpus) compare_loops(cpu, method, scale);
  }
  const TickMethod method = default_tick_method();
  tracing_cost(cpus.front(), method, TickScale(counter_frequency(method, std::chrono::milliseconds(200)).hertz));
  c2c_costs(topology.online, method, counter_frequency(method, std::chrono::milliseconds(200)));
  scrape_costs(cpus, selection.selection->housekeeping, method,
               counter_frequency(method, std::chrono::milliseconds(200)));
  return 0;
}
