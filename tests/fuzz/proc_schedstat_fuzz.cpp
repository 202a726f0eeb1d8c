// SPDX-License-Identifier: Apache-2.0
// The watch engine's parsers: a thread's schedstat and /proc/schedstat parse any text to what it
// holds (never a negative CPU), a thread's stat line to a CPU in range, and a cgroup path never
// climbs out of the cgroup root.
#include <string>

#include "fuzz_input.h"
#include "host/tasks.h"
#include "watch/application.h"
#include "watch/sched_counters.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  static_cast<void>(parse_thread_schedstat(text));
  for (const auto& [cpu, times] : parse_proc_schedstat(text)) fuzz::require(cpu >= 0);
  if (const auto stat = parse_task_stat(text)) fuzz::require(stat->processor >= 0);
  const std::string relative = cgroup_relative_path(text);
  for (std::size_t at = 0; at <= relative.size();) {  // no component is "." or ".."
    const std::size_t end = std::min(relative.find('/', at), relative.size());
    const std::string part = relative.substr(at, end - at);
    fuzz::require(part != "." && part != "..");
    if (!relative.empty()) fuzz::require(!part.empty());
    at = end + 1;
  }
  return 0;
}
