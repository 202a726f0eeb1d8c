// SPDX-License-Identifier: Apache-2.0
#include "compare/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <optional>

#include "host/host_reader.h"
#include "host/text.h"
#include "report/baseline_file.h"

namespace jitterd {
namespace {

// curl_global_init is not thread-safe: done once, before the first handle.
void curl_once() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK)
    throw BaselineError(kExitUnavailable, fmt::format("cannot start libcurl: {}", curl_easy_strerror(code)));
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

// A certificate or key file libcurl will read: said here, by name, rather than as libcurl's
// "problem with the local SSL certificate" after connecting.
void check_readable(const std::string& path, const char* what) {
  if (path.empty()) return;
  std::string reason;
  if (!read_file_up_to(path, 1 << 20, &reason))
    throw BaselineError(kExitUnreadableBaseline, fmt::format("{}: cannot read the {}: {}", path, what, reason));
}

void set_tls(CURL* curl, const HttpOptions& o) {
  if (!o.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, o.ca_file.c_str());
  if (!o.cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, o.cert_file.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, o.key_file.c_str());
  }
}

}  // namespace

std::string answer_excerpt(std::string_view body) { return printable_excerpt(body, 80); }

struct HttpClient::Curl {
  CURL* handle = nullptr;
  ~Curl() {
    if (handle != nullptr) curl_easy_cleanup(handle);
  }
};

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)), curl_(std::make_unique<Curl>()) {
  if (!options_.bearer_token_file.empty()) token_ = read_secret(options_.bearer_token_file, "bearer token");
  if (!options_.basic_auth_user.empty())
    password_ = read_secret(options_.basic_auth_password_file, "basic-auth password");
  check_readable(options_.ca_file, "CA certificates");
  check_readable(options_.cert_file, "client certificate");
  check_readable(options_.key_file, "client key");
  curl_once();
  curl_->handle = curl_easy_init();
  if (curl_->handle == nullptr) throw BaselineError(kExitUnavailable, "cannot start a libcurl handle");
}

HttpClient::~HttpClient() = default;

std::string HttpClient::escape(std::string_view text) const {
  char* escaped = curl_easy_escape(curl_->handle, text.data(), static_cast<int>(text.size()));
  std::string out = escaped != nullptr ? escaped : "";
  curl_free(escaped);
  return out;
}

HttpAnswer HttpClient::get(const std::string& url, const std::string& where, const char* accept) const {
  CURL* curl = curl_->handle;
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
  set_tls(curl, options_);
  if (!options_.basic_auth_user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, options_.basic_auth_user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password_.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, fmt::format("Accept: {}", accept).c_str());
  if (!token_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (body.over || code == CURLE_FILESIZE_EXCEEDED)
    throw BaselineError(kExitUnavailable,
                        fmt::format("{}: the answer is larger than the limit of {} bytes (decoded; "
                                    "{}-max-bytes): stopped reading there",
                                    where, options_.max_body_bytes, options_.url_flag));
  if (code != CURLE_OK)
    throw BaselineError(kExitUnavailable,
                        fmt::format("{}: no answer: {}", where, error[0] != 0 ? error : curl_easy_strerror(code)));
  HttpAnswer answer;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  if (answer.status >= 300 && answer.status < 400) {
    const char* location = nullptr;
    curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location);
    throw BaselineError(
        kExitUnavailable,
        fmt::format("{}: HTTP status {}: a redirect to {}, not followed (it would take the "
                    "request and its credentials elsewhere); give {} the URL that answers",
                    where, answer.status, location != nullptr ? answer_excerpt(location) : "nowhere",
                    options_.url_flag));
  }
  answer.body = std::move(body.text);
  return answer;
}

}  // namespace jitterd
