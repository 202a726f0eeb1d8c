// SPDX-License-Identifier: Apache-2.0
// JSON that comes from outside jitterd (a baseline file, a Prometheus answer) parsed strictly, in
// one pass and linear time, so that no input is quietly misread or costs more than its size:
// nlohmann-json keeps the last of a key given twice (a hand-edited or forged file would say two
// things), reports a number beyond a double (1e999) as an exception without a place, and, as
// ordered_json, looks each key up one by one, so one object of a million keys takes quadratic
// time. Pure; safe from any thread.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "report/render.h"

namespace jitterd {

struct JsonLimits {
  std::size_t max_depth = 64;  // nested arrays and objects (a baseline needs 7)
  // Keys in one object: a baseline's largest holds 13, a Prometheus label set a few tens.
  // ordered_json finds a key by reading them all, so each key costs up to this many comparisons.
  std::size_t max_object_keys = 64;
};

// What is wrong and where: "at byte 4096" (syntax: not JSON, or cut short), "cpus[3]: the key
// \"cpu\" is given twice in one object", "cpus[0].max_ns: the number 1e999 is out of range". The
// caller names the source.
class JsonInputError : public std::runtime_error {
 public:
  explicit JsonInputError(const std::string& message, bool syntax = false)
      : std::runtime_error(message), syntax_(syntax) {}
  bool syntax() const { return syntax_; }

 private:
  bool syntax_;
};

// Throws JsonInputError for text that is not JSON, a repeated key in one object, a number out of
// a double's range, or nesting or an object beyond `limits`.
Json parse_json_input(std::string_view text, const JsonLimits& limits = {});

}  // namespace jitterd
