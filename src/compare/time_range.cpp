// SPDX-License-Identifier: Apache-2.0
#include "compare/time_range.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <utility>

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

std::optional<double> parse_prometheus_duration(std::string_view text) {
  // Units largest first, as Prometheus's model.ParseDuration takes them; "ms" before "m".
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"y", 365 * 86400.0}, {"w", 7 * 86400.0}, {"d", 86400.0}, {"h", 3600.0},
      {"m", 60.0},          {"s", 1.0},         {"ms", 1e-3}};
  constexpr double kLongest = 100 * 365 * 86400.0;
  if (text.empty() || text.size() > 64) return std::nullopt;
  double total = 0;
  std::size_t next_unit = 0;  // each unit after the previous one
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0 || digits > 12) return std::nullopt;
    const double number = std::strtod(std::string(text.substr(0, digits)).c_str(), nullptr);
    text.remove_prefix(digits);
    const bool millis = text.substr(0, 2) == "ms";
    std::size_t unit = next_unit;
    for (; unit < std::size(kUnits); ++unit) {
      const std::string_view name = kUnits[unit].first;
      if (text.substr(0, name.size()) == name && !(name == "m" && millis)) break;
    }
    if (unit == std::size(kUnits)) return std::nullopt;
    text.remove_prefix(kUnits[unit].first.size());
    total += number * kUnits[unit].second;
    next_unit = unit + 1;
  }
  if (!(total > 0) || total > kLongest) return std::nullopt;
  return total;
}

namespace {

constexpr const char* kRangeForms =
    "START/END (each RFC 3339 like 2026-11-25T10:00:00Z, unix seconds, now or now-DURATION), or DURATION "
    "alone (24h, -1h: the last one ending now); a DURATION as in PromQL: 1h30m, 90s, 2d";

// An end of the range: absolute, "now", or "now-DURATION".
std::optional<double> parse_range_end(const std::string& text, double now) {
  if (text == "now") return now;
  if (text.rfind("now-", 0) == 0) {
    const std::optional<double> back = parse_prometheus_duration(std::string_view(text).substr(4));
    if (back) return now - *back;
    return std::nullopt;
  }
  return parse_instant(text);
}

double wall_clock_now() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

std::optional<TimeRange> parse_time_range(const std::string& text, std::string* error, std::optional<double> now) {
  const auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  const double clock = now ? *now : wall_clock_now();
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) {
    const std::string_view span = !text.empty() && text[0] == '-' ? std::string_view(text).substr(1) : text;
    if (const std::optional<double> seconds = parse_prometheus_duration(span))
      return TimeRange{clock - *seconds, clock, text};
    return fail("must be " + std::string(kRangeForms) + ", got \"" + text + "\"");
  }
  const std::string start_text = text.substr(0, slash), end_text = text.substr(slash + 1);
  const std::optional<double> start = parse_range_end(start_text, clock), end = parse_range_end(end_text, clock);
  if (!start)
    return fail("START \"" + start_text +
                "\" is none of RFC 3339 (2026-11-25T10:00:00Z), unix seconds, now, now-DURATION (now-24h)");
  if (!end)
    return fail("END \"" + end_text +
                "\" is none of RFC 3339 (2026-11-25T10:10:00Z), unix seconds, now, now-DURATION (now-1h)");
  if (*end <= *start)
    return fail(fmt::format("the range is the wrong way round or empty: END {} is not after START {}", end_text,
                            start_text));
  return TimeRange{*start, *end, text};
}

}  // namespace jitterd
