#include <algorithm>
#include <charconv>
#include <limits>

#include "daemon/config_reader.h"

namespace jitterd::config_detail {
namespace {

using namespace std::chrono_literals;

constexpr Duration min_interval = 10s;
constexpr Duration max_interval = 24h;
constexpr std::size_t max_list_items = 16;  // each item is measured every run: keep runs short
constexpr long long max_rate = 10'000'000;
constexpr long long max_cpu = 8191;  // the kernel's NR_CPUS is at most 8192

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits with an optional fraction, as people write a rate: no sign, exponent, hex, inf or nan,
// and no leading zero (YAML 1.1 reads 0100 as octal). Too many digits for a double read as
// infinity, which every range refuses.
std::optional<double> plain_number(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  if (!all_digits(whole) || (whole.size() > 1 && whole[0] == '0') ||
      (dot != std::string_view::npos && !all_digits(text.substr(dot + 1))))
    return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) return std::numeric_limits<double>::infinity();
  return value;
}

}  // namespace

// The mark is kept whatever the value, so the later check against the machine (is that CPU
// online?) can cite it.
void ConfigReader::read_probe_cpu(const Entry& entry, ProbeCpu& cpu) {
  cpu.mark = entry.mark;
  if (entry.value.IsScalar() && entry.value.Scalar() == "auto")
    cpu.cpu = std::nullopt;
  else
    assign(cpu.cpu, integer(entry, 0, max_cpu, "", "auto"));
}

std::optional<double> ConfigReader::rate(const Entry& entry) {
  const std::string range = range_text(1, max_rate, " per second");
  const std::optional<double> value =
      is_plain(entry.value) ? plain_number(entry.value.Scalar()) : std::nullopt;
  if (!value) return expect(entry, "a number " + range);
  if (*value < 1 || *value > max_rate) return expect(entry, range);
  return value;
}

// A sequence of 1..16 distinct values, each read (and its error reported) by read_item under the
// key "<key>[index]". Every item is checked; the result is nullopt unless all are valid, so the
// setting keeps its default. Two equal items would measure the same thing twice.
template <typename T>
std::optional<std::vector<T>> ConfigReader::distinct_list(
    const Entry& entry, std::string_view items,
    const std::function<std::optional<T>(const Entry&)>& read_item) {
  const std::string allowed =
      "a sequence of 1.." + std::to_string(max_list_items) + " " + std::string(items);
  if (!entry.value.IsSequence() || entry.value.size() == 0) return expect(entry, allowed);
  if (entry.value.size() > max_list_items) {
    fail(entry.key, entry.mark,
         "must be " + allowed + ", got " + std::to_string(entry.value.size()) + " of them");
    return std::nullopt;
  }
  std::vector<std::optional<T>> values;
  for (const YAML::Node& node : entry.value) {
    const Entry item{entry.key + "[" + std::to_string(values.size()) + "]", node,
                     mark_of(node, entry.mark)};
    values.push_back(read_item(item));
    const auto same = std::find(values.begin(), values.end() - 1, values.back());
    if (values.back() && same != values.end() - 1) {
      fail(item.key, item.mark,
           "must differ from the other items, got " + describe(node) + ", the same as [" +
               std::to_string(same - values.begin()) + "]");
      values.back().reset();
    }
  }
  if (std::find(values.begin(), values.end(), std::nullopt) != values.end()) return std::nullopt;
  std::vector<T> out;
  for (const std::optional<T>& value : values) out.push_back(*value);
  return out;
}

void ConfigReader::read_probes(const Entry& section, ProbesConfig& probes) {
  read_mapping(
      section,
      {{"clock", [&](const Entry& e) { read_clock_probe(e, probes.clock); }},
       {"pacing", [&](const Entry& e) { read_pacing_probe(e, probes.pacing); }},
       {"kernel_cost", [&](const Entry& e) { read_kernel_cost_probe(e, probes.kernel_cost); }},
       {"pinning", [&](const Entry& e) { read_pinning_probe(e, probes.pinning); }}});
}

void ConfigReader::read_clock_probe(const Entry& section, ClockProbeConfig& clock) {
  const std::function<std::optional<Duration>(const Entry&)> sleep_request =
      [&](const Entry& e) { return duration(e, 1us, 1s); };
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(clock.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(clock.interval, duration(e, min_interval, max_interval)); }},
       {"calibration_window",
        [&](const Entry& e) { assign(clock.calibration_window, duration(e, 10ms, 10s)); }},
       {"sleep_requests",
        [&](const Entry& e) {
          assign(clock.sleep_requests,
                 distinct_list(e, "durations, each " + range_text(1us, 1s), sleep_request));
        }},
       {"sleep_samples",
        [&](const Entry& e) { assign(clock.sleep_samples, integer(e, 2, 10000)); }}});
}

void ConfigReader::read_pacing_probe(const Entry& section, PacingProbeConfig& pacing) {
  const std::function<std::optional<double>(const Entry&)> read_rate = [&](const Entry& e) {
    return rate(e);
  };
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(pacing.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(pacing.interval, duration(e, min_interval, max_interval)); }},
       {"cpu", [&](const Entry& e) { read_probe_cpu(e, pacing.cpu); }},
       {"rates",
        [&](const Entry& e) {
          assign(pacing.rates,
                 distinct_list(e, "rates, each " + range_text(1, max_rate, " per second"),
                               read_rate));
        }},
       {"duration", [&](const Entry& e) { assign(pacing.duration, duration(e, 10ms, 60s)); }},
       {"action",
        [&](const Entry& e) {
          if (const auto action = choice(e, {"udp", "noop"}))
            pacing.action = *action == "udp" ? PacingAction::udp : PacingAction::noop;
        }}});
}

void ConfigReader::read_kernel_cost_probe(const Entry& section, KernelCostProbeConfig& cost) {
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(cost.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(cost.interval, duration(e, min_interval, max_interval)); }},
       {"cpu", [&](const Entry& e) { read_probe_cpu(e, cost.cpu); }},
       {"samples", [&](const Entry& e) { assign(cost.samples, integer(e, 10, 1000000)); }}});
}

void ConfigReader::read_pinning_probe(const Entry& section, PinningProbeConfig& pinning) {
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(pinning.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(pinning.interval, duration(e, min_interval, max_interval)); }},
       {"window", [&](const Entry& e) { assign(pinning.window, duration(e, 10ms, 60s)); }}});
}

}  // namespace jitterd::config_detail
