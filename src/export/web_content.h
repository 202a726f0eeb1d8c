// SPDX-License-Identifier: Apache-2.0
// What the web server answers, as plain functions of the request: which route a path and method
// take (the status page's, export/status_page.h, among them), the credentials of a basic auth
// header, and gzip for clients that accept it. No I/O and no libmicrohttpd here, so each is tested
// on literal strings (and fuzzed: tests/fuzz/web_request_fuzz.cpp). Safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitterd {

// The methods every route allows, for the Allow header of a 405.
inline constexpr const char* kAllowedMethods = "GET, HEAD";

enum class Route { status_page, status_json, baseline, metrics, method_not_allowed, not_found };

// `path` is the request path without its query: "/" (the status page), "/status.json",
// "/baseline.json" and the telemetry path. Unknown paths are 404 whatever the method; the known
// ones take GET and HEAD, anything else is 405.
Route route(std::string_view method, std::string_view path, std::string_view telemetry_path);

// A qvalue (RFC 9110 12.4.2: "0", "0.5", "0.125", "1", "1.000") in thousandths, 0..1000;
// nullopt for anything else ("abc", ".5", "0.1234", "1.5", " 1").
std::optional<int> parse_qvalue(std::string_view text);

// True when an Accept-Encoding header value (RFC 9110 12.5.3) accepts gzip: "gzip" (or its alias
// "x-gzip") listed with no weight or a q above 0, or, when it is not listed, "*" so. A coding
// whose weight is malformed ("gzip;q=abc", "gzip;level=9") counts as q=0: not accepted.
bool accepts_gzip(std::string_view accept_encoding);

// What an "Authorization: Basic ..." header value carries (RFC 7617).
struct BasicCredentials {
  std::string user;
  std::string password;
};

// The user and password of a basic auth header value: the scheme "Basic" in any case, blanks,
// then base64 of "user:password" (standard alphabet, padded to a multiple of 4), split at the
// first ':'. nullopt for any other scheme, malformed base64, no ':', or a NUL byte anywhere in
// the decoded text: a NUL would cut a C string short, and "secret\0anything" must not pass as
// "secret" (libxcrypt's crypt_r takes C strings).
std::optional<BasicCredentials> parse_basic_credentials(std::string_view authorization);

// `text` as a gzip member (RFC 1952), or nullopt if zlib fails.
std::optional<std::string> gzip(std::string_view text);

}  // namespace jitterd
