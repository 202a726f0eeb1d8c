#include "measure/op_cost.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <system_error>

namespace jitterd {

namespace {

// Written by the counter_read op so the compiler cannot drop the read it is timing.
volatile std::uint64_t g_counter_sink = 0;

void read_clock(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
}

void* empty_thread(void*) { return nullptr; }

void create_and_join_thread() {
  pthread_t thread;
  if (const int err = pthread_create(&thread, nullptr, empty_thread, nullptr); err != 0) {
    throw std::system_error(err, std::generic_category(), "thread_create_join: pthread_create");
  }
  pthread_join(thread, nullptr);
}

// Safe from a multi-threaded process: the child calls only _exit, which is async-signal-safe.
void fork_and_wait() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork_wait: fork");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

template <TickMethod M>
std::vector<OpCost> measure_all(std::size_t samples) {
  const std::size_t thread_samples = std::max<std::size_t>(samples / 10, 10);
  const std::size_t fork_samples = std::max<std::size_t>(samples / 50, 5);
  std::vector<OpCost> costs;
  costs.push_back(time_op<M>(
      "counter_read", [] { g_counter_sink = read_ticks<M>(); }, samples));
  costs.push_back(time_op<M>(
      "clock_gettime_monotonic", [] { read_clock(CLOCK_MONOTONIC); }, samples));
  costs.push_back(time_op<M>(
      "clock_gettime_monotonic_raw", [] { read_clock(CLOCK_MONOTONIC_RAW); }, samples));
  costs.push_back(time_op<M>(
      "clock_gettime_realtime", [] { read_clock(CLOCK_REALTIME); }, samples));
  // getppid has no vDSO shortcut and no glibc cache: the cheapest real kernel entry and exit.
  costs.push_back(time_op<M>(
      "syscall_getppid", [] { syscall(SYS_getppid); }, samples));
  costs.push_back(time_op<M>("thread_create_join", create_and_join_thread, thread_samples));
  costs.push_back(time_op<M>("fork_wait", fork_and_wait, fork_samples));
  return costs;
}

}  // namespace

std::vector<OpCost> measure_kernel_costs(TickMethod method, std::size_t samples) {
  return dispatch_tick_method(method, [&]<TickMethod M>() { return measure_all<M>(samples); });
}

}  // namespace jitterd
