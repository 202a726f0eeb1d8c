// SPDX-License-Identifier: Apache-2.0
// /proc/stat, a thread's /proc/<pid>/task/<tid>/status and /proc/net/tcp{,6} (check-config's
// port holders): any text parses to what it holds; busy shares between two readings stay within
// [0, 1]; steal is 0 where a line has no steal column; a listening socket's inode is never 0.
#include "fuzz_input.h"
#include "host/port_holders.h"
#include "host/posture_parse.h"
#include "host/thread_stats.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  // The first half as the earlier reading, the whole as the later one.
  const auto before = parse_proc_stat(text.substr(0, text.size() / 2));
  const auto after = parse_proc_stat(text);
  for (const auto& [cpu, share] : busy_shares(before, after)) fuzz::require(share >= 0.0 && share <= 1.0);
  for (const auto& [cpu, times] : after) fuzz::require(times.has_steal || times.steal == 0);
  static_cast<void>(parse_context_switches(text));
  const std::uint16_t port = size >= 2 ? static_cast<std::uint16_t>(data[0] << 8 | data[1]) : 9978;
  for (std::uint64_t inode : listening_inodes(text, port)) fuzz::require(inode != 0);
  return 0;
}
