#include "config/value_checks.h"

#include <algorithm>
#include <cctype>

#include "config/config_reader.h"

namespace jitterd {
namespace {

using config_detail::decimal;

CheckedValue refuse(std::string_view allowed, std::string_view seen) {
  return {std::nullopt, "must be " + std::string(allowed) + ", got " + std::string(seen)};
}

// A dotted quad, because Debian's civetweb cannot listen on IPv6 and takes no host names.
bool is_ipv4_address(std::string_view text) {
  if (std::count(text.begin(), text.end(), '.') != 3) return false;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t dot = std::min(text.find('.', start), text.size());
    const std::optional<unsigned> octet = decimal(text.substr(start, dot - start));
    if (!octet || *octet > 255) return false;
    start = dot + 1;
  }
  return true;
}

}  // namespace

CheckedValue check_listen_address(const std::string& text, std::string_view seen) {
  constexpr std::string_view allowed =
      "an IPv4 address and port such as 0.0.0.0:9978 (no host names; no IPv6, which this "
      "civetweb lacks)";
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || !is_ipv4_address(std::string_view(text).substr(0, colon)))
    return refuse(allowed, seen);
  const std::optional<unsigned> port = decimal(std::string_view(text).substr(colon + 1));
  if (!port || *port > 65535) return refuse("an IPv4 address and a port 0..65535", seen);
  return {text, ""};
}

// "/" is the landing page, so the metrics need a path of their own. Only the characters RFC 3986
// lets a path hold as they are: a quote, a blank, '?', '#' or '%' would not reach the server as
// written.
CheckedValue check_telemetry_path(const std::string& text, std::string_view seen) {
  constexpr std::string_view punctuation = "-._~!$&'()*+,;=:@/";
  if (text.size() < 2 || text.front() != '/') return refuse("a path starting with \"/\", other than \"/\"", seen);
  const bool url_path = std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || punctuation.find(c) != std::string_view::npos;
  });
  if (!url_path) return refuse("a URL path of letters, digits and " + std::string(punctuation) + " only", seen);
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

std::string printable(std::string_view text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (byte < 0x20 || byte == 0x7f)
      out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    else
      out += c;
  }
  return out;
}

std::string quoted_for_message(std::string_view text) { return '"' + printable(text) + '"'; }

}  // namespace jitterd
