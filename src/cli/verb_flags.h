// SPDX-License-Identifier: Apache-2.0
// What the verbs' flag parsing shares, split by verb: command_line.cpp (report, baseline, the
// common flags and the verb itself), compare_flags.cpp (compare's two files or --prometheus, and
// the Prometheus connection flags) and fleet_flags.cpp (fleet).
// Private to those files; call from the main thread.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "compare/time_range.h"
#include "host/text.h"

namespace jitterd {

// The report's own flags, kept as text here and checked against the topic afterwards.
struct ReportFlags {
  std::string format = "table";
  std::string duration = "10s";
  std::string cpus;
  std::string probes = joined_with(default_baseline_probe_names(), ",");
  std::string sub_window;
  std::string prometheus_timeout = "30s";
  std::string prometheus_max_bytes;
  std::string allowance;
  std::string from_timeout = "10s";
  std::string from_max_bytes;
};

// "64MiB", "1GiB", "65536": a size in bytes, or nullopt.
std::optional<std::size_t> parse_byte_size(const std::string& text);
// "a,b,,c": each comma-separated part, empty ones included ("" is one empty part).
std::vector<std::string> comma_separated(const std::string& text);
// The time range `value` of `flag` (compare/time_range.h), or the usage error naming the flag.
TimeRange checked_time_range(const char* flag, const std::string& value, const std::string& hint);

// report --from URL and its connection flags (cli/report_from_flags.cpp).
void add_report_from_flags(CLI::App& report, CommandLine& cl, ReportFlags& flags);
// Their checks against the rest of the report's flags; sets cl.report_from to the URL of
// /status.json.
void check_report_from(CommandLine& cl, const CLI::App& report, const ReportFlags& flags);

// --format: table, json, csv or html (one self-contained page), and for report also script
// (report posture's fixes).
void add_format_flag(CLI::App& verb, ReportFlags& flags, const std::string& what, bool with_script = false);

void add_compare_flags(CLI::App& compare, CommandLine& cl, ReportFlags& flags);
// The Prometheus connection flags compare --prometheus and fleet share (auth, timeout, size).
void add_prometheus_connection_flags(CLI::App& verb, CommandLine& cl, ReportFlags& flags);
// Their checks; `verb` names the verb in messages.
// The connection flags of one HTTP client, each named `prefix` ("--prometheus", "--from") and
// its suffix: basic auth (a user and its password file, both or neither, no ':' in the user) or
// a bearer token, a client certificate with its key, the timeout (100ms..1h) and, where given,
// the largest answer (1KiB..`limit_text`, `max_bytes_limit`) into `http`; or the usage error
// naming the flag.
struct HttpFlagTexts {
  const std::string& timeout;
  const std::string& max_bytes;
};
void check_http_flags(HttpOptions& http, const std::string& prefix, const CLI::App& verb,
                      const HttpFlagTexts& given, std::size_t max_bytes_limit, const char* limit_text,
                      const std::string& hint);

// Two files, or --prometheus with its instance and two ranges; never a mix.
void check_compare(CommandLine& cl, const CLI::App& compare, const ReportFlags& flags);

// fleet's own flags, kept as text and checked afterwards.
struct FleetFlags {
  std::string classes;
  std::string alpha = "0.05";
  std::string min_hosts = "5";
  std::string adjustment = "holm";
  std::string aa_splits = "100";
};
// The fleet verb, added to `app` with its flags.
CLI::App* add_fleet_verb(CLI::App& app, CommandLine& cl, ReportFlags& flags, FleetFlags& fleet_flags);
// Their checks, into cl's fleet selection and options (the caller sets cl.report_format).
void check_fleet(CommandLine& cl, const CLI::App& fleet, const ReportFlags& flags, const FleetFlags& fleet_flags);

}  // namespace jitterd
