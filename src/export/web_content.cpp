// SPDX-License-Identifier: Apache-2.0
#include "export/web_content.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

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

std::optional<int> parse_qvalue(std::string_view text) {
  // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
  if (text.empty() || (text[0] != '0' && text[0] != '1')) return std::nullopt;
  const std::string_view fraction = text.substr(1);
  if (!fraction.empty() && (fraction[0] != '.' || fraction.size() > 4)) return std::nullopt;
  const std::string_view digits = fraction.empty() ? fraction : fraction.substr(1);
  if (!digits.empty() && !all_digits(digits)) return std::nullopt;
  int thousandths = 0;
  for (std::size_t i = 0; i < 3; ++i) thousandths = thousandths * 10 + (i < digits.size() ? digits[i] - '0' : 0);
  if (text[0] == '1') return thousandths == 0 ? std::optional<int>(1000) : std::nullopt;
  return thousandths;
}

bool accepts_gzip(std::string_view accept_encoding) {
  std::optional<int> gzip_q, any_q;
  for (std::size_t start = 0; start <= accept_encoding.size();) {
    const std::size_t comma = std::min(accept_encoding.find(',', start), accept_encoding.size());
    const std::string_view item = trim(accept_encoding.substr(start, comma - start));
    start = comma + 1;
    const std::size_t semicolon = std::min(item.find(';'), item.size());
    const std::string_view coding = trim(item.substr(0, semicolon));
    const bool gzip = equals_ignoring_case(coding, "gzip") || equals_ignoring_case(coding, "x-gzip");
    if (!gzip && coding != "*") continue;
    // weight = OWS ";" OWS "q=" qvalue, and nothing else: a malformed one is q=0.
    int q = 1000;
    if (semicolon < item.size()) {
      const std::string_view weight = trim(item.substr(semicolon + 1));
      const bool named = weight.size() >= 2 && (weight[0] == 'q' || weight[0] == 'Q') && weight[1] == '=';
      q = named ? parse_qvalue(weight.substr(2)).value_or(0) : 0;
    }
    std::optional<int>& slot = gzip ? gzip_q : any_q;
    if (!slot) slot = q;  // the first mention counts
  }
  return gzip_q ? *gzip_q > 0 : any_q.value_or(0) > 0;
}

namespace {
// The value of a base64 digit (RFC 4648 table 1), or -1.
int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with its padding; nullopt when malformed (a length not a multiple of 4, a
// stray character, padding elsewhere than at the end).
std::optional<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    const int digit = base64_digit(text[i]);
    if (digit < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(digit);
    if (i % 4 == 3) {
      out += static_cast<char>((bits >> 16) & 0xff);
      out += static_cast<char>((bits >> 8) & 0xff);
      out += static_cast<char>(bits & 0xff);
      bits = 0;
    }
  }
  // The last group: 2 digits give one byte, 3 give two.
  if (padding == 2) out += static_cast<char>((bits >> 4) & 0xff);
  if (padding == 1) {
    out += static_cast<char>((bits >> 10) & 0xff);
    out += static_cast<char>((bits >> 2) & 0xff);
  }
  return out;
}
}  // namespace

std::optional<BasicCredentials> parse_basic_credentials(std::string_view authorization) {
  const std::string_view value = trim(authorization);
  const std::size_t blank = std::min(value.find_first_of(" \t"), value.size());
  if (!equals_ignoring_case(value.substr(0, blank), "Basic")) return std::nullopt;
  const std::optional<std::string> decoded = decode_base64(trim(value.substr(blank)));
  if (!decoded || decoded->find('\0') != std::string::npos) return std::nullopt;
  const std::size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
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
