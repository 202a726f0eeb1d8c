// The few text helpers every sysfs, procfs and configuration parser needs, in one place so they
// agree on what a blank is. Pure inline functions, safe from any thread.
#pragma once

#include <algorithm>
#include <string_view>

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

}  // namespace jitterd
