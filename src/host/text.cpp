// SPDX-License-Identifier: Apache-2.0
#include "host/text.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>

namespace jitterd {

std::size_t utf8_sequence(std::string_view text, char32_t& point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t value = 0;
  if (lead < 0x80) {
    point = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i) & 0x3F);
  }
  const bool overlong = (length == 3 && value < 0x800) || (length == 4 && value < 0x10000);
  if (overlong || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) return 0;
  point = value;
  return length;
}

std::vector<int> numbered_entries(const std::vector<std::string>& names, std::string_view prefix) {
  std::vector<int> out;
  for (const std::string_view name : names) {
    if (name.substr(0, prefix.size()) != prefix || !all_digits(name.substr(prefix.size()))) continue;
    if (const std::optional<int> number = parse_number<int>(name.substr(prefix.size()))) out.push_back(*number);
  }
  std::sort(out.begin(), out.end());
  return out;
}

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
    char32_t point = 0;
    const std::size_t length = byte >= 0x80 ? utf8_sequence(text.substr(i), point) : 0;
    if (byte >= 0x20 && byte < 0x7f) {
      out += text[i++];
    } else if (byte == '\n') {
      out += "\\n";
      ++i;
    } else if (length > 0 && point >= 0xA0) {  // C1 controls (U+0080..U+009F) are escaped like the C0 ones
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
