// SPDX-License-Identifier: Apache-2.0
#include "host/clock_info.h"
#include "host/text.h"

#include <algorithm>

namespace jitterd {
namespace {

constexpr std::string_view clocksource_dir = "devices/system/clocksource/clocksource0";

// Owned copies of split_words, for the lists kept in the results.
std::vector<std::string> words(std::string_view text) {
  const std::vector<std::string_view> views = split_words(text);
  return {views.begin(), views.end()};
}

void add_problem(std::vector<std::string>* problems, std::string line) {
  if (problems != nullptr) problems->push_back(std::move(line));
}

}  // namespace

std::optional<ClocksourceInfo> read_clocksource(const HostReader& host, std::vector<std::string>* problems) {
  const std::string current_file = std::string(clocksource_dir) + "/current_clocksource";
  const std::string available_file = std::string(clocksource_dir) + "/available_clocksource";
  const std::optional<std::string> current = host.read_sys(current_file);
  if (!current || trim(*current).empty()) {
    add_problem(problems, host.sys_path(current_file).string() + (current ? ": empty" : ": missing") +
                              "; the current clocksource is unknown");
    return std::nullopt;
  }
  ClocksourceInfo info{std::string(trim(*current)), {}};
  if (const std::optional<std::string> available = host.read_sys(available_file))
    info.available = words(*available);
  else
    add_problem(problems, host.sys_path(available_file).string() + ": missing; listing no available clocksources");
  return info;
}

// "key<tabs>: value" lines, one block per processor. Keys are matched whole, so x86's
// "vmx flags" is not taken for "flags".
CpuinfoClock parse_cpuinfo_clock(std::string_view cpuinfo_text) {
  CpuinfoClock out;
  bool have_flags = false;
  std::optional<int> processor;  // the block being read; "cpu MHz" before any is not attributable
  for (const std::string_view line : split_lines(cpuinfo_text)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "processor") {
      processor = parse_number<int>(value);
    } else if (key == "model name" && out.model_name.empty()) {
      out.model_name = value;
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      const std::vector<std::string> list = words(value);
      out.flags.insert(list.begin(), list.end());
      have_flags = true;
      out.x86_flags = key == "flags";
    } else if (key == "cpu MHz" && processor) {
      if (const std::optional<double> mhz = parse_number<double>(value)) out.mhz.emplace_back(*processor, *mhz);
    }
  }
  return out;
}

std::optional<CpuinfoClock> read_cpuinfo_clock(const HostReader& host, std::vector<std::string>* problems) {
  const std::optional<std::string> text = host.read_proc("cpuinfo");
  if (!text) {
    add_problem(problems,
                host.proc_path("cpuinfo").string() + ": missing; the CPU flags and frequencies are unknown");
    return std::nullopt;
  }
  return parse_cpuinfo_clock(*text);
}

std::string hypervisor_flag(const CpuinfoClock& cpuinfo) {
  if (!cpuinfo.x86_flags) return "";
  return has_flag(cpuinfo, "hypervisor") ? "yes" : "no";
}

bool has_flag(const CpuinfoClock& cpuinfo, std::string_view flag) {
  return cpuinfo.flags.count(std::string(flag)) != 0;
}

}  // namespace jitterd
