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

}  // namespace jitterd
