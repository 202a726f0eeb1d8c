// SPDX-License-Identifier: Apache-2.0
#include "config/duration.h"

#include <array>
#include <cstdint>
#include <limits>
#include <numeric>

namespace jitterd {
namespace {

struct Unit {
  std::string_view suffix;
  std::int64_t nanoseconds;
};

// Longest suffixes first, so "ms" is not read as "m" followed by junk. Both micro signs are
// accepted because editors produce either: U+00B5 (micro sign) and U+03BC (Greek mu).
constexpr std::array<Unit, 8> parse_units{{{"ns", 1},
                                           {"us", 1'000},
                                           {"\u00b5s", 1'000},
                                           {"\u03bcs", 1'000},
                                           {"ms", 1'000'000},
                                           {"s", 1'000'000'000},
                                           {"m", 60'000'000'000},
                                           {"h", 3'600'000'000'000}}};

// Largest first: on equal length the larger unit reads better ("1.001s" over "1001ms").
constexpr std::array<Unit, 6> format_units{{{"h", 3'600'000'000'000},
                                            {"m", 60'000'000'000},
                                            {"s", 1'000'000'000},
                                            {"ms", 1'000'000},
                                            {"us", 1'000},
                                            {"ns", 1}}};

constexpr std::int64_t max_ns = std::numeric_limits<std::int64_t>::max();

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<Unit> find_unit(std::string_view suffix) {
  for (const Unit& unit : parse_units)
    if (unit.suffix == suffix) return unit;
  return std::nullopt;
}

// Digits to a number; nullopt on overflow.
std::optional<std::int64_t> to_integer(std::string_view digits) {
  std::int64_t value = 0;
  for (char c : digits) {
    if (value > (max_ns - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// fraction / 10^digits of a unit, in nanoseconds; nullopt unless it is a whole number.
// Reducing by the gcd first keeps every product below the unit, so nothing overflows.
std::optional<std::int64_t> fraction_to_ns(std::string_view fraction, std::int64_t unit_ns) {
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  if (fraction.empty()) return 0;
  if (fraction.size() > 18) return std::nullopt;  // a unit of at most 3.6e12 ns cannot absorb it
  std::int64_t denominator = 1;
  for (std::size_t i = 0; i < fraction.size(); ++i) denominator *= 10;
  const std::int64_t numerator = *to_integer(fraction);
  const std::int64_t common = std::gcd(unit_ns, denominator);
  const std::int64_t step = denominator / common;
  if (numerator % step != 0) return std::nullopt;
  return numerator / step * (unit_ns / common);
}

// The decimal spelling of ns in the given unit, or nullopt if it does not terminate (minutes and
// hours divide by 3) or would start with "0.".
std::optional<std::string> spell_in(std::uint64_t ns, const Unit& unit) {
  const auto unit_ns = static_cast<std::uint64_t>(unit.nanoseconds);
  if (ns < unit_ns) return std::nullopt;
  std::string text = std::to_string(ns / unit_ns);
  std::uint64_t remainder = ns % unit_ns;
  if (remainder != 0) text += '.';
  for (int digits = 0; remainder != 0; ++digits) {
    if (digits == 15) return std::nullopt;
    remainder *= 10;
    text += static_cast<char>('0' + remainder / unit_ns);
    remainder %= unit_ns;
  }
  return text += unit.suffix;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && is_digit(text[end])) ++end;
  const std::string_view whole = text.substr(0, end);
  std::string_view fraction;
  if (end < text.size() && text[end] == '.') {
    const std::size_t start = ++end;
    while (end < text.size() && is_digit(text[end])) ++end;
    fraction = text.substr(start, end - start);
    if (fraction.empty()) return std::nullopt;
  }
  const std::optional<Unit> unit = find_unit(text.substr(end));
  if (whole.empty() || !unit) return std::nullopt;
  const std::optional<std::int64_t> count = to_integer(whole);
  const std::optional<std::int64_t> part = fraction_to_ns(fraction, unit->nanoseconds);
  if (!count || !part || *count > (max_ns - *part) / unit->nanoseconds) return std::nullopt;
  return Duration{*count * unit->nanoseconds + *part};
}

std::string format_duration(Duration duration) {
  const std::int64_t ns = duration.count();
  if (ns == 0) return "0s";
  // Through unsigned, so the most negative value has a magnitude too.
  const std::uint64_t magnitude =
      ns < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::string best;
  for (const Unit& unit : format_units) {
    const std::optional<std::string> text = spell_in(magnitude, unit);
    if (text && (best.empty() || text->size() < best.size())) best = *text;
  }
  return ns < 0 ? "-" + best : best;
}

}  // namespace jitterd
