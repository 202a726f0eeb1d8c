// SPDX-License-Identifier: Apache-2.0
// The kernel's text symbols from /proc/kallsyms (through HostReader's procfs root), to name a
// function the BPF program saw only by its address (a timer's callback). Addresses read as zero
// where kernel.kptr_restrict hides them from the reader (not root): then nothing is named and
// why_not() says so. Input from outside: a line that does not parse is skipped, a file of more
// than kMaxKernelSymbols text symbols is cut there. Build once, then const: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

// More than any kernel has (a distribution kernel with its modules: about 200,000).
inline constexpr std::size_t kMaxKernelSymbols = 2'000'000;

class KernelSymbols {
 public:
  KernelSymbols() = default;
  // From the text of /proc/kallsyms: the text symbols (type t or T), modules' included.
  static KernelSymbols parse(std::string_view kallsyms_text);
  static KernelSymbols read(const HostReader& host);

  // The function at `address`: its name where a symbol starts there, "name+0xOFFSET" inside one,
  // the address in hexadecimal where none is known.
  std::string name_of(std::uint64_t address) const;
  std::size_t size() const { return symbols_.size(); }
  const std::string& why_not() const { return why_not_; }

 private:
  std::vector<std::pair<std::uint64_t, std::string>> symbols_;  // by address
  std::string why_not_;
};

}  // namespace jitterd
