// SPDX-License-Identifier: Apache-2.0
#include "compare/prometheus_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <optional>

#include "host/host_reader.h"
#include "host/text.h"
#include "report/baseline_file.h"
#include "report/json_input.h"

namespace jitterd {
namespace {

// curl_global_init is not thread-safe: done once, before the first handle.
void curl_once() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK)
    throw BaselineError(kExitPrometheusUnavailable,
                        fmt::format("cannot start libcurl: {}", curl_easy_strerror(code)));
}

// The decoded body, up to a limit: past it the callback takes nothing, which makes libcurl stop
// reading (CURLE_WRITE_ERROR) before a gzip bomb or an endless body fills memory.
struct Body {
  std::string text;
  std::size_t limit = 0;
  bool over = false;
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* destination) {
  Body& body = *static_cast<Body*>(destination);
  if (size * count > body.limit - body.text.size()) {
    body.over = true;
    return 0;
  }
  body.text.append(data, size * count);
  return size * count;
}

// The start of a body (or a header), printable and short, for a message about an answer that is
// not Prometheus's: the server's bytes never reach the terminal as they are.
std::string excerpt(const std::string& body) { return printable_excerpt(body, 80); }

// A secret from its file, trailing newline and spaces dropped; `what` names it in messages, which
// never hold the secret itself.
std::string read_secret(const std::string& path, const char* what) {
  std::string reason;
  std::optional<std::string> text = read_file_up_to(path, 64 << 10, &reason);
  if (!text)
    throw BaselineError(kExitUnreadableBaseline, fmt::format("{}: cannot read the {}: {}", path, what, reason));
  std::string secret = std::move(*text);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r' || secret.back() == ' '))
    secret.pop_back();
  if (secret.empty()) throw BaselineError(kExitBadBaseline, fmt::format("{}: the {} file is empty", path, what));
  return secret;
}

}  // namespace

struct PrometheusClient::Curl {
  CURL* handle = nullptr;
  ~Curl() {
    if (handle != nullptr) curl_easy_cleanup(handle);
  }
};

PrometheusClient::PrometheusClient(PrometheusOptions options)
    : options_(std::move(options)), curl_(std::make_unique<Curl>()) {
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
  if (!options_.bearer_token_file.empty()) token_ = read_secret(options_.bearer_token_file, "bearer token");
  if (!options_.basic_auth_user.empty())
    password_ = read_secret(options_.basic_auth_password_file, "basic-auth password");
  curl_once();
  curl_->handle = curl_easy_init();
  if (curl_->handle == nullptr)
    throw BaselineError(kExitPrometheusUnavailable,
                        fmt::format("{}: cannot start a libcurl handle", options_.url));
}

PrometheusClient::~PrometheusClient() = default;

Json PrometheusClient::get(const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& parameters,
                           const std::string& what) const {
  CURL* curl = curl_->handle;
  std::string url = options_.url + path;
  char separator = '?';
  for (const auto& [name, value] : parameters) {
    char* escaped = curl_easy_escape(curl, value.data(), static_cast<int>(value.size()));
    url += fmt::format("{}{}={}", separator, name, escaped != nullptr ? escaped : "");
    curl_free(escaped);
    separator = '&';
  }
  const std::string where = fmt::format("{} ({})", options_.url, what);
  Body body{{}, options_.max_body_bytes, false};
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  // A declared length over the limit is refused before the body is read (the decoded body is
  // bounded by the callback, whatever the length says).
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_body_bytes));
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // the default, said: redirects are refused below
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl decodes: gzip
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!options_.basic_auth_user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, options_.basic_auth_user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password_.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  if (!token_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (body.over || code == CURLE_FILESIZE_EXCEEDED)
    throw BaselineError(kExitPrometheusUnavailable,
                        fmt::format("{}: the answer is larger than the limit of {} bytes (decoded; "
                                    "--prometheus-max-bytes): stopped reading there",
                                    where, options_.max_body_bytes));
  if (code != CURLE_OK)
    throw BaselineError(kExitPrometheusUnavailable,
                        fmt::format("{}: no answer: {}", where, error[0] != 0 ? error : curl_easy_strerror(code)));
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400) {
    const char* location = nullptr;
    curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location);
    throw BaselineError(
        kExitPrometheusUnavailable,
        fmt::format("{}: HTTP status {}: a redirect to {}, not followed (it would take the "
                    "request and its credentials elsewhere); give --prometheus the URL that answers",
                    where, status, location != nullptr ? excerpt(location) : "nowhere"));
  }
  return prometheus_data(status, body.text, where);
}

Json prometheus_data(long status, const std::string& body, const std::string& where) {
  Json answer;
  try {
    answer = parse_json_input(body);
  } catch (const JsonInputError& e) {
    if (status >= 400)
      throw BaselineError(kExitPrometheusUnavailable,
                          fmt::format("{}: HTTP status {}: {}", where, status, excerpt(body)));
    if (e.syntax())
      throw BaselineError(kExitBadBaseline,
                          fmt::format("{}: not a Prometheus answer (not JSON): \"{}\"", where, excerpt(body)));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus answer: {}", where, e.what()));
  }
  if (!answer.is_object() || !answer.contains("status") || !answer["status"].is_string()) {
    if (status >= 400)
      throw BaselineError(kExitPrometheusUnavailable,
                          fmt::format("{}: HTTP status {}: {}", where, status, excerpt(body)));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: not a Prometheus answer (no \"status\" field): \"{}\"",
                                                      where, excerpt(body)));
  }
  if (answer["status"] == "error") {
    const auto text = [&](const char* key) {
      return answer.contains(key) && answer[key].is_string() ? excerpt(answer[key].get<std::string>())
                                                             : std::string("?");
    };
    throw BaselineError(kExitBadBaseline, fmt::format("{}: Prometheus answered HTTP {} with error {}: {}", where,
                                                      status, text("errorType"), text("error")));
  }
  if (answer["status"] != "success" || !answer.contains("data"))
    throw BaselineError(
        kExitBadBaseline,
        fmt::format("{}: not a Prometheus answer (status {}, no data)", where,
                    excerpt(answer["status"].dump(-1, ' ', false, Json::error_handler_t::replace))));
  return std::move(answer["data"]);  // not a copy: an answer may be tens of MB
}

Json PrometheusClient::query(const std::string& query, double time) const {
  return get("/api/v1/query", {{"query", query}, {"time", fmt::format("{:.3f}", time)}}, "query " + query);
}

std::vector<std::string> PrometheusClient::label_values(const std::string& label, const std::string& match) const {
  const std::string what = fmt::format("label {} values of {}", label, match);
  const Json data = get("/api/v1/label/" + label + "/values", {{"match[]", match}}, what);
  if (!data.is_array())
    throw BaselineError(kExitBadBaseline,
                        fmt::format("{} ({}): not a Prometheus answer (data is not a list)", url(), what));
  std::vector<std::string> values;
  for (const Json& v : data)
    if (v.is_string()) values.push_back(v.get<std::string>());
  return values;
}

}  // namespace jitterd
