// SPDX-License-Identifier: Apache-2.0
#include "compare/time_range.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace jitterd {

std::optional<double> parse_instant(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text.find_first_not_of("0123456789.") == std::string::npos) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
    return v;
  }
  // RFC 3339: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  std::tm tm{};
  int consumed = 0;
  char t = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &t,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 7 ||
      consumed != 19 || (t != 'T' && t != 't'))
    return std::nullopt;
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60)
    return std::nullopt;
  std::string rest = text.substr(19);
  double fraction = 0;
  if (!rest.empty() && rest[0] == '.') {
    std::size_t digits = 1;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0) ++digits;
    if (digits == 1) return std::nullopt;
    fraction = std::strtod(("0" + rest.substr(0, digits)).c_str(), nullptr);
    rest = rest.substr(digits);
  }
  int offset_seconds = 0;
  if (rest == "Z" || rest == "z") {
    offset_seconds = 0;
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int hours = 0, minutes = 0, n = 0;
    if (std::sscanf(rest.c_str() + 1, "%2d:%2d%n", &hours, &minutes, &n) != 2 || n != 5 || hours > 23 ||
        minutes > 59)
      return std::nullopt;
    offset_seconds = (hours * 60 + minutes) * 60 * (rest[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t seconds = timegm(&tm);
  return static_cast<double>(seconds) - offset_seconds + fraction;
}

std::optional<TimeRange> parse_time_range(const std::string& text, std::string* error) {
  const std::size_t slash = text.find('/');
  const auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  if (slash == std::string::npos)
    return fail("must be START/END, each RFC 3339 (2026-11-25T10:00:00Z) or unix seconds, got \"" + text + "\"");
  const std::string start_text = text.substr(0, slash), end_text = text.substr(slash + 1);
  const std::optional<double> start = parse_instant(start_text), end = parse_instant(end_text);
  if (!start)
    return fail("START \"" + start_text + "\" is neither RFC 3339 (2026-11-25T10:00:00Z) nor unix seconds");
  if (!end) return fail("END \"" + end_text + "\" is neither RFC 3339 (2026-11-25T10:10:00Z) nor unix seconds");
  if (*end <= *start)
    return fail(fmt::format("the range is the wrong way round or empty: END {} is not after START {}", end_text,
                            start_text));
  return TimeRange{*start, *end, text};
}

}  // namespace jitterd
