// SPDX-License-Identifier: Apache-2.0
#include "host/posture_parse.h"

#include <algorithm>

#include "host/cpu_list.h"
#include "host/text.h"

namespace jitterd {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Kernel parameter names treat '-' and '_' alike (parameq() in kernel/params.c).
std::string normalized_key(std::string_view key) {
  std::string out(key);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// One parameter from the front of `rest` (which starts at a non-blank), advancing past it. Same
// rules as next_arg() in lib/cmdline.c: a quote toggles quoting anywhere; a leading quote on the
// whole parameter or on its value is dropped with the final quote.
CmdlineParam next_param(std::string_view& rest) {
  const bool quoted = rest.front() == '"';
  if (quoted) rest.remove_prefix(1);
  bool in_quote = quoted;
  std::size_t i = 0, equals = std::string_view::npos;
  for (; i < rest.size(); ++i) {
    if (kBlanks.find(rest[i]) != std::string_view::npos && !in_quote) break;
    if (equals == std::string_view::npos && rest[i] == '=') equals = i;
    if (rest[i] == '"') in_quote = !in_quote;
  }
  const std::string_view word = rest.substr(0, i);
  rest.remove_prefix(i);
  const bool value_quoted =
      equals != std::string_view::npos && equals + 1 < word.size() && word[equals + 1] == '"';
  std::size_t end = word.size();
  if ((quoted || value_quoted) && end > 0 && word[end - 1] == '"') --end;
  if (equals == std::string_view::npos) return {std::string(word.substr(0, end)), std::nullopt};
  const std::size_t value_start = equals + 1 + (value_quoted ? 1 : 0);
  const std::size_t value_size = end > value_start ? end - value_start : 0;
  return {std::string(word.substr(0, equals)), std::string(word.substr(value_start, value_size))};
}

// isolcpus=[flag,]...cpu-list: leading alphabetic words ending in ',' are flags
// (housekeeping_isolcpus_setup() in kernel/sched/isolation.c); the rest is the cpu list.
void set_isolcpus(IsolationParams& out, std::string_view value) {
  out.isolcpus_flags.clear();
  for (std::size_t comma;
       !value.empty() && is_alpha(value.front()) && (comma = value.find(',')) != std::string_view::npos;) {
    out.isolcpus_flags.emplace_back(value.substr(0, comma));
    value.remove_prefix(comma + 1);
  }
  out.isolcpus = std::string(value);
}

}  // namespace

std::vector<CmdlineParam> parse_kernel_cmdline(std::string_view text) {
  std::vector<CmdlineParam> params;
  for (;;) {
    text.remove_prefix(std::min(text.find_first_not_of(kBlanks), text.size()));
    if (text.empty()) break;
    CmdlineParam param = next_param(text);
    if (param.key == "--" && !param.value) break;  // what follows is init's
    params.push_back(std::move(param));
  }
  return params;
}

IsolationParams parse_isolation_params(const std::vector<CmdlineParam>& params) {
  IsolationParams out;
  for (const CmdlineParam& param : params) {
    const std::string key = normalized_key(param.key);
    const std::string value = param.value.value_or("");
    if (key == "isolcpus")
      set_isolcpus(out, value);
    else if (key == "nohz_full")
      out.nohz_full = value;
    else if (key == "rcu_nocbs")
      out.rcu_nocbs = value;
    else if (key == "irqaffinity")
      out.irqaffinity = value;
    else if (key == "rcu_nocb_poll")
      out.rcu_nocb_poll = true;
    else if (key == "skew_tick")
      out.skew_tick = value;
    else if (key == "intel_idle.max_cstate")
      out.intel_idle_max_cstate = value;
    else if (key == "processor.max_cstate")
      out.processor_max_cstate = value;
    else if (key == "idle")
      out.idle = value;
    else if (key == "mitigations")
      out.mitigations = value;
  }
  return out;
}

std::optional<std::vector<int>> param_cpus(const std::optional<std::string>& value, std::string* error) {
  if (!value) return std::nullopt;
  return parse_cpu_list(*value, error);
}

// "cpu3 4705 150 1120 16250 520 25 300 0 0 0": the CPU's number, then its counts up to the first
// word that is not one.
std::map<int, CpuTimes> parse_proc_stat(std::string_view text) {
  std::map<int, CpuTimes> out;
  for (std::string_view line : split_lines(text)) {
    if (line.substr(0, 3) != "cpu" || line.size() < 4 || line[3] < '0' || line[3] > '9')
      continue;  // not "cpu " (the sum)
    const std::vector<std::string_view> words = split_words(line.substr(3));
    const std::optional<long long> cpu = parse_integer(words[0]);
    std::vector<std::uint64_t> fields;
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::optional<long long> value = parse_integer(words[i]);
      if (!value || *value < 0) break;
      fields.push_back(static_cast<std::uint64_t>(*value));
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice, already in user and nice]
    if (!cpu || fields.size() < 4) continue;
    fields.resize(std::min<std::size_t>(fields.size(), 8));
    CpuTimes times;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      times.total += fields[i];
      if (i != 3 && i != 4) times.busy += fields[i];
    }
    times.has_steal = fields.size() == 8;
    if (times.has_steal) times.steal = fields[7];
    out[static_cast<int>(*cpu)] = times;
  }
  return out;
}

std::map<int, double> busy_shares(const std::map<int, CpuTimes>& before, const std::map<int, CpuTimes>& after) {
  std::map<int, double> out;
  for (const auto& [cpu, now] : after) {
    const auto then = before.find(cpu);
    if (then == before.end() || now.total <= then->second.total || now.busy < then->second.busy) continue;
    // Idle time that went backwards (iowait may, proc(5) says; fuzzing found the case) makes
    // the busy delta exceed the total one: no share for this interval rather than one above 1.
    if (now.total - now.busy < then->second.total - then->second.busy) continue;
    out[cpu] =
        static_cast<double>(now.busy - then->second.busy) / static_cast<double>(now.total - then->second.total);
  }
  return out;
}

std::optional<std::string> parse_bracketed_choice(std::string_view text) {
  const std::size_t open = text.find('[');
  const std::size_t close = text.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
  const std::string_view choice = trim(text.substr(open + 1, close - open - 1));
  if (choice.empty()) return std::nullopt;
  return std::string(choice);
}

std::optional<long long> parse_integer(std::string_view text) { return parse_number<long long>(trim(text)); }

std::optional<std::string> cpuinfo_field(std::string_view cpuinfo_text, std::string_view key) {
  for (std::string_view line : split_lines(cpuinfo_text)) {
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == key)
      return std::string(trim(line.substr(colon + 1)));
  }
  return std::nullopt;
}

}  // namespace jitterd
