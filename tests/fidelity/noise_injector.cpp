// SPDX-License-Identifier: Apache-2.0
// noise_injector: steals a known amount of one CPU, so a test can check what jitterd reports.
//
// Pins itself to --cpu, becomes SCHED_FIFO at --priority (so it preempts a SCHED_OTHER sampler
// at once), then --count times wakes at absolute CLOCK_MONOTONIC deadlines --period apart and
// spins for --spin. It prints one line per injection, "deadline_tick start_tick end_tick": the
// raw counter (lfence; rdtsc on x86-64) read at the start and end of each spin, the same counter
// that `jitterd report --interruptions` prints, and the timer deadline in that counter's ticks.
// The CPU is the injector's from the deadline (the timer interrupt that wakes it) to the spin's
// end, so deadline..end is what it takes from a sampler; start..end is the spin alone. Lines are printed after the last injection, so no
// write() lengthens an injection. On stderr it summarizes how late each spin started after its
// deadline: the timer interrupt, wake-up and context switch that precede every spin and that a
// preempted sampler sees as part of the same gap.
//
// "noise_injector: running" goes to stderr once pinned and SCHED_FIFO, before the first injection.
//
// Its name (the task's comm, which the watch and the kernel's sched_switch name a preempter by) is
// its program's only while it injects: it starts under kSetupName and ends under kExitName. Pinning
// moves it onto the target CPU while that CPU's task runs, so its set-up preempts that task once
// (when the kernel's fair server lends the starved CPU to it, or at once), and a write of its
// lines to a full pipe at the end would sleep and preempt again; those switches are booked to the
// other names, so a count of the program's name is exactly its injections that preempted.
// Exit: 0 done, 64 usage error, 77 SCHED_FIFO or pinning refused (the caller skips), 1 other.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

constexpr int kUsage = 64;
constexpr int kSkip = 77;
// Fifteen characters at most (a comm's length).
constexpr const char* kSetupName = "injector-setup";
constexpr const char* kExitName = "injector-exit";

// The same ordered read as the sampler: lfence keeps rdtsc from running ahead of earlier loads.
inline std::uint64_t read_ticks() {
#if defined(__x86_64__)
  _mm_lfence();
  return __rdtsc();
#elif defined(__aarch64__)
  std::uint64_t ticks;
  asm volatile("isb; mrs %0, cntvct_el0; isb" : "=r"(ticks)::"memory");
  return ticks;
#else
#error "noise_injector needs x86-64 or aarch64"
#endif
}

struct Options {
  int cpu = 1;
  int priority = 50;
  std::int64_t period_ns = 10'000'000;
  std::int64_t spin_ns = 200'000;
  int count = 300;
};

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr,
               "noise_injector: %s\n"
               "usage: noise_injector [--cpu N] [--priority 1..99] [--period 10ms] [--spin 200us] "
               "[--count 300]\n",
               message.c_str());
  std::exit(kUsage);
}

std::int64_t parse_int(std::string_view flag, std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    usage(std::string(flag) + ": not an integer: " + std::string(text));
  return value;
}

// "250us", "10ms", "1s", "500ns" -> nanoseconds.
std::int64_t parse_duration(std::string_view flag, std::string_view text) {
  const auto digits = text.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos)
    usage(std::string(flag) + ": needs a unit: " + std::string(text));
  const std::int64_t number = parse_int(flag, text.substr(0, digits));
  const std::string_view unit = text.substr(digits);
  if (unit == "ns") return number;
  if (unit == "us") return number * 1'000;
  if (unit == "ms") return number * 1'000'000;
  if (unit == "s") return number * 1'000'000'000;
  usage(std::string(flag) + ": unit must be ns, us, ms or s: " + std::string(text));
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(std::string(flag) + ": needs a value");
    const std::string_view value = argv[++i];
    if (flag == "--cpu")
      options.cpu = static_cast<int>(parse_int(flag, value));
    else if (flag == "--priority")
      options.priority = static_cast<int>(parse_int(flag, value));
    else if (flag == "--period")
      options.period_ns = parse_duration(flag, value);
    else if (flag == "--spin")
      options.spin_ns = parse_duration(flag, value);
    else if (flag == "--count")
      options.count = static_cast<int>(parse_int(flag, value));
    else
      usage("unknown flag " + std::string(flag));
  }
  if (options.cpu < 0 || options.cpu >= CPU_SETSIZE) usage("--cpu: out of range");
  if (options.priority < 1 || options.priority > 99) usage("--priority: must be 1..99");
  if (options.count < 1) usage("--count: must be at least 1");
  if (options.spin_ns <= 0 || options.spin_ns >= options.period_ns)
    usage("--spin: must be above 0 and below --period");
  return options;
}

