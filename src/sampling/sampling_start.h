// SPDX-License-Identifier: Apache-2.0
// The one start sequence of sampling, for the daemon and for the verbs that sample (`baseline`,
// `report`): the calling thread is restricted to the plan's housekeeping CPUs first (threads
// inherit affinity, so none that jitterd starts later runs on a sampled CPU, and the counter is
// calibrated where it does not disturb one), then the counter's frequency is taken, then the
// samplers are built to convert with it and started behind their barrier. Call from the main
// (housekeeping) thread.
#pragma once

#include <chrono>
#include <memory>

#include "host/host_reader.h"
#include "measure/counter_calibration.h"
#include "sampling/sampler_set.h"
#include "sampling/sampling_plan.h"

namespace jitterd {

// How long the counter is calibrated against the clock before anything samples.
inline constexpr std::chrono::milliseconds kCalibrationWindow{250};

// Restricts the calling thread to plan.selection.housekeeping (throws std::runtime_error naming
// the CPUs when that is refused) and returns the counter's frequency measured there.
CounterFrequency housekeeping_counter_frequency(const SamplingPlan& plan,
                                                std::chrono::nanoseconds window = kCalibrationWindow);

// Restricts the calling thread as above, then starts the plan's samplers converting with
// `frequency`; `host`'s procfs is where their context switches are read.
std::shared_ptr<SamplerSet> start_samplers(const SamplingPlan& plan, const CounterFrequency& frequency,
                                           const HostReader& host = HostReader());

}  // namespace jitterd
