// SPDX-License-Identifier: Apache-2.0
#include "host/msr_pmu.h"

#include "host/text.h"

namespace jitterd {
namespace {

constexpr std::string_view kMsrPmuDir = "bus/event_source/devices/msr";
// A sysfs event file is one short line; anything longer is not one.
constexpr std::size_t kMaxEventText = 256;

std::optional<std::uint64_t> term_value(std::string_view value) {
  if (value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X'))
    return parse_number<std::uint64_t>(value.substr(2), nullptr, 16);
  return parse_number<std::uint64_t>(value);
}

std::optional<PmuEvent> read_event(const HostReader& host, std::uint32_t type, std::string_view name,
                                   std::string& why) {
  const std::string relative = std::string(kMsrPmuDir) + "/events/" + std::string(name);
  const std::optional<std::string> text = host.read_sys(relative);
  if (!text) {
    why = "the msr PMU has no " + std::string(name) + " event";
    return std::nullopt;
  }
  std::string parse_why;
  const std::optional<std::uint64_t> config = parse_pmu_event_config(*text, &parse_why);
  if (!config) {
    why = host.sys_path(relative).string() + ": " + parse_why;
    return std::nullopt;
  }
  why.clear();
  return PmuEvent{type, *config};
}

}  // namespace

std::optional<std::uint64_t> parse_pmu_event_config(std::string_view text, std::string* why) {
  const auto fail = [why](std::string reason) -> std::optional<std::uint64_t> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  text = trim(text);
  if (text.empty()) return fail("empty event description");
  if (text.size() > kMaxEventText) return fail("event description longer than " + std::to_string(kMaxEventText));
  std::optional<std::uint64_t> config;
  while (!text.empty()) {
    const std::size_t comma = std::min(text.find(','), text.size());
    const std::string_view term = trim(text.substr(0, comma));
    text.remove_prefix(std::min(comma + 1, text.size()));
    const std::size_t equals = term.find('=');
    const std::string_view key = term.substr(0, equals);
    if (key != "event") return fail("unsupported term '" + printable_excerpt(key) + "' (only event=N is known)");
    if (config) return fail("event given twice");
    if (equals == std::string_view::npos) return fail("event without a value");
    config = term_value(term.substr(equals + 1));
    if (!config) return fail("event value '" + printable_excerpt(term.substr(equals + 1)) + "' is not a number");
  }
  if (!config) return fail("no event term");
  return config;
}

MsrPmu read_msr_pmu(const HostReader& host) {
  MsrPmu pmu;
  const std::optional<std::string> type_text = host.read_sys(std::string(kMsrPmuDir) + "/type");
  const std::optional<std::uint32_t> type =
      type_text ? parse_number<std::uint32_t>(trim(*type_text)) : std::optional<std::uint32_t>{};
  if (!type) {
    const std::string why =
        type_text ? host.sys_path(std::string(kMsrPmuDir) + "/type").string() + ": not a PMU type number"
                  : "no msr PMU at " + host.sys_path(kMsrPmuDir).string();
    pmu.smi_why = pmu.aperf_why = pmu.mperf_why = why;
    return pmu;
  }
  pmu.smi = read_event(host, *type, "smi", pmu.smi_why);
  pmu.aperf = read_event(host, *type, "aperf", pmu.aperf_why);
  pmu.mperf = read_event(host, *type, "mperf", pmu.mperf_why);
  return pmu;
}

std::string msr_pmu_line(const MsrPmu& pmu) {
  std::string line = "msr PMU: ";
  line += pmu.smi ? "SMIs counted per cpu" : "no SMI counter (" + pmu.smi_why + ")";
  if (pmu.aperf && pmu.mperf) {
    line += "; APERF/MPERF counted per cpu (the frequency it ran at, as actual over reference cycles)";
  } else {
    const std::string& why = pmu.aperf ? pmu.mperf_why : pmu.aperf_why;
    line += "; no APERF/MPERF (" + why + "; most guests hide them), so frequency drops are not measured";
  }
  return line;
}

std::optional<double> frequency_ratio(const CycleCounts& before, const CycleCounts& now) {
  if (now.reference <= before.reference || now.actual < before.actual) return std::nullopt;
  return static_cast<double>(now.actual - before.actual) / static_cast<double>(now.reference - before.reference);
}

}  // namespace jitterd
