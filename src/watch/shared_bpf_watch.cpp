// SPDX-License-Identifier: Apache-2.0
#include "watch/shared_bpf_watch.h"

#include <algorithm>

namespace jitterd {

std::uint64_t sampled_outlier_threshold_ns(std::optional<std::uint64_t> sampler_threshold_ns) {
  if (!sampler_threshold_ns || *sampler_threshold_ns == 0) return kSampledOutlierDefaultNs;
  return std::max(kSampledOutlierFloorNs, *sampler_threshold_ns / kSampledOutlierDivisor);
}

std::string SharedBpfWatch::why_not() const {
  std::lock_guard lock(mutex_);
  return why_not_;
}

BpfWatch* SharedBpfWatch::get(const std::function<std::optional<SamplerThread>(int cpu)>& sampler_of) {
  std::lock_guard lock(mutex_);
  if (tried_) return engine_.get();
  tried_ = true;
  if (wants_.watched.empty() && wants_.sampled.empty()) {
    why_not_ = "nothing asks for the BPF engine";
    return nullptr;
  }
  BpfWatch::Options options;
  options.cpus = wants_.watched;
  options.outlier_threshold_ns = wants_.outlier_threshold_ns;
  options.jitterd_tgid = wants_.jitterd_tgid;
  options.msr_pmu = wants_.msr_pmu;
  std::vector<int> samplers;
  for (int cpu : wants_.sampled) {
    const std::optional<SamplerThread> sampler = sampler_of ? sampler_of(cpu) : std::nullopt;
    options.sampled.push_back(
        {cpu, sampled_outlier_threshold_ns(sampler ? std::optional(sampler->threshold_ns) : std::nullopt)});
    if (sampler) samplers.push_back(static_cast<int>(sampler->tid));
  }
  engine_ = BpfWatch::open(options, why_not_);
  if (engine_) engine_->set_sampler_threads(samplers);
  return engine_.get();
}

}  // namespace jitterd
