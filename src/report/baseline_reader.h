// SPDX-License-Identifier: Apache-2.0
// Reading a baseline file's JSON back into a Baseline (report/baseline_file.h holds the format,
// writing and the file operations). The reading is strict: every field is checked for presence,
// kind and range, every message names the file and the JSON path of what is missing or wrong,
// limits (kBaselineMaxCpus, kBaselineMaxLoops) bound what a file costs, and a newer major
// format_version is refused while a newer minor's added fields are ignored. Pure functions; safe
// from any thread.
#pragma once

#include <string>
#include <string_view>

#include "report/baseline_file.h"

namespace jitterd {

// `source` names the file in messages. Throws BaselineError (65): a field missing or of the wrong
// kind, more than kBaselineMaxCpus CPUs (or watched CPUs) or kBaselineMaxLoops loops, a CPU,
// probe, loop name, watched CPU or histogram bucket given twice.
Baseline baseline_from_json(const Json& document, const std::string& source);
// The text of a baseline file, parsed strictly (report/json_input.h: a key given twice, a number
// out of range, nesting too deep) and read as above. Throws BaselineError (65).
Baseline parse_baseline(std::string_view text, const std::string& source);

}  // namespace jitterd
