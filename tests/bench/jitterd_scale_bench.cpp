// SPDX-License-Identifier: Apache-2.0
// jitterd_scale_bench: what jitterd's housekeeping costs on a machine of 256 and 1,024 CPUs, measured
// on synthetic inputs through the real code (issue 14, "Everything else at 1024 CPUs"). A
// generated sysfs/procfs tree of the machine's size (synthetic_host.h) is read by the real readers
// and probes; the samplers' state objects are built without threads and advanced by the real
// window step; scrapes go through the real Collector and prometheus-cpp's serializer. Start to
// READY=1 is the real daemon on this machine. A program, not a test: it prints each figure beside
// its goal and checks only that it measured what it meant to (CPUs read, IRQ rows parsed), exiting
// 1 if not.
//
// Usage: jitterd_scale_bench [--daemon PATH] [--config FILE] [--cpus 256,1024] [--quick]
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.h"
#include "export/build_info.h"
#include "export/collector.h"
#include "export/text_format.h"
#include "export/web_content.h"
#include "host/affinity.h"
#include "host/cache_topology.h"
#include "host/cpu_list.h"
#include "host/interrupt_counts.h"
#include "host/posture.h"
#include "host/text.h"
#include "host/topology.h"
#include "measure/counter_calibration.h"
#include "probes/attribution_probe.h"
#include "probes/c2c_probe.h"
#include "probes/posture_probe.h"
#include "probes/probe_registry.h"
#include "sampling/probe_context.h"
#include "sampling/sampler_set.h"
#include "sampling/sampling_plan.h"
#include "synthetic_host.h"
#include "watch/counts_engine.h"

using namespace jitterd;
using ScaleClock = std::chrono::steady_clock;

namespace {

constexpr double kSyntheticHertz = 2.4e9;  // the synthetic samplers' counter

double ms_since(ScaleClock::time_point start) {
  return std::chrono::duration<double, std::milli>(ScaleClock::now() - start).count();
}

// This thread's CPU time in ms: on a machine shared with other builds, the work's own cost, where
// wall time also counts the waits for a CPU.
double thread_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// Wall and CPU time of one piece of work.
class Stopwatch {
 public:
  Stopwatch() : wall_(ScaleClock::now()), cpu_(thread_cpu_ms()) {}
  void stop(std::vector<double>& wall, std::vector<double>& cpu) const {
    cpu.push_back(thread_cpu_ms() - cpu_);
    wall.push_back(ms_since(wall_));
  }

 private:
  ScaleClock::time_point wall_;
  double cpu_;
};

struct Timing {
  double min = 0, median = 0, max = 0;
};

Timing timing_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2], ms.back()};
}

long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

int failures = 0;

// A check of what was measured: a figure over an empty or wrong tree is no figure.
void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("  CHECK FAILED: %s\n", what.c_str());
  ++failures;
}

const char* verdict(double value, double goal) { return value <= goal ? "meets" : "MISSES"; }

// ---- the samplers' state, without threads ----

struct SyntheticSamplers {
  std::vector<SamplerSettings> settings;
  std::vector<std::unique_ptr<SamplerShared>> shared;
  std::vector<SamplerWindowState> windows;
  std::vector<WindowDetail> details;  // what SamplerSet::summaries_ holds
  std::vector<pid_t> tids;            // the synthetic sampler threads in the generated /proc
  std::uint64_t now = 1'000'000'000'000;
  std::uint64_t rng = 88172645463325252ULL;

  std::uint64_t next_random() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  }
};

SyntheticSamplers make_samplers(const std::vector<int>& cpus) {
  SyntheticSamplers s;
  const TickScale scale(kSyntheticHertz);
  for (int cpu : cpus) {
    SamplerSettings settings;  // the defaults: burst mode, 60 s window, ring of 4096
    settings.cpu = cpu;
    settings.method = default_tick_method();
    settings.scale = scale;
    // As SamplerWorker::prepare sizes them: 250 ms slots over the window, plus 8.
    const std::uint64_t slot_ticks = scale.from_ns(250'000'000);
    const auto slot_count = static_cast<std::size_t>(settings.window / std::chrono::milliseconds(250)) + 8;
    s.shared.push_back(std::make_unique<SamplerShared>(settings.ring_capacity, slot_ticks, slot_count));
    s.windows.emplace_back(scale.from_ns(static_cast<std::uint64_t>(settings.window.count())));
    s.settings.push_back(settings);
  }
  s.details.resize(cpus.size());
  return s;
}

