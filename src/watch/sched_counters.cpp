// SPDX-License-Identifier: Apache-2.0
#include "watch/sched_counters.h"

#include <algorithm>
#include <vector>

#include "host/text.h"

namespace jitterd {

std::optional<SchedTimes> parse_thread_schedstat(std::string_view text) {
  const std::vector<std::string_view> words = split_words(trim(text));
  if (words.size() != 3) return std::nullopt;
  const auto run = parse_number<std::uint64_t>(words[0]);
  const auto wait = parse_number<std::uint64_t>(words[1]);
  const auto slices = parse_number<std::uint64_t>(words[2]);
  if (!run || !wait || !slices) return std::nullopt;
  return SchedTimes{*run, *wait, *slices};
}

std::map<int, SchedTimes> parse_proc_schedstat(std::string_view text) {
  std::map<int, SchedTimes> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::vector<std::string_view> words = split_words(text.substr(at, end - at));
    at = end + 1;
    if (words.size() == 2 && words[0] == "version") {
      const auto version = parse_number<int>(words[1]);
      if (!version || *version < 15) return {};
      continue;
    }
    if (words.size() < 10 || words[0].substr(0, 3) != "cpu") continue;
    const auto cpu = parse_number<int>(words[0].substr(3));
    const auto run = parse_number<std::uint64_t>(words[7]);
    const auto wait = parse_number<std::uint64_t>(words[8]);
    const auto slices = parse_number<std::uint64_t>(words[9]);
    if (!cpu || *cpu < 0 || !run || !wait || !slices) continue;
    out[*cpu] = SchedTimes{*run, *wait, *slices};
  }
  return out;
}

}  // namespace jitterd
