// SPDX-License-Identifier: Apache-2.0
// From the configuration (config/config_source.h: the file with the flags applied) to what will be
// sampled: the CPU selection checked against this machine, and per-CPU sampler settings. Shared
// by run, report and check-config. Call from the main thread.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "host/affinity.h"
#include "host/cpu_selection.h"
#include "host/host_reader.h"
#include "host/msr_pmu.h"
#include "sampling/sampler_worker.h"

namespace jitterd {

struct SamplingPlan {
  Config config;
  CpuSelection selection;
  TickMethod method = TickMethod::steady_clock;
  std::vector<std::string> machine_problems;  // missing sysfs files and the like: warnings
  MsrPmu msr_pmu;                             // what the msr PMU counts (SMIs, APERF/MPERF), read once
};

// Throws ConfigErrors listing every problem, with file, line and column where known.
SamplingPlan make_sampling_plan(Config config, const HostReader& host, const std::vector<int>& allowed_affinity);

std::vector<SamplerSettings> sampler_settings(const SamplingPlan& plan, const TickScale& scale);

}  // namespace jitterd
