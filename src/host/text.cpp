// SPDX-License-Identifier: Apache-2.0
#include "host/text.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>

namespace jitterd {

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0. C1 controls (U+0080..U+009F) count as malformed, so
// they are escaped like the C0 ones.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    if (lead == 0xC2) low = 0xA0;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = i + 2; k < i + length; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  return length;
}

// The value of a well-formed sequence of utf8_sequence's length.
char32_t code_point(std::string_view sequence) {
  static constexpr unsigned char kLeadBits[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t point = static_cast<unsigned char>(sequence[0]) & kLeadBits[sequence.size()];
  for (std::size_t k = 1; k < sequence.size(); ++k)
    point = point << 6 | (static_cast<unsigned char>(sequence[k]) & 0x3F);
  return point;
}

}  // namespace

bool reorders_text(char32_t point) {
  return point == 0x2028 || point == 0x2029 || (point >= 0x202A && point <= 0x202E) ||
         (point >= 0x2066 && point <= 0x2069) || point == 0x200E || point == 0x200F || point == 0x061C;
}

std::string printable(std::string_view text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += text[i++];
    } else if (byte == '\n') {
      out += "\\n";
      ++i;
    } else if (const std::size_t length = byte >= 0x80 ? utf8_sequence(text, i) : 0; length > 0) {
      const char32_t point = code_point(text.substr(i, length));
      if (reorders_text(point)) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += hex[(point >> shift) & 15];
      } else {
        out += text.substr(i, length);
      }
      i += length;
    } else {
      out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
      ++i;
    }
  }
  return out;
}

std::string printable_lines(std::string_view text) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += printable(text.substr(start, end - start));
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string errno_text(int error) { return std::strerror(error); }

std::string utc_text(double unix_seconds) {
  if (!(unix_seconds > 0)) return "";
  const auto t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  return std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc) > 0 ? std::string(text) : std::string();
}

std::string printable_excerpt(std::string_view text, std::size_t shown) {
  // A little over `shown` is shown whole: "... (81 bytes)" would be longer than the rest.
  if (text.size() <= shown + 20) return printable(text);
  std::size_t cut = shown;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return printable(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace jitterd
