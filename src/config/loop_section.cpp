// SPDX-License-Identifier: Apache-2.0
// The top-level `loops:` section: where the applications' loop probes write their segments, whose
// segments are accepted, when a loop that stopped is down and when a dead writer's loop is
// forgotten (probes/loops_probe.h).
#include <algorithm>

#include "config/probe_sections.h"

namespace jitterd::config_detail {

namespace {

using namespace std::chrono_literals;

// An absolute directory path of printable characters without "." or ".." components.
void read_loop_directory(ConfigReader& r, const Entry& entry, std::string& directory) {
  const std::string allowed = "an absolute directory path such as \"/dev/shm\"";
  const std::optional<std::string> text = r.scalar(entry, allowed);
  if (!text) return;
  bool ok = printable_text(*text, 4096) && (*text)[0] == '/';
  for (std::size_t at = 1; ok && at <= text->size();) {
    const std::size_t end = std::min(text->find('/', at), text->size());
    const std::string part = text->substr(at, end - at);
    ok = part != "." && part != "..";
    at = end + 1;
  }
  if (!ok) {
    r.expect(entry, allowed);
    return;
  }
  directory = *text;
}

// 1..64 user names (letters, digits, '_', '-', '.', at most 32) or numeric uids.
void read_loop_users(ConfigReader& r, const Entry& entry, std::vector<std::string>& users) {
  r.read_strings(entry, "a sequence of 1..64 user names or numeric uids (e.g. [root, trader])",
                 "a user name (letters, digits, '_', '-', '.', at most 32) or a numeric uid", user_name_text,
                 users);
}

}  // namespace

void read_loops_section(ConfigReader& r, const Entry& section, LoopSettings& loops) {
  loops.enabled = true;
  r.read_mapping(section,
                 {{"directory", [&](const Entry& e) { read_loop_directory(r, e, loops.directory); }},
                  {"users", [&](const Entry& e) { read_loop_users(r, e, loops.users); }},
                  {"stale_after", [&](const Entry& e) { assign(loops.stale_after, r.duration(e, 1s, 1h)); }},
                  {"owner_prefix", [&](const Entry& e) { assign(loops.owner_prefix, r.boolean(e)); }},
                  {"forget_after", [&](const Entry& e) { assign(loops.forget_after, r.duration(e, 1min, 720h)); }},
                  {"interval", [&](const Entry& e) { assign(loops.interval, r.duration(e, 100ms, 1h)); }}});
}

}  // namespace jitterd::config_detail
