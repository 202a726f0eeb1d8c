// SPDX-License-Identifier: Apache-2.0
// The configuration reader on arbitrary YAML: every input gives a Config or ConfigErrors (each
// error printable and placed), never another exception, a crash or unbounded memory.
#include "config/config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(jitterd::fuzz::as_text(data, size));
  try {
    jitterd::parse_config(text, "fuzz.yaml");
  } catch (const jitterd::ConfigErrors& errors) {
    jitterd::fuzz::require(std::string_view(errors.what()).size() > 0);
  }
  return 0;
}