// One second of sampling on every synthetic sampler: 20,000 gaps (a sampler sees millions; what
// costs the window step is how many buckets change, not the counts): 97% at the loop's floor
// (20-27 ns), 2.5% spread log-uniformly over 27 ns-1 us, 0.5% over 1-100 us, which changes about
// 80 buckets a second, as a busy machine's tail does; 40 interruptions; the window max per 250 ms
// slot.
void sample_one_second(SyntheticSamplers& s) {
  const std::uint64_t second = static_cast<std::uint64_t>(kSyntheticHertz);
  const auto log_uniform = [&](double lo, double hi) {
    const double u = static_cast<double>(s.next_random() >> 11) / 9007199254740992.0;
    return static_cast<std::uint64_t>(lo * std::exp(u * std::log(hi / lo)));
  };
  for (std::size_t i = 0; i < s.shared.size(); ++i) {
    SamplerShared& shared = *s.shared[i];
    std::uint64_t largest = 0;
    for (int k = 0; k < 20000; ++k) {
      const std::uint64_t pick = s.next_random() % 1000;
      const std::uint64_t gap = pick < 970   ? 48 + pick % 16
                                : pick < 995 ? log_uniform(64, 2400)
                                             : log_uniform(2400, 240000);
      shared.histogram.record(gap);
      largest = std::max(largest, gap);
    }
    for (int slot = 1; slot <= 4; ++slot) shared.window_max.publish(s.now + second * slot / 4 - 1, largest);
    publish(shared.sampled_ticks, shared.sampled_ticks.load() + second / 10);
    publish(shared.interruption_count, shared.interruption_count.load() + 40 + i % 7);
    publish(shared.interrupted_ticks, shared.interrupted_ticks.load() + 40 * 4800);
  }
  s.now += second;
}

// What SamplerSet::update_windows() does once a second, over the synthetic state: the sampler
// threads' context switches read from the generated /proc (<pid>/task opened once, as SamplerSet
// keeps it; at most kSwitchReadsPerUpdate of them, in turn), then each sampler's detail rewritten
// in place by the real window step.
void update_windows(SyntheticSamplers& s, const Directory& own_tasks, std::uint64_t sequence) {
  static HistogramSnapshot scratch;
  static std::vector<std::optional<ContextSwitches>> switches;
  FileBuffer buffer;
  switches.resize(s.shared.size());
  for (std::size_t i = 0; i < s.shared.size(); ++i)
    if (reads_switches_at(i, s.shared.size(), sequence))
      switches[i] = read_thread_context_switches(own_tasks, s.tids[i], buffer);
  for (std::size_t i = 0; i < s.shared.size(); ++i) {
    advance_sampler_window(s.windows[i], *s.shared[i], s.settings[i], s.now, scratch, s.details[i]);
    s.details[i].context_switches = switches[i];
    s.details[i].sequence = sequence;
  }
}

// ---- the probes ----

ProbeContext synthetic_context(const synthetic::SyntheticHost& host, const std::vector<int>& sampled,
                               SyntheticSamplers& samplers) {
  ProbeContext context;
  context.host = host.reader();
  context.method = default_tick_method();
  context.frequency.hertz = kSyntheticHertz;
  context.frequency.source = "synthetic";
  context.sampled = sampled;
  std::map<int, const SamplerShared*> by_cpu;
  for (std::size_t i = 0; i < sampled.size(); ++i) by_cpu[sampled[i]] = samplers.shared[i].get();
  context.sampler_of = [by_cpu](int cpu) -> const SamplerShared* {
    const auto found = by_cpu.find(cpu);
    return found == by_cpu.end() ? nullptr : found->second;
  };
  context.run_on_cpu = [](int cpu, const std::function<void()>&) {
    throw std::runtime_error("cpu " + std::to_string(cpu) + " is synthetic: nothing can run there");
  };
  return context;
}

ProbeStatus status_of(const std::string& name, ProbeResult result, double seconds) {
  ProbeStatus status(name);
  status.ran = true;
  status.success = true;
  status.duration_seconds = seconds;
  status.last_run_unix_seconds = 1795000000;
  status.result = std::move(result);
  return status;
}

