// SPDX-License-Identifier: Apache-2.0
// The readers' cadence while every active probe runs (issue 35; docs/benchmarks.md, "Readers'
// cadence"): the longest interval between two runs of a reader (the loops probe, reading a scratch
// directory every second) while the active probes run: clock, kernel_cost, pinning and pacing for
// real on this machine with their default settings, and c2c over every pair of a simulated 64-CPU
// machine (the scale benchmark's synthetic host: its topology plans the pairs; each pair's two
// sides run pinned to two CPUs of this machine, the initiator on the first, the responder on the
// second, so the run lasts what 2,016 real pairs take: on unpinned threads two spinning sides
// could share a CPU and wait a time slice per round trip, and 2,016 pairs did not finish in 15
// minutes on a 2-vCPU guest).
// The same round is run twice, side by side: every probe in one lane (as before issue 35) and the
// readers in their own lane (the daemon now). Prints figures; asserts nothing about time.
//
// Usage: cadence_bench [--samples N] [--round-trips N]   (c2c per pair; defaults as shipped)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "daemon/probe_scheduler.h"
#include "host/affinity.h"
#include "host/text.h"
#include "measure/counter_calibration.h"
#include "probes/c2c_probe.h"
#include "probes/loops_probe.h"
#include "probes/probe_registry.h"
#include "sampling/probe_context.h"
#include "sampling/sampling_plan.h"
#include "synthetic_host.h"

using namespace jitterd;
using BenchClock = std::chrono::steady_clock;

namespace {

double seconds(BenchClock::duration d) { return std::chrono::duration<double>(d).count(); }

// A reader as the registry has it, noting when each of its runs starts.
class TimedReader : public Probe {
 public:
  explicit TimedReader(std::unique_ptr<Probe> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  std::chrono::nanoseconds interval() const override { return inner_->interval(); }
  ProbeResult run(ProbeContext& context) override {
    {
      std::lock_guard lock(mutex_);
      starts_.push_back(BenchClock::now());
    }
    return inner_->run(context);
  }
  std::vector<BenchClock::time_point> starts() const {
    std::lock_guard lock(mutex_);
    return starts_;
  }

 private:
  std::unique_ptr<Probe> inner_;
  mutable std::mutex mutex_;
  std::vector<BenchClock::time_point> starts_;
};

// c2c over every pair of the synthetic machine: the real probe in a context of its own, whose
// run_on_cpu runs a pair's initiator side (asked for from the probe's own thread) pinned to
// `sides[0]` and its responder (asked for from the probe's helper thread) to `sides[1]`.
class SyntheticC2c : public Probe {
 public:
  SyntheticC2c(const synthetic::SyntheticHost& host, C2cSettings settings, std::size_t pairs,
               std::vector<int> sides)
      : probe_(settings), pairs_(pairs), sides_(std::move(sides)) {
    context_.host = host.reader();
    context_.method = default_tick_method();
    context_.frequency.hertz = 1e9;
    context_.frequency.source = "synthetic";
    context_.run_on_cpu = [this](int, const std::function<void()>& work) {
      const bool initiator = std::this_thread::get_id() == runner_;
      run_on_pinned_thread(sides_[initiator ? 0 : 1], work);
    };
  }
  std::string_view name() const override { return probe_.name(); }
  std::chrono::nanoseconds interval() const override { return std::chrono::hours(1); }
  ProbeResult run(ProbeContext& context) override {
    context_.cancel = context.cancel;
    runner_ = std::this_thread::get_id();
    return probe_.run(context_);
  }
  std::size_t pairs() const { return pairs_; }

