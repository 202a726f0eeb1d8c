// SPDX-License-Identifier: Apache-2.0
// A loop segment's labels (loops/loop_segment.h): the rules that keep them from breaking the
// exposition (docs/loops.md#labels).
#include <algorithm>

#include "host/text.h"
#include "loops/loop_segment.h"

namespace jitterd {

namespace {

constexpr std::size_t kMaxLabels = 8;

bool label_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string loop_label_problem(std::string_view key, std::string_view value) {
  const std::string shown = printable(std::string(key));
  if (key.empty() || key.size() > 63 || (key[0] >= '0' && key[0] <= '9') ||
      !std::all_of(key.begin(), key.end(), label_name_char))
    return "label name '" + shown + "' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, at most 63)";
  if (key.substr(0, 2) == "__") return "label name '" + shown + "' starts with __, which Prometheus reserves";
  for (std::string_view reserved : kLoopReservedLabels)
    if (key == reserved)
      return "label name '" + shown +
             "' is reserved: jitterd or Prometheus puts it on the loop's series (loop, cpu, cause, le, "
             "quantile, instance, job)";
  if (!std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"'; }))
    return "the value of label '" + shown +
           "' holds a quote or a byte outside printable ASCII (a newline, a control byte or non-UTF-8)";
  return "";
}

// "key=value,key=value" (at most 8, keys unique), each pair as loop_label_problem allows; the
// problem with the first pair that is not, naming it.
std::variant<std::vector<std::pair<std::string, std::string>>, std::string> parse_loop_labels(
    const std::string& text) {
  std::vector<std::pair<std::string, std::string>> labels;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    const std::size_t equals = item.find('=');
    if (labels.size() == kMaxLabels) return "more than 8 labels";
    if (equals == std::string::npos) return "'" + printable(item) + "' is not key=value";
    std::string key = item.substr(0, equals), value = item.substr(equals + 1);
    if (std::string problem = loop_label_problem(key, value); !problem.empty()) return problem;
    for (const auto& [k, v] : labels)
      if (k == key) return "label '" + key + "' appears twice";
    labels.emplace_back(std::move(key), std::move(value));
    at = end + 1;
    if (end + 1 == text.size()) return "a trailing comma";
  }
  return labels;
}

}  // namespace jitterd
