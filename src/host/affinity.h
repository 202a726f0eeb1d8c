// SPDX-License-Identifier: Apache-2.0
// The one place that pins threads: reading this thread's allowed CPUs, restricting it (and the
// threads it creates later, which inherit the mask), and running work on a temporary thread
// allowed only on given CPUs. Thin wrappers over sched_{get,set}affinity; safe from any thread,
// each call acts on the calling thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace jitterd {

// CPUs the calling thread may run on; empty if the kernel will not say.
std::vector<int> current_affinity();

// Restricts the calling thread to `cpus`; returns 0 or the errno of the refusal.
int try_restrict_current_thread(const std::vector<int>& cpus);

// As try_restrict_current_thread, but throws std::runtime_error naming the CPUs, `what` the
// thread is for ("housekeeping threads", "a probe thread") and the reason.
void restrict_current_thread(const std::vector<int>& cpus, const std::string& what = "housekeeping threads");

// Runs `work` on a new thread allowed only on `cpus`, waits for it and rethrows what it threw.
void run_on_cpus(const std::vector<int>& cpus, const std::function<void()>& work);
inline void run_on_pinned_thread(int cpu, const std::function<void()>& work) { run_on_cpus({cpu}, work); }

}  // namespace jitterd
