// SPDX-License-Identifier: Apache-2.0
// `jitterd report TOPIC --from URL`: the running daemon's view of a report topic, read from its
// /status.json (report/status_reader.h) over HTTP(S) (compare/http_client.h) and printed as the
// report prints a fresh reading (text, JSON or CSV), headed by where and when it was taken; and
// the line a fresh reading prints to say it is one, with where the daemon's view is. Formatting
// is pure; run_report_from is called once from run_report on the main thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/command_line.h"
#include "config/config.h"
#include "report/status_reader.h"

namespace jitterd {

std::string format_status_table(const StatusTopic& topic);
std::string format_status_json(const StatusTopic& topic);
std::string format_status_csv(const StatusTopic& topic);
// report posture --from: 0 when every line of the daemon's checklist passes, 1 for a WARN, 2 for a
// FAIL, 3 without a checklist; other topics 1 when the probe's last run failed, else 0.
int status_exit_code(const StatusTopic& topic);

// The URL of the daemon `config` describes, as a client on this machine reaches it
// ("http://127.0.0.1:9978", "https://[::1]:9978"); nullopt when it listens on port 0 (any free one).
std::optional<std::string> daemon_url(const WebConfig& web);
// The first line of a fresh reading's text: taken now by this process, and the command that shows
// the running daemon's view of `topic`.
std::string fresh_reading_line(std::string_view topic, const WebConfig& web);

int run_report_from(const CommandLine& command_line);

}  // namespace jitterd