// The machine-wide probes (clock, kernel_cost, pinning, pacing) run for real on this machine with
// the default settings: their series do not depend on the machine's size.
std::vector<ProbeStatus> machine_wide_probes() {
  std::vector<ProbeStatus> out;
  try {
    const HostReader host;
    SamplingPlan plan = make_sampling_plan(Config{}, host, current_affinity());
    const CounterFrequency frequency = counter_frequency(plan.method, std::chrono::milliseconds(200));
    ProbeContext context = make_probe_context(plan, host, frequency);
    for (const char* name : {"clock", "kernel_cost", "pinning", "pacing"}) {
      const std::unique_ptr<Probe> probe = make_probe(name, plan.config.probes);
      const auto start = ScaleClock::now();
      ProbeStatus status = run_probe(*probe, context);
      std::printf("  %s probe on this machine: %s in %.0f ms, %zu series\n", name,
                  status.success ? "ran" : ("failed: " + status.error).c_str(), ms_since(start),
                  status.result.metrics.size());
      if (status.success) out.push_back(std::move(status));
    }
  } catch (const std::exception& e) {
    std::printf("  machine-wide probes not run: %s\n", e.what());
  }
  return out;
}

// c2c records for a plan: latencies by relation as a multi-socket AMD server has them. Synthesised:
// a pair cannot be measured on CPUs this machine does not have.
std::vector<PairRecord> synthetic_c2c_records(const PairPlan& plan) {
  std::vector<PairRecord> records;
  for (const CpuPair& pair : plan.pairs) {
    const double ns = pair.relation == CpuRelation::smt_sibling    ? 8
                      : pair.relation == CpuRelation::shared_l2    ? 12
                      : pair.relation == CpuRelation::shared_l3    ? 25
                      : pair.relation == CpuRelation::same_package ? 110
                                                                   : 250;
    PairRecord r;
    r.pair = pair;
    r.samples = 100;
    r.min = ns * 0.9e-9;
    r.p10 = ns * 0.95e-9;
    r.median = ns * 1e-9;
    r.p90 = ns * 1.1e-9;
    r.sum = r.median * 100;
    r.line_node = pair.node_a;
    r.unix_seconds = 1795000000;
    r.duration_seconds = 0.008;
    r.measured = true;
    records.push_back(r);
  }
  return records;
}

// ---- one machine size ----

struct SizeFigures {
  int cpus = 0;
  double scrape_ms = 0;
};

void header(const char* title) { std::printf("\n-- %s\n", title); }

// "CPU median 12.3 ms (min 11.0, max 14.2), wall median 20.1 ms"
std::string figure(const std::vector<double>& cpu, const std::vector<double>& wall) {
  const Timing c = timing_of(cpu), w = timing_of(wall);
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, "CPU median %.2f ms (min %.2f, max %.2f), wall median %.2f ms", c.median,
                c.min, c.max, w.median);
  return buffer;
}

double cpu_median(const std::vector<double>& cpu) { return timing_of(cpu).median; }

