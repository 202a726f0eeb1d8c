// SPDX-License-Identifier: Apache-2.0
#include "host/kernel_symbols.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "host/text.h"

namespace jitterd {
namespace {

std::string hex_address(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

void KernelSymbols::add_line(std::string_view line, bool& hidden) {
  // "ffffffff8141e4b0 t hrtimer_wakeup" or "... t name\t[module]"
  const std::vector<std::string_view> words = split_words(line);
  if (words.size() < 3 || words[1].size() != 1 || (words[1][0] != 't' && words[1][0] != 'T')) return;
  const std::optional<std::uint64_t> address = parse_number<std::uint64_t>(words[0], nullptr, 16);
  if (!address) return;
  if (*address == 0) {
    hidden = true;
    return;
  }
  symbols_.emplace_back(*address, printable_excerpt(words[2], 128));
}

void KernelSymbols::finish(bool hidden) {
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  symbols_.shrink_to_fit();
  if (symbols_.empty())
    why_not_ = hidden ? "/proc/kallsyms shows every address as 0 (kernel.kptr_restrict hides them from this user)"
                      : "no text symbols in /proc/kallsyms";
}

KernelSymbols KernelSymbols::parse(std::string_view kallsyms_text) {
  KernelSymbols out;
  bool hidden = false;
  for (std::string_view line : split_lines(kallsyms_text.substr(0, kMaxKallsymsBytes))) {
    if (out.symbols_.size() >= kMaxKernelSymbols) break;
    out.add_line(line, hidden);
  }
  out.finish(hidden);
  return out;
}

KernelSymbols KernelSymbols::read(const HostReader& host) {
  std::ifstream file(host.proc_path("kallsyms"));
  if (!file) {
    KernelSymbols none;
    none.why_not_ = host.proc_path("kallsyms").string() + " is not readable";
    return none;
  }
  KernelSymbols out;
  bool hidden = false;
  std::size_t bytes = 0;
  for (std::string line; std::getline(file, line) && bytes < kMaxKallsymsBytes;) {
    bytes += line.size() + 1;
    if (out.symbols_.size() >= kMaxKernelSymbols) break;
    out.add_line(line, hidden);
  }
  out.finish(hidden);
  return out;
}

std::string KernelSymbols::name_of(std::uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](std::uint64_t a, const auto& symbol) { return a < symbol.first; });
  if (after == symbols_.begin()) return hex_address(address);
  const auto& [start, name] = *std::prev(after);
  if (start == address) return name;
  if (after == symbols_.end() || address - start > kMaxSymbolOffset) return hex_address(address);
  return name + "+" + hex_address(address - start);
}

bool KernelSymbols::starts_at(std::uint64_t address) const {
  const auto at = std::lower_bound(symbols_.begin(), symbols_.end(), address,
                                   [](const auto& symbol, std::uint64_t a) { return symbol.first < a; });
  return at != symbols_.end() && at->first == address;
}

const KernelSymbols& LiveKernelSymbols::get() {
  const auto now = std::chrono::steady_clock::now();
  if (!read_ || (stale_ && now - read_at_ >= std::chrono::minutes(1))) {
    KernelSymbols fresh = KernelSymbols::read(HostReader());
    // A read again that names nothing (the file unreadable now, kptr_restrict raised) keeps the
    // names had; the first read's reason stays its own.
    if (!read_ || fresh.size() > 0) symbols_ = std::move(fresh);
    read_ = true;
    stale_ = false;
    read_at_ = now;
  }
  return symbols_;
}

}  // namespace jitterd
