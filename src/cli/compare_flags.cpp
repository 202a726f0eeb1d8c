// SPDX-License-Identifier: Apache-2.0
#include "cli/verb_flags.h"

#include <algorithm>
#include <limits>

#include "compare/time_range.h"
#include "config/value_checks.h"

namespace jitterd {

using namespace std::chrono_literals;

void add_prometheus_connection_flags(CLI::App& verb, CommandLine& cl, ReportFlags& flags) {
  verb.add_option("--prometheus-bearer-token-file", cl.prometheus.bearer_token_file,
                  "with --prometheus: send Authorization: Bearer with the token in FILE")
      ->type_name("FILE");
  verb.add_option("--prometheus-basic-auth-user", cl.prometheus.basic_auth_user,
                  "with --prometheus: send HTTP basic auth as USER, the password read from "
                  "--prometheus-basic-auth-password-file (never given on the command line)")
      ->type_name("USER");
  verb.add_option("--prometheus-basic-auth-password-file", cl.prometheus.basic_auth_password_file,
                  "with --prometheus-basic-auth-user: the file holding the password (its first line)")
      ->type_name("FILE");
  verb.add_option("--prometheus-ca-file", cl.prometheus.ca_file,
                  "with --prometheus https://: the CA certificates (PEM) to trust (default: the system's)")
      ->type_name("FILE");
  verb.add_option("--prometheus-cert-file", cl.prometheus.cert_file,
                  "with --prometheus https://: a client certificate (PEM) to present, with --prometheus-key-file")
      ->type_name("FILE");
  verb.add_option("--prometheus-key-file", cl.prometheus.key_file,
                  "with --prometheus-cert-file: its private key (PEM)")
      ->type_name("FILE");
  verb.add_option("--prometheus-timeout", flags.prometheus_timeout,
                  "with --prometheus: the limit of each request, connection included (100ms..1h)")
      ->type_name("DURATION")
      ->capture_default_str();
  verb.add_option("--prometheus-max-bytes", flags.prometheus_max_bytes,
                  "with --prometheus: the largest answer read, once decoded, in bytes or with KiB, MiB or GiB "
                  "(1KiB..16GiB; default 64MiB: the gap-histogram bucket series of 1,000 hosts x 16 CPUs)")
      ->type_name("SIZE");
}

void add_compare_flags(CLI::App& compare, CommandLine& cl, ReportFlags& flags) {
  compare.add_option("BEFORE", cl.compare_before, "the baseline taken first")->type_name("");
  compare.add_option("AFTER", cl.compare_after, "the baseline taken after the change")->type_name("");
  add_format_flag(compare, flags, "how to print the comparison");
  compare.add_flag("--wide", cl.compare_wide,
                   "the text table with every column (the tests, p-values and allowances), past 120 columns");
  compare
      .add_option("--prometheus", cl.prometheus.url,
                  "instead of two files: the Prometheus that scraped jitterd, e.g. http://127.0.0.1:9090")
      ->type_name("URL");
  compare.add_option("--instance", cl.prometheus_instance, "with --prometheus: the jitterd's instance label")
      ->type_name("HOST:PORT");
  compare
      .add_option("--before", cl.prometheus_before,
                  "with --prometheus: START/END, each RFC 3339 (2026-11-25T10:00:00Z), unix seconds, now or "
                  "now-DURATION; or DURATION alone (-1h: the last hour)")
      ->type_name("RANGE");
  compare.add_option("--after", cl.prometheus_after, "with --prometheus: START/END after the change")
      ->type_name("RANGE");
  compare
      .add_option("--sub-window", flags.sub_window,
                  "with --prometheus: the sub-window of the rank tests (default: 2 scrape intervals, at least "
                  "1/120 of the shorter range)")
      ->type_name("DURATION");
  compare
      .add_option("--allowance", flags.allowance,
                  "set run-to-run allowances (cv, 0..2) in place of the measured ones: NAME=CV,... with NAME a "
                  "group (" +
                      joined(allowance_groups()) +
                      ") or one figure of it (c2c.median_ns, kernel_cost.p99_ns; docs/before-and-after.md)")
      ->type_name("NAME=CV,...");
  add_prometheus_connection_flags(compare, cl, flags);
}

std::optional<std::size_t> parse_byte_size(const std::string& text) {
  const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  if (digits == 0 || digits > 12) return std::nullopt;
  const std::string unit = text.substr(digits);
  int shift = 0;
  if (unit == "KiB")
    shift = 10;
  else if (unit == "MiB")
    shift = 20;
  else if (unit == "GiB")
    shift = 30;
  else if (!unit.empty() && unit != "B")
    return std::nullopt;
  const unsigned long long number = std::stoull(text.substr(0, digits));
  if (number > (std::numeric_limits<std::size_t>::max() >> shift)) return std::nullopt;
  return static_cast<std::size_t>(number) << shift;
}

void check_http_flags(HttpOptions& http, const std::string& prefix, const CLI::App& verb,
                      const HttpFlagTexts& given, std::size_t max_bytes_limit, const char* limit_text,
                      const std::string& hint) {
  if (http.basic_auth_user.empty() != http.basic_auth_password_file.empty())
    throw UsageError(prefix + "-basic-auth-user and " + prefix + "-basic-auth-password-file: give both or neither",
                     hint);
  if (!http.basic_auth_user.empty() && !http.bearer_token_file.empty())
    throw UsageError(
        prefix + "-basic-auth-user and " + prefix + "-bearer-token-file: one Authorization header, so one of them",
        hint);
  if (http.basic_auth_user.find(':') != std::string::npos)
    throw UsageError(prefix + "-basic-auth-user: a user name cannot hold ':' (basic auth splits there)", hint);
  if (http.cert_file.empty() != http.key_file.empty())
    throw UsageError(prefix + "-cert-file and " + prefix + "-key-file: give both or neither", hint);
  const std::optional<Duration> timeout = parse_duration(given.timeout);
  if (!timeout || *timeout < 100ms || *timeout > 1h)
    throw UsageError(prefix + "-timeout: must be 100ms..1h, got \"" + given.timeout + "\"", hint);
  http.timeout_seconds = std::chrono::duration<double>(*timeout).count();
  if (verb.count(prefix + "-max-bytes") > 0) {
    const std::optional<std::size_t> bytes = parse_byte_size(given.max_bytes);
    if (!bytes || *bytes < (1u << 10) || *bytes > max_bytes_limit)
      throw UsageError(prefix + "-max-bytes: must be 1KiB.." + limit_text +
                           " (bytes, or a number with KiB, MiB or GiB), got \"" + given.max_bytes + "\"",
                       hint);
    http.max_body_bytes = *bytes;
  }
}

TimeRange checked_time_range(const char* flag, const std::string& value, const std::string& hint) {
  std::string error;
  const std::optional<TimeRange> range = parse_time_range(value, &error);
  if (!range) throw UsageError(std::string(flag) + ": " + error, hint);
  return *range;
}

void check_compare(CommandLine& cl, const CLI::App& compare, const ReportFlags& flags) {
  const std::string hint = "see jitterd compare --help";
  if (compare.count("--allowance") > 0) {
    std::string error;
    const std::optional<std::vector<AllowanceSetting>> settings = parse_allowances(flags.allowance, &error);
    if (!settings) throw UsageError("--allowance: " + error, hint);
    cl.compare_allowances = *settings;
  }
  if (cl.prometheus.url.empty()) {
    for (const char* flag : {"--instance", "--before", "--after", "--sub-window", "--prometheus-bearer-token-file",
                             "--prometheus-basic-auth-user", "--prometheus-basic-auth-password-file",
                             "--prometheus-timeout", "--prometheus-max-bytes"})
      if (compare.count(flag) > 0) throw UsageError(std::string(flag) + ": only with --prometheus URL", hint);
    if (cl.compare_after.empty())
      throw UsageError(
          "compare: needs BEFORE and AFTER baseline files, or --prometheus URL with --instance, "
          "--before and --after",
          hint);
    return;
  }
  if (!cl.compare_before.empty())
    throw UsageError(
        "compare: --prometheus compares two time ranges; give them with --before and --after, not the "
        "files \"" +
            cl.compare_before + "\"",
        hint);
  if (cl.prometheus.url.rfind("http://", 0) != 0 && cl.prometheus.url.rfind("https://", 0) != 0)
    throw UsageError("--prometheus: must be an http:// or https:// URL, got \"" + cl.prometheus.url + "\"", hint);
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string*>{"--instance", &cl.prometheus_instance},
        {"--before", &cl.prometheus_before},
        {"--after", &cl.prometheus_after}})
    if (value->empty()) throw UsageError(std::string(flag) + ": needed with --prometheus", hint);
  const TimeRange before = checked_time_range("--before", cl.prometheus_before, hint);
  const TimeRange after = checked_time_range("--after", cl.prometheus_after, hint);
  // Ranges may touch (one ends where the other starts) but not overlap: a scrape in both would
  // be counted twice and the two samples would not be independent.
  if (before.start < after.end && after.start < before.end)
    throw UsageError("--before " + cl.prometheus_before + " and --after " + cl.prometheus_after +
                         ": the ranges overlap; compare two ranges that do not (they may touch)",
                     hint);
  check_http_flags(cl.prometheus, "--prometheus", compare, {flags.prometheus_timeout, flags.prometheus_max_bytes},
                   std::size_t{16} << 30, "16GiB", hint);
  if (compare.count("--sub-window") > 0) {
    const std::optional<Duration> sub_window = parse_duration(flags.sub_window);
    if (!sub_window || *sub_window < 100ms || *sub_window > 24h)
      throw UsageError("--sub-window: must be 100ms..24h, got \"" + flags.sub_window + "\"", hint);
    cl.prometheus_sub_window = *sub_window;
  }
}

}  // namespace jitterd
