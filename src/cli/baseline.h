// SPDX-License-Identifier: Apache-2.0
// Taking a baseline: `jitterd baseline` (samplers for a duration, then the chosen probes, saved to
// a file) and the recording half of `jitterd report --save`. The samplers' histograms are read
// once per sub-window by the calling (housekeeping) thread, never by the sampler loop; each
// sub-window's figures come from the difference of two snapshots. Called once from main() or
// run_report().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "config/duration.h"
#include "host/host_reader.h"
#include "report/baseline_recorder.h"
#include "sampling/sampler_set.h"
#include "sampling/sampling_plan.h"

namespace jitterd {

// Lets the started samplers run for `duration`, snapshotting every kSubWindowSeconds, then stops
// them; one record per worker, in the set's order. `at_sub_window_end`: called at each sub-window's
// end too (`jitterd baseline` reads the watched CPUs and loops then).
std::vector<BaselineCpu> record_sub_windows(SamplerSet& samplers, Duration duration, double counter_hertz,
                                            const std::function<void()>& at_sub_window_end = {});

// The machine and the measurement settings as a baseline records them (report/baseline_recorder.h:
// its fingerprint from the posture read now; tick method, frequency, duty cycle, thresholds, CPUs,
// duration).
BaselineRecording baseline_recording(const SamplingPlan& plan, const HostReader& host,
                                     const CounterFrequency& frequency, double duration_seconds);

// `jitterd baseline`: exit 0, or a BaselineError/ConfigErrors thrown.
int run_baseline(const CommandLine& command_line);

}  // namespace jitterd
