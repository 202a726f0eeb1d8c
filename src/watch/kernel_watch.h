// SPDX-License-Identifier: Apache-2.0
// What the watch probe reads a watched CPU's interruptions through, whichever engine pairs them:
// the BPF program in the kernel (watch/bpf_watch.h, method `bpf`) or perf's records of the same
// tracepoints paired on the reader's CPU (watch/trace_watch.h, method `tracepoints`). Both give
// the one reading type, so everything downstream (metrics, status page, baselines) is shared.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

struct BpfReading;

class KernelWatch {
 public:
  virtual ~KernelWatch() = default;
  // "bpf" or "tracepoints": the watch method this engine is.
  virtual std::string_view method() const = 0;
  // The application's threads now: their preemptions on the watched CPUs count.
  virtual void set_application(const std::vector<int>& tids) = 0;
  // The watched CPUs' figures (cumulative) and their outliers since the last read.
  virtual BpfReading read() = 0;
  // The optional tracepoints this kernel lacks ("irq_vectors:thermal_apic_entry", ...).
  virtual const std::vector<std::string>& missing_tracepoints() const = 0;
  // Of the threads set_application was last given, those the engine could not track.
  virtual std::size_t application_untracked() const = 0;
  virtual const std::vector<int>& cpus() const = 0;
};

}  // namespace jitterd
