// SPDX-License-Identifier: Apache-2.0
// busy_app: a stand-in for the application jitterd watches: one thread named --name (the task
// name jitterd's `application.tasks` patterns match) pinned to --cpu that busy-polls a memory
// location for --duration and never sleeps, as a trading or packet loop does. With --priority it
// is SCHED_FIFO at that priority, so only a higher-priority thread (the test's injector) or the
// kernel's RT throttling can take the CPU from it: each such preemption is one involuntary
// context switch, which is what the watch test counts.
//
// With --shootdowns N --shooter-cpu C, a second thread ("tlb-shooter", pinned to C) waits for
// SIGUSR1 and then maps, touches and unmaps one page N times: each unmap flushes the TLB of every
// other CPU running this process, so the polling CPU takes N TLB shootdown IPIs, known IPIs for
// the watch test. It prints "busy_app: shootdowns N" to stderr when they are done. With
// --shooter-names K it takes a new name before each shootdown, K names per round ("r2-417": the
// round, then the shootdown's number modulo K), so the IPIs come from K senders a round.
//
// With --impostors N --user UID it is an impostor instead: it pins itself, becomes UID, starts N
// threads named --name that sleep on that CPU (pinned too: they are the application's by name
// and CPU), and sleeps --seconds without polling; the watch test's attack on the application's
// identity.
//
// "busy_app: running" goes to stderr once pinned (and SCHED_FIFO, or the impostors started),
// before it starts polling.
// Exit: 0 done, 64 usage error, 77 pinning or SCHED_FIFO refused (the caller skips).
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
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
  std::fprintf(stderr,
               "busy_app: %s\nusage: busy_app [--cpu N] [--priority 0..98] [--seconds S] [--name NAME] "
               "[--shootdowns N --shooter-cpu C [--shooter-names K]] [--impostors N --user UID]\n",
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

struct Shooter {
  long count = 0;
  int cpu = 0;
  long names = 0;
};

// Waits for SIGUSR1 (blocked in every thread, so only sigwait takes it), then shoots down.
void* shoot(void* arg) {
  const Shooter* shooter = static_cast<const Shooter*>(arg);
  prctl(PR_SET_NAME, "tlb-shooter", 0, 0, 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(shooter->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGUSR1);
  for (long round = 1;; ++round) {
    int signal = 0;
    if (sigwait(&wanted, &signal) != 0) return nullptr;
    for (long i = 0; i < shooter->count; ++i) {
      if (shooter->names > 0) {
        const std::string name = "r" + std::to_string(round % 1000) + "-" + std::to_string(i % shooter->names);
        prctl(PR_SET_NAME, name.substr(0, 15).c_str(), 0, 0, 0);
      }
      void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (page == MAP_FAILED) return nullptr;
      static_cast<volatile char*>(page)[0] = 1;  // a present page: its unmap must flush
      munmap(page, 4096);
    }
    std::fprintf(stderr, "busy_app: shootdowns %ld\n", shooter->count);
  }
}

void* sleep_forever(void*) {
  for (;;) pause();
}

// Becomes `uid` and starts `count` sleeping threads (their names and CPU inherited): exits 77 when
// refused.
void start_impostors(long count, long uid) {
  const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_NPROC, &unlimited);  // as root, before becoming the user: the threads count
  if (setresgid(static_cast<gid_t>(uid), static_cast<gid_t>(uid), static_cast<gid_t>(uid)) != 0 ||
      setresuid(static_cast<uid_t>(uid), static_cast<uid_t>(uid), static_cast<uid_t>(uid)) != 0) {
    std::fprintf(stderr, "busy_app: cannot become uid %ld: %s\n", uid, std::strerror(errno));
    std::exit(kSkip);
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  for (long i = 0; i < count; ++i) {
    pthread_t thread;
    if (int error = pthread_create(&thread, &attr, sleep_forever, nullptr); error != 0) {
      std::fprintf(stderr, "busy_app: impostor thread %ld of %ld: %s\n", i, count, std::strerror(error));
      std::exit(kSkip);
    }
    pthread_detach(thread);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int cpu = 1, priority = 0;
  Shooter shooter;
  long seconds = 10, impostors = 0, user = -1;
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
    else if (flag == "--shootdowns")
      shooter.count = parse_int(flag, value);
    else if (flag == "--shooter-names")
      shooter.names = parse_int(flag, value);
    else if (flag == "--shooter-cpu")
      shooter.cpu = static_cast<int>(parse_int(flag, value));
    else if (flag == "--impostors")
      impostors = parse_int(flag, value);
    else if (flag == "--user")
      user = parse_int(flag, value);
    else if (flag == "--name")
      name = std::string(value).substr(0, 15);  // TASK_COMM_LEN - 1
    else
      usage("unknown flag " + std::string(flag));
  }
  if (cpu < 0 || cpu >= CPU_SETSIZE) usage("--cpu: out of range");
  if (priority < 0 || priority > 98) usage("--priority: must be 0..98");
  if (seconds < 1) usage("--seconds: must be at least 1");
  if ((impostors > 0) != (user >= 0)) usage("--impostors and --user go together");
  prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);  // before the shooter starts: it inherits the mask
  if (shooter.count > 0) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, shoot, &shooter) != 0) usage("cannot start the shooter thread");
    pthread_detach(thread);
  }
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
  if (impostors > 0) {
    start_impostors(impostors, user);
    std::fprintf(stderr, "busy_app: running\n");
    sleep(static_cast<unsigned>(seconds));
    return 0;
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
