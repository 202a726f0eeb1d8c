// SPDX-License-Identifier: Apache-2.0
#include "host/thread_stats.h"
#include "host/tasks.h"
#include "host/text.h"

#include <string>

namespace jitterd {
namespace {

// The number of the status file's `key:` line, or std::nullopt.
std::optional<uint64_t> find_counter(std::string_view text, std::string_view key) {
  const std::optional<std::string_view> value = status_field(text, key);
  return value ? parse_number<uint64_t>(*value) : std::nullopt;
}

}  // namespace

std::optional<ContextSwitches> parse_context_switches(std::string_view proc_status_text) {
  const auto voluntary = find_counter(proc_status_text, "voluntary_ctxt_switches");
  const auto involuntary = find_counter(proc_status_text, "nonvoluntary_ctxt_switches");
  if (!voluntary || !involuntary) return std::nullopt;
  return ContextSwitches{*voluntary, *involuntary};
}

std::optional<ContextSwitches> read_thread_context_switches(const HostReader& host, pid_t pid, pid_t tid) {
  const std::string relative = std::to_string(pid) + "/task/" + std::to_string(tid) + "/status";
  const std::optional<std::string> text = host.read_proc(relative);
  if (!text) return std::nullopt;
  return parse_context_switches(*text);
}

std::optional<ContextSwitches> read_thread_context_switches(const Directory& task_dir, pid_t tid,
                                                            FileBuffer& buffer) {
  const std::optional<std::string_view> text = task_dir.read((std::to_string(tid) + "/status").c_str(), buffer);
  if (!text) return std::nullopt;
  return parse_context_switches(*text);
}

}  // namespace jitterd
