// busy_app: a stand-in for the application jitterd watches: one thread named --name (the task
// name jitterd's `application.tasks` patterns match) pinned to --cpu that busy-polls a memory
// location for --duration and never sleeps, as a trading or packet loop does. With --priority it
// is SCHED_FIFO at that priority, so only a higher-priority thread (the test's injector) or the
// kernel's RT throttling can take the CPU from it: each such preemption is one involuntary
// context switch, which is what the watch test counts.
//
// "busy_app: running" goes to stderr once pinned (and SCHED_FIFO), before it starts polling.
// Exit: 0 done, 64 usage error, 77 pinning or SCHED_FIFO refused (the caller skips).
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

constexpr int kUsage = 64;
constexpr int kSkip = 77;

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr, "busy_app: %s\nusage: busy_app [--cpu N] [--priority 0..98] [--seconds S] [--name NAME]\n",
               message.c_str());
  std::exit(kUsage);
}

long parse_int(std::string_view flag, std::string_view text) {
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    usage(std::string(flag) + ": not an integer: " + std::string(text));
  return value;
}

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

std::atomic<std::uint64_t> polled{0};  // the "ring" it polls: written by nobody, read each turn

}  // namespace

int main(int argc, char** argv) {
  int cpu = 1, priority = 0;
  long seconds = 10;
  std::string name = "busyapp-poll";
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(std::string(flag) + ": needs a value");
    const std::string_view value = argv[++i];
    if (flag == "--cpu")
      cpu = static_cast<int>(parse_int(flag, value));
    else if (flag == "--priority")
      priority = static_cast<int>(parse_int(flag, value));
    else if (flag == "--seconds")
      seconds = parse_int(flag, value);
    else if (flag == "--name")
      name = std::string(value).substr(0, 15);  // TASK_COMM_LEN - 1
    else
      usage("unknown flag " + std::string(flag));
  }
  if (cpu < 0 || cpu >= CPU_SETSIZE) usage("--cpu: out of range");
  if (priority < 0 || priority > 98) usage("--priority: must be 0..98");
  if (seconds < 1) usage("--seconds: must be at least 1");
  prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); error != 0) {
    std::fprintf(stderr, "busy_app: cannot pin to cpu %d: %s\n", cpu, std::strerror(error));
    return kSkip;
  }
  if (priority > 0) {
    sched_param param{};
    param.sched_priority = priority;
    if (int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); error != 0) {
      std::fprintf(stderr, "busy_app: SCHED_FIFO %d refused: %s\n", priority, std::strerror(error));
      return kSkip;
    }
  }
  std::fprintf(stderr, "busy_app: running\n");
  const std::int64_t end = monotonic_ns() + seconds * 1'000'000'000;
  std::uint64_t turns = 0;
  while (monotonic_ns() < end) {
    turns += polled.load(std::memory_order_acquire) + 1;
  }
  std::printf("%llu\n", static_cast<unsigned long long>(turns));
  return 0;
}
