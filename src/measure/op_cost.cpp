// SPDX-License-Identifier: Apache-2.0
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
OpCost measure_one(std::size_t op, std::size_t samples) {
  const std::string name(kernel_cost_ops().at(op));
  switch (op) {
    case 0:
      return time_op<M>(
          name, [] { g_counter_sink = read_ticks<M>(); }, samples);
    case 1:
      return time_op<M>(
          name, [] { read_clock(CLOCK_MONOTONIC); }, samples);
    case 2:
      return time_op<M>(
          name, [] { read_clock(CLOCK_MONOTONIC_RAW); }, samples);
    case 3:
      return time_op<M>(
          name, [] { read_clock(CLOCK_REALTIME); }, samples);
    // getppid has no vDSO shortcut and no glibc cache: the cheapest real kernel entry and exit.
    case 4:
      return time_op<M>(
          name, [] { syscall(SYS_getppid); }, samples);
    case 5:
      return time_op<M>(name, create_and_join_thread, std::max<std::size_t>(samples / 10, 10));
    default:
      return time_op<M>(name, fork_and_wait, std::max<std::size_t>(samples / 50, 5));
  }
}

}  // namespace

const std::vector<std::string_view>& kernel_cost_ops() {
  static const std::vector<std::string_view> ops = {"counter_read",
                                                    "clock_gettime_monotonic",
                                                    "clock_gettime_monotonic_raw",
                                                    "clock_gettime_realtime",
                                                    "syscall_getppid",
                                                    "thread_create_join",
                                                    "fork_wait"};
  return ops;
}

OpCost measure_kernel_cost(TickMethod method, std::size_t op, std::size_t samples) {
  return dispatch_tick_method(method, [&]<TickMethod M>() { return measure_one<M>(op, samples); });
}

}  // namespace jitterd
