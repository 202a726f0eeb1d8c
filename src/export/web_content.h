// What the web server answers, as plain functions of the request: which route a path and method
// take (the status page's, export/status_page.h, among them), and gzip for clients that accept
// it. No I/O and no libmicrohttpd here, so each is tested on literal strings. Safe from any thread.
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

// True when an Accept-Encoding header value lists gzip with a non-zero q (RFC 9110 12.5.3).
bool accepts_gzip(std::string_view accept_encoding);

// `text` as a gzip member (RFC 1952), or nullopt if zlib fails.
std::optional<std::string> gzip(std::string_view text);

}  // namespace jitterd