std::int64_t to_ns(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

timespec from_ns(std::int64_t ns) {
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return to_ns(now);
}

// Pin first, then go real-time: the FIFO thread never runs anywhere but the target CPU.
int become_realtime_on(const Options& options) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(options.cpu, &set);
  if (int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); error != 0) {
    std::fprintf(stderr, "noise_injector: cannot pin to cpu %d: %s\n", options.cpu, std::strerror(error));
    return kSkip;
  }
  const sched_param param{.sched_priority = options.priority};
  if (int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); error != 0) {
    std::fprintf(stderr, "noise_injector: SCHED_FIFO priority %d refused: %s\n", options.priority,
                 std::strerror(error));
    return kSkip;
  }
  // Best effort: a page fault inside a spin would only lengthen it, which the tick pair records.
  mlockall(MCL_CURRENT | MCL_FUTURE);
  return 0;
}

// Renames the calling thread (the process's only one: its comm); a failure leaves the name as it
// was, which only makes a count by name include the set-up's switch again.
void name_self(const char* name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  char program_name[16] = {};
  prctl(PR_GET_NAME, program_name, 0, 0, 0);
  name_self(kSetupName);  // before pinning: the switch onto the target CPU is the set-up's
  if (int status = become_realtime_on(options); status != 0) return status;
  // The one line before the injections, so a caller can wait for the noise to be on.
  std::fprintf(stderr, "noise_injector: running\n");
  std::fflush(stderr);

  struct Injection {
    std::uint64_t start_tick;
    std::uint64_t end_tick;
    std::int64_t wake_latency_ns;
    std::int64_t spin_ns;  // measured by CLOCK_MONOTONIC, to convert the latency to ticks
  };
  std::vector<Injection> injections(static_cast<std::size_t>(options.count), Injection{0, 0, 0, 0});

  name_self(program_name);  // from here until the last spin ends, every switch in is an injection's
  std::int64_t deadline = monotonic_ns() + options.period_ns;
  for (auto& injection : injections) {
    const timespec wake = from_ns(deadline);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
    }
    // The spin's length is set by CLOCK_MONOTONIC; its position is recorded in ticks.
    injection.start_tick = read_ticks();
    const std::int64_t spin_start = monotonic_ns();
    const std::int64_t spin_end = spin_start + options.spin_ns;
    injection.wake_latency_ns = spin_start - deadline;
    std::int64_t now = spin_start;
    while ((now = monotonic_ns()) < spin_end) {
    }
    injection.end_tick = read_ticks();
    injection.spin_ns = now - spin_start;
    deadline += options.period_ns;
  }
  name_self(kExitName);

  std::vector<std::int64_t> latencies;
  for (const auto& injection : injections) latencies.push_back(injection.wake_latency_ns);
  std::sort(latencies.begin(), latencies.end());
  std::fprintf(stderr,
               "noise_injector: %d spins of %.1f us on cpu %d; start after deadline: min %.1f us, "
               "median %.1f us, max %.1f us\n",
               options.count, static_cast<double>(options.spin_ns) / 1e3, options.cpu,
               static_cast<double>(latencies.front()) / 1e3,
               static_cast<double>(latencies[latencies.size() / 2]) / 1e3,
               static_cast<double>(latencies.back()) / 1e3);
  // Ticks per ns from all spins together (each bracketed by both clocks).
  double ticks = 0, ns = 0;
  for (const auto& injection : injections) {
    ticks += static_cast<double>(injection.end_tick - injection.start_tick);
    ns += static_cast<double>(injection.spin_ns);
  }
  const double ticks_per_ns = ticks / ns;
  for (const auto& injection : injections) {
    const auto latency_ticks =
        static_cast<std::uint64_t>(static_cast<double>(injection.wake_latency_ns) * ticks_per_ns);
    std::printf("%llu %llu %llu\n", static_cast<unsigned long long>(injection.start_tick - latency_ticks),
                static_cast<unsigned long long>(injection.start_tick),
                static_cast<unsigned long long>(injection.end_tick));
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
