// SPDX-License-Identifier: Apache-2.0
// report --from URL: the flags that read a running daemon's /status.json, and their checks.
#include <algorithm>

#include "cli/verb_flags.h"
#include "config/value_checks.h"
#include "report/status_reader.h"

namespace jitterd {

using namespace std::chrono_literals;

void add_report_from_flags(CLI::App& report, CommandLine& cl, ReportFlags& flags) {
  report
      .add_option("--from", cl.report_from,
                  "print the running daemon's view instead of measuring now: its /status.json at URL, e.g. "
                  "http://127.0.0.1:9978 (the figures over its rolling window, its probes' last tables)")
      ->type_name("URL");
  HttpOptions& http = cl.report_from_http;
  report.add_option("--from-ca-file", http.ca_file, "with --from https://: the CA certificates (PEM) to trust")
      ->type_name("FILE");
  report
      .add_option("--from-cert-file", http.cert_file,
                  "with --from https://: a client certificate (PEM) for a daemon that requires one")
      ->type_name("FILE");
  report.add_option("--from-key-file", http.key_file, "with --from-cert-file: its private key (PEM)")
      ->type_name("FILE");
  report
      .add_option("--from-basic-auth-user", http.basic_auth_user,
                  "with --from: send HTTP basic auth as USER, the password read from "
                  "--from-basic-auth-password-file (never given on the command line)")
      ->type_name("USER");
  report
      .add_option("--from-basic-auth-password-file", http.basic_auth_password_file,
                  "with --from-basic-auth-user: the file holding the password (its first line)")
      ->type_name("FILE");
  report
      .add_option("--from-bearer-token-file", http.bearer_token_file,
                  "with --from: send Authorization: Bearer with the token in FILE (a proxy in front of jitterd)")
      ->type_name("FILE");
  report
      .add_option("--from-timeout", flags.from_timeout,
                  "with --from: the limit of the request, connection included (100ms..1h)")
      ->type_name("DURATION")
      ->capture_default_str();
  report
      .add_option("--from-max-bytes", flags.from_max_bytes,
                  "with --from: the largest answer read, once decoded (1KiB..1GiB; default 16MiB)")
      ->type_name("SIZE");
}

namespace {

constexpr const char* kFromFlags[] = {"--from-ca-file",
                                      "--from-cert-file",
                                      "--from-key-file",
                                      "--from-basic-auth-user",
                                      "--from-basic-auth-password-file",
                                      "--from-bearer-token-file",
                                      "--from-timeout",
                                      "--from-max-bytes"};

// The URL of /status.json: the daemon's address as given (a proxy's prefix kept), or the page's own.
std::string status_url(const std::string& given, const std::string& hint) {
  if (given.rfind("http://", 0) != 0 && given.rfind("https://", 0) != 0)
    throw UsageError("--from: must be an http:// or https:// URL, got \"" + given + "\"", hint);
  if (given.find_first_of("?# ") != std::string::npos)
    throw UsageError(
        "--from: the daemon's address without a query, e.g. http://127.0.0.1:9978, got \"" + given + "\"", hint);
  const std::size_t host = given.find("://") + 3;
  if (given.substr(host, given.find('/', host) - host).find('@') != std::string::npos)
    throw UsageError(
        "--from: no user or password in the URL (it would show in messages and in ps); give "
        "--from-basic-auth-user and --from-basic-auth-password-file",
        hint);
  std::string url = given;
  while (url.size() > 8 && url.back() == '/') url.pop_back();
  const std::string page = "/status.json";
  if (url.size() >= page.size() && url.compare(url.size() - page.size(), page.size(), page) == 0) return url;
  return url + page;
}

void check_connection(CommandLine& cl, const CLI::App& report, const ReportFlags& flags, const std::string& hint) {
  HttpOptions& http = cl.report_from_http;
  http.url_flag = "--from";
  http.max_body_bytes = kStatusMaxBytes;
  check_http_flags(http, "--from", report, {flags.from_timeout, flags.from_max_bytes}, std::size_t{1} << 30,
                   "1GiB", hint);
  const bool https = cl.report_from.rfind("https://", 0) == 0;
  for (const char* flag : {"--from-ca-file", "--from-cert-file"})
    if (report.count(flag) > 0 && !https)
      throw UsageError(std::string(flag) + ": only with --from https://... (TLS)", hint);
}

}  // namespace

void check_report_from(CommandLine& cl, const CLI::App& report, const ReportFlags& flags) {
  const std::string hint = "see jitterd report --help";
  if (cl.report_from.empty()) {
    for (const char* flag : kFromFlags)
      if (report.count(flag) > 0) throw UsageError(std::string(flag) + ": only with --from URL", hint);
    return;
  }
  // What the daemon's page cannot give: it holds its own window, CPUs and probes' last runs.
  const std::pair<const char*, const char*> refused[] = {
      {"--duration", "the daemon's rolling window is its configured sampler.window"},
      {"--cpus", "the daemon's figures are of the CPUs it samples and the probes as it runs them"},
      {"--save", "a running daemon's baseline is its /baseline.json"},
      {"--interruptions", "the daemon's page holds no list of interruptions"}};
  for (const auto& [flag, why] : refused)
    if (report.count(flag) > 0) throw UsageError(std::string(flag) + ": not with --from (" + why + ")", hint);
  if (cl.report_format == ReportFormat::html)
    throw UsageError("--format html: not with --from (the daemon's own page is that view: its / )", hint);
  if (cl.report_format == ReportFormat::script)
    throw UsageError(
        "--format script: not with --from (the fixes are worked out from the machine: run report posture there)",
        hint);
  cl.report_from = status_url(cl.report_from, hint);
  check_connection(cl, report, flags, hint);
}

}  // namespace jitterd
