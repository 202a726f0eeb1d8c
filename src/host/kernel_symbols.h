// SPDX-License-Identifier: Apache-2.0
// The kernel's text symbols from /proc/kallsyms (through HostReader's procfs root), to name a
// function the BPF program saw only by its address (a timer's callback). Addresses read as zero
// where kernel.kptr_restrict hides them from the reader (not root): then nothing is named and
// why_not() says so. Input from outside: a line that does not parse is skipped, a file of more
// than kMaxKernelSymbols text symbols or kMaxKallsymsBytes is cut there, and the file is read line
// by line (a distribution kernel's is about 10 MB: only the text symbols are kept). Build once,
// then const: safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

// More than any kernel has (a distribution kernel with its modules: about 200,000).
inline constexpr std::size_t kMaxKernelSymbols = 2'000'000;
inline constexpr std::size_t kMaxKallsymsBytes = std::size_t{256} << 20;
// A function is named with an offset only this far past its symbol's start; further, the address
// is more likely in a module loaded since the symbols were read (kallsyms gives no sizes).
inline constexpr std::uint64_t kMaxSymbolOffset = 64 * 1024;

class KernelSymbols {
 public:
  KernelSymbols() = default;
  // From the text of /proc/kallsyms: the text symbols (type t or T), modules' included.
  static KernelSymbols parse(std::string_view kallsyms_text);
  static KernelSymbols read(const HostReader& host);

  // The function at `address`: its name where a symbol starts there, "name+0xOFFSET" up to
  // kMaxSymbolOffset past one that is not the last, the address in hexadecimal where none is known.
  std::string name_of(std::uint64_t address) const;
  // Whether a symbol starts exactly at `address` (a function pointer, such as a timer's callback,
  // always points at one: one that does not names a module loaded since, so read them again).
  bool starts_at(std::uint64_t address) const;
  std::size_t size() const { return symbols_.size(); }
  const std::string& why_not() const { return why_not_; }

 private:
  void add_line(std::string_view line, bool& hidden);
  void finish(bool hidden);

  std::vector<std::pair<std::uint64_t, std::string>> symbols_;  // by address
  std::string why_not_;
};

// The running kernel's symbols (/proc/kallsyms whatever --path.procfs says: the addresses are
// the live kernel's) for a reader that names addresses over time: read at the first get(), and
// again at most once a minute after a reading saw an address at no symbol's start (a module
// loaded since). One thread at a time.
class LiveKernelSymbols {
 public:
  const KernelSymbols& get();
  // Whether the last names given came from an address at no known symbol's start.
  void saw_inexact(bool inexact) { stale_ = inexact && symbols_.size() > 0; }

 private:
  KernelSymbols symbols_;
  bool read_ = false, stale_ = false;
  std::chrono::steady_clock::time_point read_at_;
};

}  // namespace jitterd
