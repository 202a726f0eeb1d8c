// SPDX-License-Identifier: Apache-2.0
// The few text helpers every sysfs, procfs and configuration parser needs, in one place so they
// agree on what a blank is, the one way prose (titles, notes, label values) writes a number, and
// the one way text from outside (task and IRQ names, the kernel command line, BIOS strings, a
// server's answer) is made inert before it reaches a terminal, a message or a script. Pure
// functions, safe from any thread.
#pragma once

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace jitterd {

// The kernel's isspace(): what it skips around values in sysfs and procfs files.
inline constexpr std::string_view kBlanks = " \t\n\r\v\f";

inline std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlanks) - first + 1);
}

// Non-empty and only 0-9: no sign, no blanks.
inline bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Why parse_number gave nothing: not a number at all, or a number that does not fit in T.
enum class NumberError { none, malformed, out_of_range };

// The whole of `text` as a number in base `base` (std::from_chars: no blanks, no sign for
// unsigned types, no "0x"); std::nullopt if anything is left over or it does not fit, with the
// reason in *error when given. The one number parser of jitterd's text inputs.
template <typename T>
std::optional<T> parse_number(std::string_view text, NumberError* error = nullptr, int base = 10) {
  T value{};
  std::from_chars_result result{};
  if constexpr (std::is_floating_point_v<T>) {
    result = std::from_chars(text.data(), text.data() + text.size(), value);
  } else {
    result = std::from_chars(text.data(), text.data() + text.size(), value, base);
  }
  const bool whole = !text.empty() && result.ptr == text.data() + text.size();
  const NumberError why = !whole                                        ? NumberError::malformed
                          : result.ec == std::errc::result_out_of_range ? NumberError::out_of_range
                          : result.ec != std::errc()                    ? NumberError::malformed
                                                                        : NumberError::none;
  if (error) *error = why;
  if (why != NumberError::none) return std::nullopt;
  return value;
}

// Blank-separated words (the kernel ends some lists, e.g. available_clocksource, with a blank).
inline std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = text.find_first_not_of(kBlanks); start != std::string_view::npos;) {
    const std::size_t end = std::min(text.find_first_of(kBlanks, start), text.size());
    out.push_back(text.substr(start, end - start));
    start = text.find_first_not_of(kBlanks, end);
  }
  return out;
}

// The lines of `text`, without their '\n'; no empty last line for a final newline.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The numbers of the names that are `prefix` and then digits ("cpu12", "index3", "state10", a pid
// with prefix ""), in numeric order (a sorted listing puts "state10" before "state9"); a name
// whose number does not fit in an int is left out.
std::vector<int> numbered_entries(const std::vector<std::string>& names, std::string_view prefix);

// The words with `separator` between them ("a, b, c"); a word adds no separator while the text
// so far is empty. joined(): with ", ", as messages list what is allowed.
template <typename Words>
std::string joined_with(const Words& words, std::string_view separator) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : std::string(separator)) + std::string(word);
  return text;
}

template <typename Words>
std::string joined(const Words& words) {
  return joined_with(words, ", ");
}

// `value` with `decimals` digits after the point ("2.50" for 2.5 and 2), for prose: a report
// table takes the number itself (probes/probe.h Cell) and leaves its display to the renderer.
inline std::string decimal_text(double value, int decimals) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  return ec == std::errc() ? std::string(buffer, end) : std::string("?");
}

// strerror's words for the errno value `error` ("No space left on device"), as messages quote them.
std::string errno_text(int error);

// `unix_seconds` (whole seconds, rounded down) as ISO 8601 UTC, "2026-11-26T14:15:53Z"; "" for a
// time at or before the epoch (not known). The one way jitterd writes a wall-clock time.
std::string utc_text(double unix_seconds);

// The length of the well-formed UTF-8 sequence at the start of non-empty `text` (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF; ASCII is 1) with its value in `point`,
// or 0. The one UTF-8 decoder of printable, html_escape and json_text.
std::size_t utf8_sequence(std::string_view text, char32_t& point);

// Line and paragraph separators, and the bidirectional controls that make a terminal or a browser
// show text in another order than it is read (CVE-2021-42574, "Trojan Source"): U+2028, U+2029,
// U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C. Every output format escapes them (its
// own way: printable, html_escape, json_text, csv_field).
bool reorders_text(char32_t point);

// `text` with everything that could act on a terminal or a line-oriented reader escaped, so that it
// stays on its one line and only shows: C0 and C1 controls, DEL and bytes that are not well-formed
// UTF-8 as "\x1b", a newline as "\n", and the characters that reorder or break lines in a
// terminal (U+2028, U+2029, the bidirectional embeddings, overrides and isolates) as "\u202e".
// Well-formed printable UTF-8 is kept. The one escaping of jitterd's messages and text tables.
std::string printable(std::string_view text);

// printable() of each line of a message jitterd wrote itself (its lines kept, everything else
// escaped): the last guard before stderr for an error that quotes outside text.
std::string printable_lines(std::string_view text);

// printable(`text`), cut after about `shown` bytes (at a character boundary) with its length
// said ("abc... (250000 bytes)"), for a message that quotes something of any size.
std::string printable_excerpt(std::string_view text, std::size_t shown = 60);

}  // namespace jitterd
