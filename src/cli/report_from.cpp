// SPDX-License-Identifier: Apache-2.0
#include "cli/report_from.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/report.h"
#include "compare/http_client.h"
#include "config/web_config.h"
#include "host/text.h"
#include "probes/probe_registry.h"
#include "report/render.h"

namespace jitterd {
namespace {

std::string header_line(const StatusHeader& h) {
  return fmt::format("the running daemon's view, from {}: jitterd {} on {}, page of {}\n", printable(h.source),
                     printable(h.jitterd_version), h.hostname.empty() ? "(no hostname)" : printable(h.hostname),
                     printable(h.generated));
}

ProbeResult as_result(const StatusTopic& topic) {
  ProbeResult result;
  result.tables = topic.tables;
  result.notes = topic.notes;
  return result;
}

bool is_probe(std::string_view topic) { return topic != "gaps"; }

}  // namespace

std::string format_status_table(const StatusTopic& topic) {
  std::string out = header_line(topic.header);
  for (const std::string& line : topic.lines) out += printable(line) + "\n";
  if (!topic.failure.empty())
    out += "the last run failed: " + printable(topic.failure) +
           (topic.tables.empty() ? "\n" : "; the tables are of the last successful run\n");
  for (const ProbeTable& table : topic.tables) out += "\n" + printable(table.title) + "\n" + table_text(table);
  for (const std::string& note : topic.notes) out += "note: " + printable(note) + "\n";
  return out;
}

std::string format_status_json(const StatusTopic& topic) {
  const StatusHeader& h = topic.header;
  Json from{{"url", h.source},
            {"jitterd_version", h.jitterd_version},
            {"hostname", h.hostname},
            {"generated", h.generated},
            {"generated_unix_seconds", h.generated_unix_seconds},
            {"window_seconds", h.window_seconds},
            {"window_sequence", h.window_sequence},
            {"lines", topic.lines}};
  if (!is_probe(topic.topic))
    return json_text(Json{{"from", std::move(from)},
                          {"cpus", topic.tables.empty() ? Json::array() : table_records(topic.tables.front())}});
  return json_text(Json{{"from", std::move(from)},
                        {"probe", topic.topic},
                        {"success", topic.failure.empty()},
                        {"error", topic.failure},
                        {"tables", json_array(topic.tables, table_json)},
                        {"notes", topic.notes}});
}

std::string format_status_csv(const StatusTopic& topic) { return format_probe_csv(as_result(topic)); }

int status_exit_code(const StatusTopic& topic) {
  const ProbeFacts* facts = probe_facts(topic.topic);
  if (facts == nullptr || facts->report != ReportKind::checklist) return topic.failure.empty() ? 0 : 1;
  int worst = -1;
  for (const ProbeTable& table : topic.tables) {
    const auto column = std::find(table.columns.begin(), table.columns.end(), "status");
    if (column == table.columns.end()) continue;
    const std::size_t c = static_cast<std::size_t>(column - table.columns.begin());
    for (const std::vector<Cell>& row : table.rows) {
      const std::string status = cell_text(row[c]);
      worst = std::max(worst, status == "FAIL" ? 2 : status == "WARN" ? 1 : status == "PASS" ? 0 : worst);
    }
  }
  return worst < 0 ? 3 : worst;
}

std::optional<std::string> daemon_url(const WebConfig& web) {
  const std::optional<ListenAddress> address = parse_listen_address(web.listen_address);
  if (!address || address->port == 0) return std::nullopt;
  std::string host = address->host;
  if (address->every_address || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("{}://{}:{}", web.security.tls ? "https" : "http", host, address->port);
}

std::string fresh_reading_line(std::string_view topic, const WebConfig& web) {
  const std::string command =
      topic == "gaps" ? std::string("jitterd report") : "jitterd report " + std::string(topic);
  const std::optional<std::string> url = daemon_url(web);
  std::string where = url ? fmt::format("{} --from {}", command, *url)
                          : fmt::format(
                                "{} --from http://ADDRESS:PORT (the port the daemon logged at start: "
                                "web.listen_address {} takes any free one)",
                                command, web.listen_address);
  if (url && web.security.tls) where += " --from-ca-file CA.pem";
  if (url && !web.security.basic_auth_users.empty())
    where += " --from-basic-auth-user USER --from-basic-auth-password-file FILE";
  return fmt::format(
      "a fresh reading, taken now by this process (not the running daemon's); the running "
      "daemon's view: {}\n",
      where);
}

int run_report_from(const CommandLine& cl) {
  const std::string& url = cl.report_from;
  const HttpClient client(cl.report_from_http);
  const HttpAnswer answer = client.get(url, url, "application/json");
  const Json document = status_document_from_answer(answer.status, answer.body, url);
  const StatusTopic topic = status_topic(document, url, cl.report_topic, cl.report_format == ReportFormat::table);
  switch (cl.report_format) {
    case ReportFormat::table:
      std::cout << format_status_table(topic);
      break;
    case ReportFormat::json:
      std::cout << format_status_json(topic);
      break;
    default:  // csv; html and script are refused with --from by the command line
      std::cout << format_status_csv(topic);
      break;
  }
  return status_exit_code(topic);
}

}  // namespace jitterd
