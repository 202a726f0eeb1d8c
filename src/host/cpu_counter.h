// SPDX-License-Identifier: Apache-2.0
// One free-running perf counter bound to one CPU (perf_event_open(2) with pid -1 and that CPU):
// the msr PMU's smi, aperf or mperf event, read with read(2). The kernel installs, reads and removes a CPU-bound
// event on its CPU: from a thread running on that CPU it does so locally, from any other CPU
// through a function-call IPI to it. So a counter of a sampled CPU is opened, read and closed by
// the sampler thread pinned there, never by a housekeeping thread (docs/DESIGN.md, "the watched
// CPU is sacred"); the BPF program reads the watched CPUs' own (watch/bpf_watch.h). Owned by one
// thread; move-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "host/msr_pmu.h"

namespace jitterd {

class CpuCounter {
 public:
  CpuCounter() = default;
  ~CpuCounter();
  CpuCounter(CpuCounter&& other) noexcept;
  CpuCounter& operator=(CpuCounter&& other) noexcept;
  CpuCounter(const CpuCounter&) = delete;
  CpuCounter& operator=(const CpuCounter&) = delete;

  // Opens `event` on `cpu`, counting every context (user, kernel, hypervisor): an SMI is counted
  // whatever ran. A closed counter with the reason in *why when the kernel refuses.
  static CpuCounter open(const PmuEvent& event, int cpu, std::string* why = nullptr);

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // The count now, nullopt when closed or the read fails. Call it on the counter's CPU (see above).
  std::optional<std::uint64_t> read() const;

 private:
  explicit CpuCounter(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// A CPU's APERF and MPERF counters, both open or neither: one without the other measures nothing.
struct CycleCounters {
  CpuCounter actual, reference;
  bool is_open() const { return reference.is_open(); }
  // Both read back to back, so that they cover the same time; nullopt when closed or a read fails.
  // On the counters' CPU only, as CpuCounter::read.
  std::optional<CycleCounts> read() const;
};

// Opens `aperf`, then `mperf`, on `cpu`; closed counters, with the reason in *why, when the kernel
// refuses either.
CycleCounters open_cycle_counters(const PmuEvent& aperf, const PmuEvent& mperf, int cpu,
                                  std::string* why = nullptr);

}  // namespace jitterd
