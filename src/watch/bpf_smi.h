// SPDX-License-Identifier: Apache-2.0
// The loader's side of the watched CPUs' SMI counters and APERF/MPERF (bpf/watch_smi.bpf.h): it
// opens the msr PMU's events for each watched CPU and hands them to the program's perf event
// arrays, which the CPU then reads itself in its local timer interrupt; the loader reads only what
// the program wrote (a per-CPU map's copy, no IPI). Opening and closing a CPU-bound event is an IPI to that
// CPU, once for each of its up to three counters, when the watch starts and ends (the program's attach IPIs every CPU then too);
// nothing while it runs (tests/integration/below_kernel_test.py measures it). Internal to the BPF engine;
// one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "host/cpu_counter.h"
#include "host/msr_pmu.h"

namespace jitterd {

// An interval between two of a CPU's local timer interrupts in which its SMI count grew.
struct SmiWindow {
  std::uint64_t from_ns = 0, to_ns = 0;  // CLOCK_MONOTONIC
  std::uint64_t smis = 0;
  bool operator==(const SmiWindow&) const = default;
};

// A watched CPU's SMI counter as its own timer interrupts last read it.
struct SmiReading {
  std::uint64_t count = 0;         // since the watch opened the counter
  std::uint64_t reads = 0;         // 0: not read yet (no timer interrupt since), so no count
  std::vector<SmiWindow> windows;  // the latest kKeptSmiWindows, oldest first
};

// Intervals the loader keeps per CPU, so that every reader (the watch every second, the loops
// probe every interval) finds those of its own window without taking them from the others.
inline constexpr std::size_t kKeptSmiWindows = 256;

// The perf event arrays the program reads a watched CPU's counters from (bpf/watch_smi.bpf.h).
struct MsrEventArrays {
  int smi_fd = -1, aperf_fd = -1, mperf_fd = -1;
};

class BpfMsrCounters {
 public:
  // Opens the PMU's smi event, and its aperf and mperf events where it has both, on each of `cpus`
  // and stores each at the CPU's index of its perf event array; a CPU the kernel refuses is left
  // out, and why_not() or frequency_why_not() says why.
  void open(const MsrPmu& pmu, const std::vector<int>& cpus, const MsrEventArrays& arrays);
  // Each opened CPU's SMI reading from the program's per-CPU state map `states_fd`, its new
  // intervals added to those kept.
  std::map<int, SmiReading> read_smis(int states_fd, std::size_t possible_cpus);
  // Each CPU's APERF and MPERF as its timer interrupts last read them (a CPU not read yet: none).
  std::map<int, CycleCounts> read_cycles(int states_fd, std::size_t possible_cpus) const;
  bool any() const { return !smi_.empty(); }
  const std::string& why_not() const { return why_not_; }
  const std::string& frequency_why_not() const { return frequency_why_not_; }

 private:
  // `counter` into CPU `cpu`'s slot of the perf event array `events_fd`; false, with the reason in
  // `why_not` if it holds none yet, when the kernel refuses.
  static bool give(int cpu, const CpuCounter& counter, int events_fd, std::string& why_not);
  std::map<int, CpuCounter> smi_;         // by CPU
  std::map<int, CycleCounters> cycles_;   // by CPU
  std::map<int, std::uint64_t> written_;  // by CPU: the windows_written seen last
  std::map<int, std::deque<SmiWindow>> kept_;
  std::string why_not_, frequency_why_not_;
};

}  // namespace jitterd
