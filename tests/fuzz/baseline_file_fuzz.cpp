// SPDX-License-Identifier: Apache-2.0
// The baseline file reader on arbitrary text, as `jitterd compare` reads a file: every input gives
// a Baseline or a BaselineError (65, naming the file), never another exception, a crash or
// unbounded memory; and a baseline read is written back as a file that reads again to the same.
#include "fuzz_input.h"
#include "report/baseline_file.h"
#include "report/baseline_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  Baseline baseline;
  try {
    baseline = parse_baseline(fuzz::as_text(data, size), "fuzz.json");
  } catch (const BaselineError& e) {
    fuzz::require(e.exit_code() == kExitBadBaseline && std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
    return 0;
  }
  const std::string written = baseline_json(baseline).dump(-1, ' ', false, Json::error_handler_t::replace);
  const Baseline again = parse_baseline(written, "written.json");  // throws (a finding) if refused
  fuzz::require(baseline_json(again).dump(-1, ' ', false, Json::error_handler_t::replace) == written);
  return 0;
}
