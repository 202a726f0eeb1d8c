// SPDX-License-Identifier: Apache-2.0
#include "cli/check_config.h"

#include <algorithm>
#include <cerrno>
#include <iostream>

#include "config/config_source.h"
#include "export/listen_socket.h"
#include "host/affinity.h"
#include "host/cpu_list.h"
#include "host/port_holders.h"
#include "host/text.h"
#include "sampling/sampling_plan.h"

namespace jitterd {
namespace {

// "jitterd (pid 812)", "nginx (pid 90), sshd (pid 7)".
std::string holders_text(const std::vector<PortHolder>& holders) {
  std::string text;
  for (const PortHolder& h : holders)
    text += (text.empty() ? "" : ", ") + printable(h.comm) + " (pid " + std::to_string(h.pid) + ")";
  return text;
}

// Binds the listen address as run would and closes it again. A port another program holds is a
// configuration error naming the holder; one a running jitterd holds is a note (the daemon being
// checked before a reload, which keeps its socket). Port 0 (any free one) is not tried.
// Returns the note to print, or "".
std::string check_listen_address_free(const CommandLine& cl, const Config& config, const HostReader& host) {
  const std::optional<ListenAddress> address = parse_listen_address(config.web.listen_address);
  if (!address || address->port == 0) return "";
  const bool from_flag = cl.overrides.listen_address.has_value();
  const ConfigError where{from_flag ? kCommandLineSource : cl.config_path, 0, 0,
                          from_flag ? "--web.listen-address" : "web.listen_address", ""};
  try {
    ListenSocket trial(*address);
  } catch (const ListenError& e) {
    const std::vector<PortHolder> holders =
        e.error_number() == EADDRINUSE ? port_holders(host, address->port) : std::vector<PortHolder>{};
    const bool by_jitterd =
        !holders.empty() &&
        std::all_of(holders.begin(), holders.end(), [](const PortHolder& h) { return h.comm == "jitterd"; });
    if (by_jitterd) {
      return address->to_string() + " is in use by " + holders_text(holders) +
             ": a running daemon; a reload keeps its socket, a second daemon could not listen";
    }
    ConfigError error = where;
    error.message = printable(e.what()) +
                    (holders.empty() ? std::string(e.error_number() == EADDRINUSE
                                                       ? " (the holder is not visible from here: another "
                                                         "network namespace, or a process this user cannot see)"
                                                       : "")
                                     : " (held by " + holders_text(holders) + ")");
    throw ConfigErrors({error});
  }
  return "";
}

}  // namespace

int run_check_config(const CommandLine& cl) {
  const Config config = load_config(config_source(cl));
  const HostReader host = host_reader(cl);
  const SamplingPlan plan = make_sampling_plan(config, host, current_affinity());
  const CpuSelection& s = plan.selection;
  const std::string listen_note = check_listen_address_free(cl, config, host);
  std::cout << config_source_text(config_source(cl)) << ": valid; on this machine it samples "
            << (s.sampled.empty() ? "no cpu" : "cpus " + format_cpu_list(s.sampled))
            << (s.watched.empty() ? "" : ", watches cpus " + format_cpu_list(s.watched))
            << ", housekeeping on cpus " << format_cpu_list(s.housekeeping) << "\n";
  for (const auto& note : plan.selection.notes) std::cout << "  " << note << "\n";
  for (const auto& problem : plan.machine_problems) std::cout << "  warning: " << problem << "\n";
  if (!listen_note.empty()) std::cout << "  note: " << listen_note << "\n";
  return 0;
}

}  // namespace jitterd