 private:
  C2cProbe probe_;
  ProbeContext context_;
  std::size_t pairs_;
  std::vector<int> sides_;
  std::thread::id runner_;
};

struct Round {
  std::vector<double> intervals;         // the reader's, seconds
  std::map<std::string, double> active;  // each active probe's run, seconds
  double wall = 0;
};

Round run_round(bool separate_readers, const synthetic::SyntheticHost& host, const C2cSettings& c2c,
                std::size_t pairs, const std::filesystem::path& loops_dir) {
  const HostReader real;
  SamplingPlan plan = make_sampling_plan(Config{}, real, current_affinity());
  const CounterFrequency frequency = counter_frequency(plan.method, std::chrono::milliseconds(200));
  ProbesSettings settings = plan.config.probes;
  settings.loops.enabled = true;
  settings.loops.directory = loops_dir.string();
  std::vector<std::unique_ptr<Probe>> probes;
  // The loops probe: the registry's reader that needs nothing but a directory.
  std::unique_ptr<TimedReader> reader;
  for (std::string_view name : probe_names()) {
    if (!is_reader(name)) continue;
    auto candidate = make_probe(name, settings);
    if (dynamic_cast<LoopsProbe*>(candidate.get()) != nullptr)
      reader = std::make_unique<TimedReader>(std::move(candidate));
  }
  if (!reader) throw std::runtime_error("no loops probe in the registry");
  const TimedReader& timed = *reader;
  probes.push_back(std::move(reader));
  for (std::string_view name : probe_names()) {
    const ProbeFacts* facts = probe_facts(name);
    if (is_reader(name) || !facts->in_baselines) continue;
    if (facts->report_over_cpus != nullptr) continue;  // c2c: the synthetic machine's, below
    probes.push_back(make_probe(name, settings));
  }
  const std::vector<int> allowed = current_affinity();
  if (allowed.size() < 2) throw std::runtime_error("needs two CPUs for a c2c pair's sides");
  probes.push_back(std::make_unique<SyntheticC2c>(host, c2c, pairs, std::vector<int>{allowed[0], allowed[1]}));
  ProbeContext context = make_probe_context(plan, real, frequency);
  ProbeScheduler scheduler(std::move(probes), context, std::chrono::milliseconds(0), nullptr, separate_readers);
  const auto started = BenchClock::now();
  scheduler.start();
  // Until every active probe has run once, then two of the reader's intervals more.
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const ProbeStatuses statuses = scheduler.statuses();
    if (std::all_of(statuses.begin(), statuses.end(), [](const auto& s) { return s->ran; })) break;
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  Round round;
  round.wall = seconds(BenchClock::now() - started);
  scheduler.stop();
  for (const auto& s : scheduler.statuses()) {
    if (is_reader(s->name)) continue;
    round.active[s->name] = s->duration_seconds;
    if (!s->success) std::printf("  %s failed: %s\n", s->name.c_str(), s->error.c_str());
  }
  const auto starts = timed.starts();
  for (std::size_t i = 1; i < starts.size(); ++i) round.intervals.push_back(seconds(starts[i] - starts[i - 1]));
  return round;
}

void print_round(const char* what, const Round& r) {
  std::vector<double> sorted = r.intervals;
  std::sort(sorted.begin(), sorted.end());
  const double longest = sorted.empty() ? 0 : sorted.back();
  const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  double busy = 0;
  std::string runs;
  for (const auto& [name, s] : r.active) {
    busy += s;
    runs += " " + name + " " + std::to_string(s).substr(0, 5) + " s;";
  }
  std::printf(
      "%-28s reader: %zu readings, longest interval %.3f s, median %.3f s | active probes %.1f s:%s wall %.1f s\n",
      what, r.intervals.size() + 1, longest, median, busy, runs.c_str(), r.wall);
}

}  // namespace

int main(int argc, char** argv) {
  C2cSettings c2c;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--samples" && i + 1 < argc) {
      c2c.samples = parse_number<std::size_t>(argv[++i]).value_or(c2c.samples);
    } else if (arg == "--round-trips" && i + 1 < argc) {
      c2c.round_trips = parse_number<std::size_t>(argv[++i]).value_or(c2c.round_trips);
    } else {
      std::fprintf(stderr, "usage: cadence_bench [--samples N] [--round-trips N]\n");
      return 2;
    }
  }
  synthetic::HostShape shape;
  shape = {2, 2, 8, 2, 100, 2};  // 2 sockets x 2 L3 x 8 cores x 2 threads: 64 CPUs
  const synthetic::SyntheticHost host(shape);
  std::vector<int> all;
  for (int cpu = 0; cpu < synthetic::shape_cpus(shape); ++cpu) all.push_back(cpu);
  ProbesSettings over;
  over.c2c = c2c;
  for (std::string_view name : probe_names())
    if (const ProbeFacts* facts = probe_facts(name); facts->report_over_cpus != nullptr)
      c2c = facts->report_over_cpus(over, all).c2c;
  const PairPlan plan = plan_c2c_pairs(c2c, host.reader(), all, nullptr);
  c2c.budget = plan.pairs.size();
  std::printf(
      "cadence_bench: %ld CPUs here; c2c over %zu pairs of a synthetic %d-CPU machine, %zu samples x %zu "
      "round trips per pair\n",
      ::sysconf(_SC_NPROCESSORS_ONLN), plan.pairs.size(), synthetic::shape_cpus(shape), c2c.samples,
      c2c.round_trips);
  const std::filesystem::path loops_dir =
      std::filesystem::temp_directory_path() / ("cadence_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(loops_dir);
  const Round one = run_round(false, host, c2c, plan.pairs.size(), loops_dir);
  print_round("one lane (before issue 35):", one);
  const Round two = run_round(true, host, c2c, plan.pairs.size(), loops_dir);
  print_round("readers' own lane (now):", two);
  const auto longest = [](const Round& r) {
    return r.intervals.empty() ? 0 : *std::max_element(r.intervals.begin(), r.intervals.end());
  };
  std::printf("longest interval between two readings (interval 1 s): %.3f s -> %.3f s (%.1fx shorter)\n",
              longest(one), longest(two), longest(two) > 0 ? longest(one) / longest(two) : 0.0);
  std::filesystem::remove_all(loops_dir);
  return 0;
}
