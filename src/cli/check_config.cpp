// SPDX-License-Identifier: Apache-2.0
#include "cli/check_config.h"

#include <iostream>

#include "config/config_source.h"
#include "host/affinity.h"
#include "host/cpu_list.h"
#include "sampling/sampling_plan.h"

namespace jitterd {

int run_check_config(const CommandLine& cl) {
  const SamplingPlan plan =
      make_sampling_plan(load_config(config_source(cl)), host_reader(cl), current_affinity());
  const CpuSelection& s = plan.selection;
  std::cout << cl.config_path << ": valid; on this machine it samples "
            << (s.sampled.empty() ? "no cpu" : "cpus " + format_cpu_list(s.sampled))
            << (s.watched.empty() ? "" : ", watches cpus " + format_cpu_list(s.watched))
            << ", housekeeping on cpus " << format_cpu_list(s.housekeeping) << "\n";
  for (const auto& note : plan.selection.notes) std::cout << "  " << note << "\n";
  for (const auto& problem : plan.machine_problems) std::cout << "  warning: " << problem << "\n";
  return 0;
}

}  // namespace jitterd
