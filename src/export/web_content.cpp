#include "export/web_content.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

#include "export/status_page.h"
#include "host/text.h"

namespace jitterd {

namespace {
bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

Route route(std::string_view method, std::string_view path, std::string_view telemetry_path) {
  Route known = Route::not_found;
  if (path == telemetry_path)
    known = Route::metrics;
  else if (path == "/")
    known = Route::status_page;
  else if (path == kStatusJsonPath)
    known = Route::status_json;
  else if (path == kBaselineDownloadPath)
    known = Route::baseline;
  if (known == Route::not_found) return known;
  if (method != "GET" && method != "HEAD") return Route::method_not_allowed;
  return known;
}

bool accepts_gzip(std::string_view accept_encoding) {
  for (std::size_t start = 0; start <= accept_encoding.size();) {
    const std::size_t comma = std::min(accept_encoding.find(',', start), accept_encoding.size());
    const std::string_view item = accept_encoding.substr(start, comma - start);
    start = comma + 1;
    const std::size_t semicolon = std::min(item.find(';'), item.size());
    if (!equals_ignoring_case(trim(item.substr(0, semicolon)), "gzip")) continue;
    // "gzip;q=0" refuses it; any other q (or none) accepts it.
    const std::string_view parameters = trim(item.substr(std::min(semicolon + 1, item.size())));
    if (parameters.size() >= 2 && (parameters[0] == 'q' || parameters[0] == 'Q') && parameters[1] == '=') {
      const std::string_view q = trim(parameters.substr(2));
      return q.find_first_not_of("0.") != std::string_view::npos;
    }
    return true;
  }
  return false;
}

std::optional<std::string> gzip(std::string_view text) {
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer instead of zlib's. Level 1: a scrape of tens of
  // kilobytes shrinks about 8x at the fastest level, which costs the housekeeping CPU least.
  if (deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace jitterd
