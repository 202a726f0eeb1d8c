// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet.h"

#include <chrono>
#include <iostream>

#include "cli/progress.h"

namespace jitterd {

int run_fleet(const CommandLine& cl) {
  const PrometheusClient client(cl.prometheus);
  Progress progress;
  progress.step("reading the fleet from Prometheus");
  const FleetHistory history = read_fleet_history(client, cl.fleet_selection);
  progress.step("judging the cohorts and the classes");
  const FleetReport report = analyse_fleet(history, cl.fleet_selection, cl.fleet_options);
  progress.clear();
  switch (cl.report_format) {
    case ReportFormat::json:
      std::cout << fleet_json(report);
      break;
    case ReportFormat::csv:
      std::cout << fleet_csv(report);
      break;
    case ReportFormat::html:
      std::cout << fleet_html(report);
      break;
    default:
      std::cout << fleet_text(report);
      break;
  }
  return 0;
}

}  // namespace jitterd