// Gaps of one second on every synthetic sampler (see sample_one_second), then the window step.
SizeFigures run_size(const synthetic::HostShape& shape, const std::vector<ProbeStatus>& machine_probes,
                     bool quick) {
  const int cpus = synthetic::shape_cpus(shape);
  std::printf("\n==== %d CPUs: %d sockets x %d L3 domains x %d cores x %d threads, %d device IRQs ====\n", cpus,
              shape.sockets, shape.l3_per_socket, shape.cores_per_l3, shape.threads_per_core, shape.device_irqs);
  const auto written = ScaleClock::now();
  // On tmpfs where there is one: in memory like sysfs and procfs, and quick to write.
  const std::filesystem::path shm = "/dev/shm";
  synthetic::SyntheticHost host(shape,
                                std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path());
  std::printf("tree written in %.0f ms under %s; /proc/interrupts %.1f MB\n", ms_since(written),
              host.root().c_str(), static_cast<double>(host.interrupts_bytes()) / 1e6);
  const HostReader reader = host.reader();
  const int repeats = quick ? 2 : 5;

  // Every CPU is sampled: the literal "N sampled CPUs" of the table.
  std::vector<int> sampled(static_cast<std::size_t>(cpus));
  for (int cpu = 0; cpu < cpus; ++cpu) sampled[static_cast<std::size_t>(cpu)] = cpu;
  const long rss_before = status_kib("VmRSS:");
  SyntheticSamplers samplers = make_samplers(sampled);
  const long rss_allocated = status_kib("VmRSS:");
  std::vector<pid_t> tids;
  for (int cpu : sampled) tids.push_back(static_cast<pid_t>(500000 + cpu));
  host.add_pinned_threads(::getpid(), "jitterd", sampled, tids);
  samplers.tids = tids;
  const Directory own_tasks = reader.proc_dir(std::to_string(::getpid()) + "/task");

  header("topology and c2c plan");
  std::vector<double> read_wall, read_cpu, plan_wall, plan_cpu;
  PairPlan plan;
  std::vector<CpuPlacement> placements;
  Topology topology;
  const C2cSettings c2c;  // representative
  for (int i = 0; i < repeats; ++i) {
    const Stopwatch reading;
    topology = read_topology(reader);
    std::vector<std::string> problems;
    placements = read_placements(reader, topology, &problems);
    reading.stop(read_wall, read_cpu);
    expect(problems.empty(), "placements read without problems (first: " +
                                 (problems.empty() ? std::string() : problems.front()) + ")");
    const std::vector<int> scope = c2c_scope(c2c, sampled, topology.online);
    const Stopwatch planning;
    plan = plan_pairs(c2c.pairs, scope, sampled, placements);
    planning.stop(plan_wall, plan_cpu);
  }
  std::set<CpuRelation> classes;
  for (const CpuPair& pair : plan.pairs) classes.insert(pair.relation);
  const std::size_t c2c_series = 9 * plan.pairs.size() + 5 * classes.size() + 3;
  expect(static_cast<int>(topology.online.size()) == cpus, "every CPU online");
  expect(static_cast<int>(placements.size()) == cpus, "a placement per CPU");
  expect(classes.size() == 4, "4 relation classes (smt_sibling, shared_l3, same_package, cross_package)");
  std::printf("CPUs read: %zu online, %zu placements, %zu isolated, %zu nohz_full\n", topology.online.size(),
              placements.size(), topology.isolated.size(), topology.nohz_full.size());
  std::printf("topology + caches + nodes read (start-up and reload): %s\n", figure(read_cpu, read_wall).c_str());
  std::printf("c2c representative plan: %s [goal <= 10 ms: %s]; %zu pairs, %zu classes, %zu series\n",
              figure(plan_cpu, plan_wall).c_str(), verdict(cpu_median(plan_cpu), 10), plan.pairs.size(),
              classes.size(), c2c_series);

  header("posture reading and checklist (the posture probe's run)");
  ProbeContext context = synthetic_context(host, sampled, samplers);
  PostureProbe posture(PostureSettings{});
  std::vector<double> posture_wall, posture_cpu;
  ProbeResult posture_result;
  for (int run = 0; run <= repeats; ++run) {
    host.write_counters(static_cast<std::uint64_t>(run));
    const Stopwatch running;
    posture_result = posture.run(context);
    // The first run has no earlier reading to find the IRQs that fired: not counted.
    if (run > 0) running.stop(posture_wall, posture_cpu);
  }
  // Its reading alone (files), to tell it from the checks and metrics.
  std::vector<double> reading_wall, reading_cpu;
  Posture read_back;
  for (int run = 0; run < repeats; ++run) {
    const Stopwatch reading;
    read_back = read_posture(reader);
    reading.stop(reading_wall, reading_cpu);
  }
  std::printf("of which read_posture (%zu CPUs' files, %zu IRQ directories, %zu tasks): %s\n",
              read_back.online.size(), read_back.irqs.size(), read_back.tasks.size(),
              figure(reading_cpu, reading_wall).c_str());
  const std::size_t checklist = posture_result.tables.empty() ? 0 : posture_result.tables.front().rows.size();
  std::printf("run (later runs, with the IRQs fired since the previous): %s [goal <= 200 ms: %s]\n",
              figure(posture_cpu, posture_wall).c_str(), verdict(cpu_median(posture_cpu), 200));
  std::printf("checklist lines %zu, series %zu, unreadable files %zu\n", checklist, posture_result.metrics.size(),
              posture_result.notes.size());
  for (std::size_t i = 0; i < posture_result.notes.size() && i < 3; ++i)
    std::printf("  problem: %s\n", posture_result.notes[i].c_str());
  expect(checklist > static_cast<std::size_t>(cpus), "a checklist line per sampled CPU at least");

  header("attribution window (read and diff /proc/interrupts and /proc/softirqs)");
  std::vector<double> raw_wall, raw_cpu;
  std::size_t irq_rows = 0, columns = 0, softirq_rows = 0, deltas = 0;
  for (int run = 0; run < repeats; ++run) {
    host.write_counters(static_cast<std::uint64_t>(run));
    const InterruptSnapshot before = read_interrupt_counts(reader, nullptr);
    host.write_counters(static_cast<std::uint64_t>(run + 1));
    const Stopwatch diffing;
    const InterruptSnapshot after = read_interrupt_counts(reader, nullptr);
    const std::map<int, std::vector<SourceDelta>> by_cpu = per_cpu_deltas(before, after, sampled);
    diffing.stop(raw_wall, raw_cpu);
    irq_rows = after.interrupts.rows.size();
    columns = after.interrupts.cpus.size();
    softirq_rows = after.softirqs.rows.size();
    deltas = 0;
    for (const auto& [cpu, list] : by_cpu) deltas += list.size();
  }
  AttributionProbe attribution(AttributionSettings{});
  std::vector<double> attribution_wall, attribution_cpu;
  ProbeResult attribution_result;
  for (int run = 0; run <= repeats; ++run) {
    host.write_counters(static_cast<std::uint64_t>(10 + run));
    sample_one_second(samplers);
    const Stopwatch running;
    attribution_result = attribution.run(context);
    if (run > 0) running.stop(attribution_wall, attribution_cpu);  // the first run takes the baseline
  }
  std::printf("IRQ lines parsed: %zu rows x %zu CPU columns; softirq rows %zu; per-CPU deltas found %zu\n",
              irq_rows, columns, softirq_rows, deltas);
  std::printf("read + parse + diff (one reading, the deltas of every sampled CPU): %s [goal <= 50 ms: %s]\n",
              figure(raw_cpu, raw_wall).c_str(), verdict(cpu_median(raw_cpu), 50));
  std::printf("the attribution probe's window run: %s [goal <= 50 ms: %s]; %zu series\n",
              figure(attribution_cpu, attribution_wall).c_str(), verdict(cpu_median(attribution_cpu), 50),
              attribution_result.metrics.size());
  expect(static_cast<int>(columns) == cpus, "a /proc/interrupts column per CPU");
  expect(irq_rows >= static_cast<std::size_t>(shape.device_irqs), "every device IRQ row parsed");
  expect(deltas >= static_cast<std::size_t>(cpus), "deltas on every CPU");

  header("watch reading (the counts method: every CPU watched, an application thread pinned to each)");
  {
    std::vector<pid_t> app_tids;
    for (int cpu : sampled) app_tids.push_back(static_cast<pid_t>(700000 + cpu));
    host.add_pinned_threads(424242, "trader-poll", sampled, app_tids);
    CountsEngine engine({{"trader*"}, "", ""}, sampled);
    std::vector<double> watch_wall, watch_cpu;
    WatchReading reading;
    for (int run = 0; run <= repeats; ++run) {
      host.write_counters(static_cast<std::uint64_t>(100 + run));
      const Stopwatch running;
      reading = engine.read(reader, static_cast<double>(run));
      if (run > 0) running.stop(watch_wall, watch_cpu);  // the first reading takes the baseline
    }
    std::size_t threads = 0;
    for (const WatchedCpu& c : reading.cpus) threads += c.application_threads;
    std::vector<double> walk_wall, walk_cpu;
    for (int run = 0; run < repeats; ++run) {
      const Stopwatch walking;
      const ApplicationSearch found = find_application_threads(reader, {{"trader*"}, "", ""});
      walking.stop(walk_wall, walk_cpu);
      expect(found.threads.size() == sampled.size(), "the whole walk finds every application thread");
    }
    std::printf(
        "one reading of %zu watched CPUs and %zu application threads (their process's threads listed): %s "
        "[goal <= 100 ms: %s]\n",
        reading.cpus.size(), threads, figure(watch_cpu, watch_wall).c_str(), verdict(cpu_median(watch_cpu), 100));
    std::printf("the whole walk of /proc by task name, one reading in %d: %s\n", kReadingsPerFullSearch,
                figure(walk_cpu, walk_wall).c_str());
    expect(threads == sampled.size(), "an application thread found on every watched CPU");
  }

  header("the housekeeping thread's per-second window work (SamplerSet::update_windows)");
  const long rss_before_windows = status_kib("VmRSS:");
  std::vector<double> window_wall, window_cpu;
  for (std::uint64_t second = 1; second <= 75; ++second) {
    sample_one_second(samplers);
    const Stopwatch updating;
    update_windows(samplers, own_tasks, second);
    if (second > 62) updating.stop(window_wall, window_cpu);  // the window full: its steady state
  }
  const long rss_windows = status_kib("VmRSS:");
  std::size_t window_buckets = 0;
  for (std::size_t b = 0; b < kHistogramBuckets; ++b)
    window_buckets += samplers.details.front().gaps.counts[b] != 0;
  std::size_t switches_read = 0;
  for (const WindowDetail& d : samplers.details) switches_read += d.context_switches.has_value();
  expect(switches_read == samplers.details.size(), "every sampler thread's context switches read");
  std::printf(
      "per update at steady state (window full, %zu samplers, %zu buckets in use per window, the threads' "
      "context switches read, at most 256 a second): %s = %.2f%% of one core [goal <= 1%%: %s]\n",
      samplers.shared.size(), window_buckets, figure(window_cpu, window_wall).c_str(), cpu_median(window_cpu) / 10,
      verdict(cpu_median(window_cpu) / 10, 1));
  expect(samplers.details.back().summary.valid, "the window summaries are valid");

  header("memory per sampled CPU");
  const std::size_t ring_bytes = samplers.shared.front()->interruptions.storage_bytes();
  const std::size_t max_bytes = samplers.shared.front()->window_max.storage_bytes();
  std::printf(
      "SamplerShared %zu B (histogram %zu B), interruption ring %zu B, window-max slots %zu B; window "
      "detail %zu B\n",
      sizeof(SamplerShared), sizeof(GapHistogram), ring_bytes, max_bytes, sizeof(WindowDetail));
  const double per_cpu_kib =
      static_cast<double>((rss_allocated - rss_before) + (rss_windows - rss_before_windows)) / cpus;
  const double allocated_kib = static_cast<double>(sizeof(SamplerShared) + ring_bytes + max_bytes) / 1024.0;
  if (static_cast<double>(rss_allocated - rss_before) / cpus < allocated_kib / 2) {
    std::printf(
        "note: VmRSS grew less than the %.1f KiB per CPU allocated: the heap an earlier size freed was "
        "reused; run this size alone (--cpus %d) for its memory\n",
        allocated_kib, cpus);
  }
  std::printf(
      "VmRSS: %ld KiB before, %ld KiB with %d samplers' state allocated (+%.1f KiB/CPU), %ld KiB after 75 s "
      "of windows (+%.1f KiB/CPU for the windows); total %.1f KiB per sampled CPU [goal <= 1024 KiB: %s]\n",
      rss_before, rss_allocated, cpus, static_cast<double>(rss_allocated - rss_before) / cpus, rss_windows,
      static_cast<double>(rss_windows - rss_before_windows) / cpus, per_cpu_kib, verdict(per_cpu_kib, 1024));

  header("collect + serialize one scrape");
  const C2cSettings c2c_settings;
  const ProbeResult c2c_now =
      c2c_result(synthetic_c2c_records(plan), c2c_settings, plan.pairs.size(), plan.pairs.size());
  std::vector<ProbeStatus> runs = machine_probes;
  runs.push_back(status_of("posture", posture_result, cpu_median(posture_cpu) / 1e3));
  runs.push_back(status_of("attribution", attribution_result, cpu_median(attribution_cpu) / 1e3));
  runs.push_back(status_of("c2c", c2c_now, 0.5));
  const ProbeStatuses statuses = share_statuses(std::move(runs));
  Collector collector(reader, this_build());
  CounterFrequency frequency;
  frequency.hertz = kSyntheticHertz;
  frequency.source = "synthetic";
  collector.set_samplers(
      [&samplers, &tids] {
        std::vector<SamplerReading> out;
        for (std::size_t i = 0; i < samplers.shared.size(); ++i) {
          SamplerReading r;
          r.settings = samplers.settings[i];
          r.startup.tid = tids[i];
          r.startup.pinned = true;
          r.startup.memory_locked = true;
          r.startup.floor_ticks = 48;
          r.startup.threshold_ticks = 960;
          r.up = true;
          read_sampler_state(*samplers.shared[i], samplers.details[i], r);
          out.push_back(std::move(r));
        }
        return out;
      },
      frequency, default_tick_method());
  collector.set_probes([&statuses] { return statuses; });
  // The parts of a collect: the samplers' readings (no file: the context switches come with the
  // window) and the probes' statuses the scheduler hands out (shared snapshots, not copies).
  std::vector<double> readings_wall, readings_cpu, statuses_wall, statuses_cpu;
  for (int i = 0; i < (quick ? 3 : 10); ++i) {
    const Stopwatch reading;
    std::vector<SamplerReading> readings;
    for (std::size_t k = 0; k < samplers.shared.size(); ++k) {
      SamplerReading r;
      r.startup.tid = tids[k];
      read_sampler_state(*samplers.shared[k], samplers.details[k], r);
      readings.push_back(std::move(r));
    }
    reading.stop(readings_wall, readings_cpu);
    const Stopwatch copying;
    const ProbeStatuses copy = statuses;
    copying.stop(statuses_wall, statuses_cpu);
  }
  std::printf("samplers' readings: %s; the probes' statuses (shared snapshots): %s\n",
              figure(readings_cpu, readings_wall).c_str(), figure(statuses_cpu, statuses_wall).c_str());
  // A scrape as the web server makes it (Collector::metrics_text), after the probes' results text
  // was made on the scheduler's thread as the daemon does after each run (render_probe_results,
  // timed apart: every probe at once here; in the daemon one probe per run), and for comparison
  // prometheus-cpp's Collect() path, which builds every family per call, with its serialization.
  std::vector<double> collect_wall, collect_cpu, serialize_wall, serialize_cpu, total_wall, total_cpu;
  std::string body;
  const Stopwatch first;
  collector.render_probe_results();
  std::vector<double> first_wall, first_cpu;
  first.stop(first_wall, first_cpu);
  for (int i = 0; i < (quick ? 5 : 30); ++i) {
    const Stopwatch whole;
    body = collector.metrics_text();
    whole.stop(total_wall, total_cpu);
  }
  std::string through_families;
  for (int i = 0; i < (quick ? 3 : 10); ++i) {
    const Stopwatch collecting;
    const std::vector<prometheus::MetricFamily> families = collector.Collect();
    collecting.stop(collect_wall, collect_cpu);
    const Stopwatch serializing;
    through_families = serialize_text(families);
    serializing.stop(serialize_wall, serialize_cpu);
  }
  expect(body == through_families, "metrics_text() is serialize_text(Collect()) byte for byte");
  expect(collector.results_made() == statuses.size(), "the scrapes made no probe text");
  const Stopwatch packing;
  const std::optional<std::string> packed = gzip(body);
  std::vector<double> gzip_wall, gzip_cpu;
  packing.stop(gzip_wall, gzip_cpu);
  // Series: one per sample line (each histogram bucket, summary quantile, _sum and _count).
  std::size_t series = 0, per_cpu_series = 0;
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t end = std::min(body.find('\n', at), body.size());
    if (body[at] != '#') {
      ++series;
      if (std::string_view(body.data() + at, end - at).find("cpu=\"") != std::string_view::npos) ++per_cpu_series;
    }
    at = end + 1;
  }
  const double goal = cpus <= 256 ? 5 : 20;
  std::printf(
      "Collect() (every family built): %s\nserialize_text of them: %s\nthe probes' results' text made on the "
      "scheduler's thread (all %zu probes, once per run): CPU %.2f ms\ncollect + serialize one scrape "
      "(metrics_text, as /metrics does): %s [goal <= %.0f ms: %s]\n",
      figure(collect_cpu, collect_wall).c_str(), figure(serialize_cpu, serialize_wall).c_str(), statuses.size(),
      first_cpu.front(), figure(total_cpu, total_wall).c_str(), goal, verdict(cpu_median(total_cpu), goal));
  std::printf(
      "body %.2f MB plain, %.3f MB gzip (level 1, %.1f ms CPU); %zu series, %zu labelled with a cpu: %.1f per "
      "sampled CPU [budget 100: %s]; %zu machine-wide or per pair\n",
      static_cast<double>(body.size()) / 1e6, packed ? static_cast<double>(packed->size()) / 1e6 : 0.0,
      gzip_cpu.front(), series, per_cpu_series, static_cast<double>(per_cpu_series) / cpus,
      verdict(static_cast<double>(per_cpu_series) / cpus, 100), series - per_cpu_series);
  expect(per_cpu_series >= static_cast<std::size_t>(cpus) * 45, "the samplers' series for every CPU");
  return {cpus, cpu_median(total_cpu)};
}

