// SPDX-License-Identifier: Apache-2.0
#include "host/affinity.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include "host/cpu_list.h"

namespace jitterd {

std::vector<int> current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int try_restrict_current_thread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
    CPU_SET(cpu, &set);
  }
  return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : errno;
}

void restrict_current_thread(const std::vector<int>& cpus, const std::string& what) {
  if (const int err = try_restrict_current_thread(cpus)) {
    throw std::runtime_error("cannot restrict " + what + " to cpu" + (cpus.size() == 1 ? " " : "s ") +
                             format_cpu_list(cpus) + ": " + std::strerror(err));
  }
}

void run_on_cpus(const std::vector<int>& cpus, const std::function<void()>& work) {
  std::exception_ptr failure;
  std::thread thread([&] {
    try {
      restrict_current_thread(cpus, "a probe thread");
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace jitterd
