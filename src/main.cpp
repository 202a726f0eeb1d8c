// SPDX-License-Identifier: Apache-2.0
// jitterd's entry point: picks the verb and maps failures to exit codes (64 usage, 78 config,
// a bad flag value included, 65/66/73 a baseline file, 1 anything else), each message printable
// (host/text.h: outside text quoted in it cannot act on the terminal). Nothing else lives here.
#include <iostream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "cli/baseline.h"
#include "cli/check_config.h"
#include "cli/command_line.h"
#include "cli/compare.h"
#include "cli/fleet.h"
#include "cli/report.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "daemon/logging.h"
#include "export/build_info.h"
#include "host/text.h"

namespace {
constexpr int kExitUsage = 64;
constexpr int kExitConfig = 78;
}  // namespace

int main(int argc, char** argv) {
  jitterd::CommandLine cl;
  try {
    cl = jitterd::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const jitterd::UsageError& e) {
    std::cerr << "jitterd: " << jitterd::printable_lines(e.what()) << "\n" << e.hint() << "\n";
    return kExitUsage;
  }
  if (cl.verb == jitterd::Verb::help) {
    std::cout << cl.help;
    return 0;
  }
  if (cl.verb == jitterd::Verb::version) {
    const auto build = jitterd::this_build();
    std::cout << "jitterd " << build.version << " (" << build.revision << ", " << build.arch << ", "
              << build.compiler << ")\n";
    return 0;
  }
  jitterd::setup_logging();
  try {
    switch (cl.verb) {
      case jitterd::Verb::check_config:
        return jitterd::run_check_config(cl);
      case jitterd::Verb::report:
        return jitterd::run_report(cl);
      case jitterd::Verb::baseline:
        return jitterd::run_baseline(cl);
      case jitterd::Verb::compare:
        return jitterd::run_compare(cl);
      case jitterd::Verb::fleet:
        return jitterd::run_fleet(cl);
      default:
        return jitterd::run_daemon(jitterd::config_source(cl), jitterd::host_reader(cl));
    }
  } catch (const jitterd::ConfigErrors& e) {
    for (const std::string& line : e.listed()) std::cerr << jitterd::printable_lines(line) << "\n";
    std::cerr << "jitterd: " << e.errors().size() << " configuration error(s); exiting with " << kExitConfig
              << "\n";
    return kExitConfig;
  } catch (const jitterd::BaselineError& e) {
    std::cerr << "jitterd: " << jitterd::printable_lines(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    spdlog::critical("{}", jitterd::printable_lines(e.what()));
    return 1;
  }
}
