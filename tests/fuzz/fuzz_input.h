// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the libFuzzer targets: the input as text, and a cheap way to split it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitterd::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property the target checks beyond "no crash, no sanitizer report": a failure aborts, which
// libFuzzer reports as a crash with the input saved.
inline void require(bool holds) {
  if (!holds) __builtin_trap();
}

}  // namespace jitterd::fuzz
