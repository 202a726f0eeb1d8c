// SPDX-License-Identifier: Apache-2.0
// The one BPF engine of a probe context: the watch probe (the application's CPUs) and the
// attribution probe (the sampled CPUs) share one loaded program (watch/bpf_watch.h), so the
// kernel runs one set of programs whatever asks, and a sampled CPU's gaps and a watched CPU's
// interruptions are named by one engine in one vocabulary of causes. What each user wants is known
// when the context is made (from the configuration); the engine opens on the first get() with all
// of it, or not at all, and the reason is kept for every later caller.
// Thread-safety: get() and why_not() may be called from any thread (the daemon's two probe lanes
// both hold the context's engine); the engine it returns is used by one thread at a time: its
// users (the watch, the loops, attribution) are all readers, which run on the readers' lane (or
// one `jitterd report` thread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "watch/bpf_watch.h"

namespace jitterd {

// A running sampler's thread and its interruption threshold, for the sampled CPUs' role.
struct SamplerThread {
  pid_t tid = 0;
  std::uint64_t threshold_ns = 0;
};

// A sampled CPU's outliers go down to this share of its sampler's threshold: an event shorter than
// a quarter of it cannot make a gap above it unless three more such events fall into the same gap.
inline constexpr std::uint64_t kSampledOutlierDivisor = 4;
// And never below this (a shorter threshold would only add records of no use to a gap).
inline constexpr std::uint64_t kSampledOutlierFloorNs = 250;
// For a sampled CPU whose sampler is not running when the engine opens.
inline constexpr std::uint64_t kSampledOutlierDefaultNs = 1000;

class SharedBpfWatch {
 public:
  struct Wants {
    std::vector<int> watched;                    // the watch's CPUs; empty: the watch does not use the engine
    std::uint64_t outlier_threshold_ns = 10000;  // the watch's
    std::vector<int> sampled;                    // empty: the attribution probe does not use the engine
    int jitterd_tgid = 0;
    MsrPmu msr_pmu;  // the msr PMU's events, read on the watched CPUs where given
  };
  explicit SharedBpfWatch(Wants wants) : wants_(std::move(wants)) {}

  // The engine, opened on the first call (the sampled CPUs' thresholds from `sampler_of`); nullptr
  // when it could not load, and why_not() says why.
  BpfWatch* get(const std::function<std::optional<SamplerThread>(int cpu)>& sampler_of);
  std::string why_not() const;

 private:
  Wants wants_;
  mutable std::mutex mutex_;  // guards the opening and its outcome
  bool tried_ = false;
  std::unique_ptr<BpfWatch> engine_;
  std::string why_not_;
};

// The sampled role's outlier threshold for a sampler with this interruption threshold.
std::uint64_t sampled_outlier_threshold_ns(std::optional<std::uint64_t> sampler_threshold_ns);

}  // namespace jitterd