// ---- start to READY=1 ----

void start_to_ready(const std::string& daemon, const std::string& config_path, int runs) {
  header("start to READY=1, the real daemon on this machine");
  // The daemon inherits this process's affinity: it decides which CPUs `cpus: auto` samples.
  std::printf("affinity inherited: cpus %s\n", format_cpu_list(current_affinity()).c_str());
  std::vector<double> ms;
  for (int run = 0; run < runs; ++run) {
    const std::string socket_path =
        "/tmp/jitterd_scale_notify_" + std::to_string(::getpid()) + "_" + std::to_string(run);
    ::unlink(socket_path.c_str());
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      std::printf("  cannot bind %s: %s\n", socket_path.c_str(), std::strerror(errno));
      ++failures;
      return;
    }
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const auto start = ScaleClock::now();
    const pid_t child = ::fork();
    if (child == 0) {
      ::setenv("NOTIFY_SOCKET", socket_path.c_str(), 1);
      const int log = ::open((socket_path + ".log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(log, 1);
      ::dup2(log, 2);
      ::execl(daemon.c_str(), daemon.c_str(), "run", "--config", config_path.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    bool ready = false;
    char buffer[4096];
    while (!ready) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer - 1, 0);
      if (n < 0) break;
      buffer[n] = '\0';
      for (const std::string_view line : split_lines(std::string_view(buffer, static_cast<std::size_t>(n))))
        ready = ready || line == "READY=1";
    }
    const double elapsed = ms_since(start);
    ::kill(child, SIGTERM);
    int status = 0;
    ::waitpid(child, &status, 0);
    ::close(fd);
    ::unlink(socket_path.c_str());
    if (!ready) {
      std::printf("  run %d: no READY=1 within 10 s (exit status %d); the daemon's log:\n", run, status);
      std::ifstream log(socket_path + ".log");
      for (std::string line; std::getline(log, line);) std::printf("    %s\n", line.c_str());
      ::unlink((socket_path + ".log").c_str());
      ++failures;
      return;
    }
    ::unlink((socket_path + ".log").c_str());
    ms.push_back(elapsed);
  }
  const Timing t = timing_of(ms);
  std::printf("%d runs: median %.0f ms (min %.0f, max %.0f) [goal <= 2000 ms: %s]\n", runs, t.median, t.min, t.max,
              verdict(t.median, 2000));
}

// The shipped configuration, listening on an ephemeral loopback port.
std::string loopback_config(const std::string& shipped) {
  std::ifstream in(shipped);
  if (!in) throw std::runtime_error(shipped + ": cannot read");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "listen_address: \"0.0.0.0:9978\"";
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error(shipped + ": no " + from + " line");
  text.replace(at, from.size(), "listen_address: \"127.0.0.1:0\"");
  const std::string path = "/tmp/jitterd_scale_config_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  std::string daemon, shipped = "config/jitterd.yaml";
  std::vector<int> sizes = {256, 1024};
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--daemon" && i + 1 < argc) {
      daemon = argv[++i];
    } else if (arg == "--config" && i + 1 < argc) {
      shipped = argv[++i];
    } else if (arg == "--cpus" && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      std::replace(list.begin(), list.end(), ',', ' ');
      for (const std::string_view word : split_words(list)) sizes.push_back(parse_number<int>(word).value_or(0));
    } else if (arg == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: jitterd_scale_bench [--daemon PATH] [--config FILE] [--cpus 256,1024] [--quick]\n");
      return 2;
    }
  }
  std::printf("jitterd_scale_bench: %ld CPUs here; timings are wall time on this machine\n",
              ::sysconf(_SC_NPROCESSORS_ONLN));
  header("machine-wide probes (default settings, this machine)");
  const std::vector<ProbeStatus> machine_probes = quick ? std::vector<ProbeStatus>{} : machine_wide_probes();
  for (int cpus : sizes) {
    synthetic::HostShape shape;
    if (cpus == 1024) {
      shape = {4, 8, 16, 2, 1000, 4};
    } else if (cpus == 256) {
      shape = {2, 4, 16, 2, 1000, 4};
    } else if (cpus == 512) {
      shape = {8, 4, 8, 2, 1000, 4};
    } else {
      std::fprintf(stderr, "jitterd_scale_bench: --cpus takes 256, 512 or 1024, got %d\n", cpus);
      return 2;
    }
    run_size(shape, machine_probes, quick);
  }
  if (!daemon.empty()) start_to_ready(daemon, loopback_config(shipped), quick ? 2 : 5);
  if (failures)
    std::printf("\n%d check(s) failed: the figures above did not measure what they should\n", failures);
  return failures ? 1 : 0;
}
