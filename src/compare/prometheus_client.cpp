// SPDX-License-Identifier: Apache-2.0
#include "compare/prometheus_client.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "report/baseline_file.h"
#include "report/json_input.h"

namespace jitterd {
namespace {

PrometheusOptions trimmed(PrometheusOptions o) {
  while (!o.url.empty() && o.url.back() == '/') o.url.pop_back();
  return o;
}

HttpOptions http_options(const PrometheusOptions& o) {
  HttpOptions h = o;
  h.url_flag = "--prometheus";
  return h;
}

}  // namespace

PrometheusClient::PrometheusClient(PrometheusOptions options)
    : options_(trimmed(std::move(options))), http_(http_options(options_)) {}

Json PrometheusClient::get(const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& parameters,
                           const std::string& what) const {
  std::string url = options_.url + path;
  char separator = '?';
  for (const auto& [name, value] : parameters) {
    url += fmt::format("{}{}={}", separator, name, http_.escape(value));
    separator = '&';
  }
  const std::string where = fmt::format("{} ({})", options_.url, what);
  const HttpAnswer answer = http_.get(url, where, "application/json");
  return prometheus_data(answer.status, answer.body, where);
}

namespace {

constexpr std::string_view kSizeRefusals[] = {"too many samples", "cannot select more than",
                                              "the number of matching timeseries exceeds"};

// Where a refusal for size begins in a server's error text (the whole of it: VictoriaMetrics puts
// the query first and the reason last); npos when it is none.
std::size_t size_refusal_at(std::string_view error) {
  for (const std::string_view refusal : kSizeRefusals) {
    const std::size_t at = error.find(refusal);
    if (at != std::string_view::npos) return at;
  }
  return std::string_view::npos;
}

}  // namespace

Json prometheus_data(long status, const std::string& body, const std::string& where) {
  Json answer;
  try {
    answer = parse_json_input(body);
  } catch (const JsonInputError& e) {
    if (status >= 400)
      throw BaselineError(kExitPrometheusUnavailable,
                          fmt::format("{}: HTTP status {}: {}", where, status, answer_excerpt(body)));
    if (e.syntax())
      throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus answer (not JSON): \"{}\"", where,
                                                        answer_excerpt(body)));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus answer: {}", where, e.what()));
  }
  if (!answer.is_object() || !answer.contains("status") || !answer["status"].is_string()) {
    if (status >= 400)
      throw BaselineError(kExitPrometheusUnavailable,
                          fmt::format("{}: HTTP status {}: {}", where, status, answer_excerpt(body)));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus answer (no \"status\" field): \"{}\"",
                                                      where, answer_excerpt(body)));
  }
  if (answer["status"] == "error") {
    const auto text = [&](const char* key) {
      return answer.contains(key) && answer[key].is_string() ? answer_excerpt(answer[key].get<std::string>())
                                                             : std::string("?");
    };
    const std::string error = answer.contains("error") && answer["error"].is_string()
                                  ? answer["error"].get<std::string>()
                                  : std::string();
    // The reason from where it begins, without the query VictoriaMetrics echoes first (kilobytes).
    if (const std::size_t at = size_refusal_at(error); at != std::string::npos)
      throw QueryTooLarge(kExitBadBaseline, fmt::format("{}: the server refused the query as too big for its "
                                                        "limits (HTTP {}): {}",
                                                        where, status, answer_excerpt(error.substr(at))));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: Prometheus answered HTTP {} with error {}: {}", where,
                                                      status, text("errorType"), text("error")));
  }
  if (answer["status"] != "success" || !answer.contains("data"))
    throw BaselineError(
        kExitBadBaseline,
        fmt::format("{}: not a Prometheus answer (status {}, no data)", where,
                    answer_excerpt(answer["status"].dump(-1, ' ', false, Json::error_handler_t::replace))));
  return std::move(answer["data"]);  // not a copy: an answer may be tens of MB
}

double le_bound_ns(const std::string& le) {
  char* end = nullptr;
  const double bound = std::strtod(le.c_str(), &end);
  if (le.empty() || *end != '\0' || !(bound > 0)) return NAN;
  return std::isinf(bound) ? bound : std::round(bound * 1e12) / 1e3;
}

Json PrometheusClient::query(const std::string& query, double time) const {
  return get("/api/v1/query", {{"query", query}, {"time", fmt::format("{:.3f}", time)}}, "query " + query);
}

std::vector<std::string> PrometheusClient::label_values(const std::string& label, const std::string& match,
                                                        std::optional<std::pair<double, double>> between) const {
  const std::string what = fmt::format("label {} values of {}", label, match);
  std::vector<std::pair<std::string, std::string>> parameters{{"match[]", match}};
  if (between) {
    parameters.emplace_back("start", fmt::format("{:.3f}", between->first));
    parameters.emplace_back("end", fmt::format("{:.3f}", between->second));
  }
  const Json data = get("/api/v1/label/" + label + "/values", parameters, what);
  if (!data.is_array())
    throw BaselineError(kExitBadBaseline,
                        fmt::format("{} ({}): not a Prometheus answer (data is not a list)", url(), what));
  std::vector<std::string> values;
  for (const Json& v : data)
    if (v.is_string()) values.push_back(v.get<std::string>());
  return values;
}

}  // namespace jitterd
