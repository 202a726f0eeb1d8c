// SPDX-License-Identifier: Apache-2.0
#include "watch/counts_engine.h"

#include <unistd.h>

#include <algorithm>

#include "host/attribution.h"
#include "host/cpu_list.h"
#include "host/text.h"
#include "host/topology.h"
#include "measure/gap_counts.h"

namespace jitterd {
namespace {

// Seconds since boot (CLOCK_BOOTTIME, the clock of a task's start time), or nullopt.
std::optional<double> read_uptime(const HostReader& host) {
  const std::optional<std::string> text = host.read_proc("uptime");
  if (!text) return std::nullopt;
  const std::vector<std::string_view> words = split_words(*text);
  return words.empty() ? std::nullopt : parse_number<double>(words[0]);
}

double clock_ticks_per_second() {
  const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

}  // namespace

std::string device_irq_name(const WatchReading& reading, int cpu, int irq) {
  const std::string number = std::to_string(irq);
  for (const WatchedCpu& c : reading.cpus)
    if (c.cpu == cpu)
      for (const auto& [key, n] : c.device_irqs)
        if (key.first == number) return key.second;
  return "";
}

CountsEngine::CountsEngine(ApplicationSettings application, std::vector<int> cpus)
    : application_(std::move(application)), cpus_(sorted_cpus(std::move(cpus))) {
  for (int cpu : cpus_) states_[cpu].totals.cpu = cpu;
}

WatchReading CountsEngine::read(const HostReader& host, double monotonic_seconds) {
  WatchReading reading;
  if (previous_seconds_) reading.window_seconds = std::max(0.0, monotonic_seconds - *previous_seconds_);
  previous_seconds_ = monotonic_seconds;

  InterruptSnapshot interrupts = read_interrupt_counts(host, &reading.problems);
  count_interrupts(interrupts);
  previous_interrupts_ = std::move(interrupts);

  const std::optional<std::string> schedstat_text = host.read_proc("schedstat");
  reading.other_tasks_measured = schedstat_text.has_value();
  count_cpu_time(schedstat_text ? parse_proc_schedstat(*schedstat_text) : std::map<int, SchedTimes>{});

  // Read before the search: a thread that starts after it is either found now or new next time.
  const std::optional<double> uptime = read_uptime(host);
  count_threads(host, reading);
  previous_uptime_ = uptime;
  count_other_tasks();  // the CPU's run time and the application's, both counted by now

  std::vector<std::string> nohz_problems;  // a kernel without nohz_full: the posture says so, not each reading
  const std::vector<int> nohz_cpus = read_nohz_full(host, nohz_problems);
  for (int cpu : cpus_) {
    WatchedCpu& totals = states_[cpu].totals;
    totals.nohz_full = std::find(nohz_cpus.begin(), nohz_cpus.end(), cpu) != nohz_cpus.end();
    reading.cpus.push_back(totals);
  }
  return reading;
}

void CountsEngine::count_interrupts(const InterruptSnapshot& now) {
  for (int cpu : cpus_) {
    WatchedCpu& totals = states_[cpu].totals;
    totals.online = cpu_column(now.interrupts, cpu).has_value();
    totals.window_timer_interrupts = 0;
  }
  if (!previous_interrupts_) return;
  const std::map<int, std::vector<SourceDelta>> deltas = per_cpu_deltas(*previous_interrupts_, now, cpus_);
  for (const auto& [cpu, sources] : deltas) {
    WatchedCpu& totals = states_[cpu].totals;
    for (const SourceDelta& d : sources) {
      const std::string_view cause = cause_of(d.kind, d.source, d.name);
      if (cause == not_an_interrupt) continue;
      if (d.kind == "softirq") {
        totals.softirqs[std::string(cause)] += d.delta;
        continue;
      }
      totals.interrupts[std::string(cause)] += d.delta;
      if (cause == "timer") totals.window_timer_interrupts += d.delta;
      if (cause != "device_irq") continue;
      const auto key = std::make_pair(d.source, printable(d.name));
      if (totals.device_irqs.count(key) > 0 || totals.device_irqs.size() < kMaxDeviceIrqsPerCpu)
        totals.device_irqs[key] += d.delta;
    }
  }
}

void CountsEngine::count_cpu_time(const std::map<int, SchedTimes>& schedstat) {
  for (int cpu : cpus_) {
    const auto now = schedstat.find(cpu);
    const auto before = previous_schedstat_.find(cpu);
    if (now == schedstat.end()) continue;
    if (before != previous_schedstat_.end())
      states_[cpu].cpu_run_ns += counter_rise(now->second.run_ns, before->second.run_ns);
  }
  previous_schedstat_ = schedstat;
}

void CountsEngine::count_threads(const HostReader& host, WatchReading& reading) {
  const bool full = readings_since_full_search_ >= kReadingsPerFullSearch;
  ApplicationSearch search = full ? find_application_threads(host, application_)
                                  : find_application_threads_in(host, application_, known_pids_);
  readings_since_full_search_ = full ? 1 : readings_since_full_search_ + 1;
  known_pids_.clear();
  for (const ApplicationThread& thread : search.threads) known_pids_.push_back(thread.pid);
  std::sort(known_pids_.begin(), known_pids_.end());
  known_pids_.erase(std::unique(known_pids_.begin(), known_pids_.end()), known_pids_.end());
  // Gone (a restart?): look everywhere at the next reading.
  if (search.threads.empty()) readings_since_full_search_ = kReadingsPerFullSearch;
  reading.problems.insert(reading.problems.end(), search.problems.begin(), search.problems.end());
  const double ticks_per_second = clock_ticks_per_second();
  std::map<ThreadKey, ThreadState> seen;
  for (int cpu : cpus_) states_[cpu].totals.application_threads = 0;
  for (ApplicationThread& thread : search.threads) {
    const int cpu = watched_cpu_of(thread, cpus_);
    if (cpu < 0) {
      if (++reading.application_threads_elsewhere <= kListedThreadsElsewhere)
        reading.threads_elsewhere.push_back(thread);
      continue;
    }
    const std::string task = std::to_string(thread.pid) + "/task/" + std::to_string(thread.tid);
    const std::optional<std::string> schedstat_text = host.read_proc(task + "/schedstat");
    const std::optional<SchedTimes> sched =
        schedstat_text ? parse_thread_schedstat(*schedstat_text) : std::nullopt;
    const std::optional<ContextSwitches> switches = read_thread_context_switches(host, thread.pid, thread.tid);
    if (!sched || !switches) continue;  // exited meanwhile
    const ThreadKey key{thread.tid, thread.start_ticks};
    ThreadState state;  // a thread started since the last reading: all it counted is new
    if (const auto known = threads_.find(key); known != threads_.end()) {
      state = known->second;
    } else if (!previous_uptime_ ||
               static_cast<double>(thread.start_ticks) / ticks_per_second < *previous_uptime_) {
      state.sched = *sched;  // there before jitterd looked: counts from now
      state.switches = *switches;
    }
    WatchedCpu& totals = states_[cpu].totals;
    const std::uint64_t preempted = counter_rise(switches->involuntary, state.switches.involuntary);
    const std::uint64_t slept = counter_rise(switches->voluntary, state.switches.voluntary);
    const std::uint64_t waited = counter_rise(sched->wait_ns, state.sched.wait_ns);
    const std::uint64_t ran = counter_rise(sched->run_ns, state.sched.run_ns);
    totals.preemptions += preempted;
    totals.voluntary_switches += slept;
    totals.wait_ns += waited;
    totals.application_run_ns += ran;
    ++totals.application_threads;
    state.totals.preemptions += preempted;
    state.totals.voluntary_switches += slept;
    state.totals.wait_ns += waited;
    state.totals.run_ns += ran;
    state.totals.thread = std::move(thread);
    state.totals.cpu = cpu;
    state.sched = *sched;
    state.switches = *switches;
    reading.threads.push_back(state.totals);
    seen.emplace(key, std::move(state));
  }
  threads_ = std::move(seen);
}

void CountsEngine::count_other_tasks() {
  for (int cpu : cpus_) {
    CpuState& state = states_[cpu];
    // Never down: the application's time is current, the CPU's is booked when a task leaves it.
    if (state.cpu_run_ns > state.totals.application_run_ns)
      state.totals.other_tasks_ns =
          std::max(state.totals.other_tasks_ns, state.cpu_run_ns - state.totals.application_run_ns);
  }
}

}  // namespace jitterd
