// SPDX-License-Identifier: Apache-2.0
#include "host/kernel_symbols.h"

#include <algorithm>
#include <cstdio>

#include "host/text.h"

namespace jitterd {
namespace {

std::string hex_address(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::string_view kallsyms_text) {
  KernelSymbols out;
  bool hidden = false;
  for (std::string_view line : split_lines(kallsyms_text)) {
    if (out.symbols_.size() >= kMaxKernelSymbols) break;
    // "ffffffff8141e4b0 t hrtimer_wakeup" or "... t name\t[module]"
    const std::vector<std::string_view> words = split_words(line);
    if (words.size() < 3 || words[1].size() != 1 || (words[1][0] != 't' && words[1][0] != 'T')) continue;
    const std::optional<std::uint64_t> address = parse_number<std::uint64_t>(words[0], nullptr, 16);
    if (!address) continue;
    if (*address == 0) {
      hidden = true;
      continue;
    }
    out.symbols_.emplace_back(*address, printable_excerpt(words[2], 128));
  }
  std::stable_sort(out.symbols_.begin(), out.symbols_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (out.symbols_.empty())
    out.why_not_ = hidden
                       ? "/proc/kallsyms shows every address as 0 (kernel.kptr_restrict hides them from this user)"
                       : "no text symbols in /proc/kallsyms";
  return out;
}

KernelSymbols KernelSymbols::read(const HostReader& host) {
  const std::optional<std::string> text = host.read_proc("kallsyms");
  if (!text) {
    KernelSymbols none;
    none.why_not_ = host.proc_path("kallsyms").string() + " is not readable";
    return none;
  }
  return parse(*text);
}

std::string KernelSymbols::name_of(std::uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](std::uint64_t a, const auto& symbol) { return a < symbol.first; });
  if (after == symbols_.begin()) return hex_address(address);
  const auto& [start, name] = *std::prev(after);
  return start == address ? name : name + "+" + hex_address(address - start);
}

}  // namespace jitterd
