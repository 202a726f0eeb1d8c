// SPDX-License-Identifier: Apache-2.0
// The one HTTP client of jitterd (libcurl), for what it reads from other servers: Prometheus's API
// (compare/prometheus_client.h: compare --prometheus, fleet) and a running jitterd's /status.json
// (`jitterd report TOPIC --from URL`). A GET is blocking and bounded: in time (the timeout covers
// the connection), in size (the decoded body: a gzip bomb or an endless body stops there), and in
// where it goes (a redirect is refused, not followed: it would take the credentials elsewhere).
// Every failure to get an answer is a BaselineError 69 (EX_UNAVAILABLE) whose message names the
// URL, what was asked and why; the caller judges the answer's status and body.
// The credentials: a bearer token or a basic-auth password, each read from a file (never from the
// command line) and sent only in the Authorization header, never put into a message; TLS: the CA
// file that signs the server's certificate (default: the system's), and a client certificate and
// key for a server that requires one (exporter-toolkit's client_auth_type).
// One client per thread (a curl easy handle is not shared).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "report/baseline_file.h"

namespace jitterd {

struct HttpOptions {
  // The flag that gave the URL ("--prometheus", "--from"): messages name it, and its -max-bytes.
  std::string url_flag;
  std::string bearer_token_file;  // empty: no Authorization: Bearer header
  // Non-empty user: Authorization: Basic with the password in the file (its first line). Not
  // with a bearer token (the command line refuses both).
  std::string basic_auth_user;
  std::string basic_auth_password_file;
  std::string ca_file;    // https: the CA certificates (PEM) to verify the server with; empty: the system's
  std::string cert_file;  // https: a client certificate (PEM) to present, with key_file
  std::string key_file;
  double timeout_seconds = 30;  // each request, connection included
  std::size_t max_body_bytes = 64u << 20;
};

struct HttpAnswer {
  long status = 0;
  std::string body;  // decoded
};

class HttpClient {
 public:
  // Reads the secrets and checks the certificate files: a BaselineError 66 (EX_NOINPUT) naming
  // the file when one cannot be read, 65 when a secret's file is empty.
  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET `url` (http or https only), asking for `accept`: the answer whatever its status but a
  // redirect, or a BaselineError 69 naming `where` (the URL and what was asked).
  HttpAnswer get(const std::string& url, const std::string& where, const char* accept) const;
  // `text` %-escaped for a query string.
  std::string escape(std::string_view text) const;

 private:
  HttpOptions options_;
  std::string token_;
  std::string password_;
  struct Curl;
  std::unique_ptr<Curl> curl_;
};

// The start of a body (or a header) from a server, printable and short, for a message about an
// answer that is not what was asked for: the server's bytes never reach the terminal as they are.
std::string answer_excerpt(std::string_view body);

}  // namespace jitterd
