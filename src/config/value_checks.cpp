#include "config/value_checks.h"

#include <algorithm>
#include <cctype>

#include "config/config_reader.h"
#include "config/web_config.h"

namespace jitterd {
namespace {

CheckedValue refuse(std::string_view allowed, std::string_view seen) {
  return {std::nullopt, "must be " + std::string(allowed) + ", got " + std::string(seen)};
}

}  // namespace

CheckedValue check_listen_address(const std::string& text, std::string_view seen) {
  std::string reason;
  if (!parse_listen_address(text, &reason))
    return {std::nullopt, "must be a.b.c.d:port or [IPv6]:port, such as 0.0.0.0:9978 or [::]:9978, got " +
                              std::string(seen) + " (" + reason + ")"};
  return {text, ""};
}

// "/" is the status page, so the metrics need a path of their own; a clean path needs no escaping
// anywhere it is written (web_config.h says which paths are clean).
CheckedValue check_telemetry_path(const std::string& text, std::string_view seen) {
  if (const std::string problem = telemetry_path_problem(text); !problem.empty())
    return {std::nullopt, problem + ", got " + std::string(seen)};
  return {text, ""};
}

CheckedValue check_log_level(const std::string& text, std::string_view seen) {
  if (std::find(log_levels().begin(), log_levels().end(), text) == log_levels().end())
    return refuse("one of " + config_detail::join(log_levels()), seen);
  return {text, ""};
}

// spdlog's canonical names only: its aliases ("warning", "err") would make two spellings valid.
const std::vector<std::string_view>& log_levels() {
  static const std::vector<std::string_view> levels{"trace", "debug", "info", "warn", "error", "critical", "off"};
  return levels;
}

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

}  // namespace

std::string printable(std::string_view text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += text[i++];
    } else if (byte == '\n') {
      out += "\\n";
      ++i;
    } else if (const std::size_t length = byte >= 0x80 ? utf8_sequence(text, i) : 0; length > 0) {
      out += text.substr(i, length);
      i += length;
    } else {
      out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
      ++i;
    }
  }
  return out;
}

std::string quoted_for_message(std::string_view text) { return '"' + printable(text) + '"'; }

}  // namespace jitterd
