#include <algorithm>
#include <charconv>
#include <limits>

#include "config/config_reader.h"
#include "host/text.h"

namespace jitterd::config_detail {
namespace {

using namespace std::chrono_literals;

constexpr Duration min_interval = 10s;
constexpr Duration max_interval = 24h;
constexpr std::size_t max_list_items = 16;  // each item is measured every run: keep runs short
constexpr long long max_rate = 10'000'000;
constexpr long long max_cpu = 8191;  // the kernel's NR_CPUS is at most 8192

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
       {"pinning", [&](const Entry& e) { read_pinning_probe(e, probes.pinning); }},
       {"c2c", [&](const Entry& e) { read_c2c_probe(e, probes.c2c); }},
       {"posture", [&](const Entry& e) { read_posture_probe(e, probes.posture); }},
       {"attribution", [&](const Entry& e) { read_attribution_probe(e, probes.attribution); }}});
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

void ConfigReader::read_c2c_probe(const Entry& section, C2cProbeConfig& c2c) {
  // samples × round_trips bounds one pair's time: 10^7 round trips of 2 × 200 ns is 4 s.
  constexpr long long max_round_trips_per_pair = 10'000'000;
  std::optional<Entry> samples_entry, round_trips_entry;
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(c2c.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(c2c.interval, duration(e, min_interval, max_interval)); }},
       {"method",
        [&](const Entry& e) {
          if (const auto method = choice(e, {"cas", "two_lines"}))
            c2c.method = *method == "cas" ? PingPongMethod::cas : PingPongMethod::two_lines;
        }},
       {"samples",
        [&](const Entry& e) {
          if (assign(c2c.samples, integer(e, 2, 100000))) samples_entry = e;
        }},
       {"round_trips",
        [&](const Entry& e) {
          if (assign(c2c.round_trips, integer(e, 1, 1000000))) round_trips_entry = e;
        }},
       {"pairs", [&](const Entry& e) { read_c2c_pairs(e, c2c); }},
       {"budget", [&](const Entry& e) { assign(c2c.budget, integer(e, 1, 100000, " pairs per run")); }},
       {"allow_unsampled", [&](const Entry& e) { assign(c2c.allow_unsampled, boolean(e)); }}});
  const long long product =
      static_cast<long long>(c2c.samples) * static_cast<long long>(c2c.round_trips);
  if (product > max_round_trips_per_pair) {
    const Entry& culprit = round_trips_entry ? *round_trips_entry : *samples_entry;
    fail(culprit.key, culprit.mark,
         "samples × round_trips must be at most " + std::to_string(max_round_trips_per_pair) +
             " round trips per pair, got " + std::to_string(c2c.samples) + " × " +
             std::to_string(c2c.round_trips) + " = " + std::to_string(product));
  }
}

void ConfigReader::read_posture_probe(const Entry& section, PostureProbeConfig& posture) {
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(posture.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(posture.interval, duration(e, min_interval, max_interval)); }},
       {"irq_detail", [&](const Entry& e) { assign(posture.irq_detail, integer(e, 0, 64, " IRQs per cpu")); }}});
}

void ConfigReader::read_attribution_probe(const Entry& section, AttributionProbeConfig& attribution) {
  read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(attribution.enabled, boolean(e)); }},
       {"interval",
        [&](const Entry& e) { assign(attribution.interval, duration(e, min_interval, max_interval)); }},
       {"tracepoints", [&](const Entry& e) { assign(attribution.tracepoints, boolean(e)); }},
       {"source_detail",
        [&](const Entry& e) { assign(attribution.source_detail, integer(e, 0, 64, " sources per cpu")); }}});
}

// `representative`, `all`, or a sequence of [a, b] pairs; the pairs are checked against the
// machine later (are both CPUs in the probe's scope?), citing the mark kept here.
void ConfigReader::read_c2c_pairs(const Entry& entry, C2cProbeConfig& c2c) {
  c2c.pairs_mark = entry.mark;
  const std::string allowed = "representative, all, or a sequence of 1..4096 [cpu, cpu] pairs";
  if (entry.value.IsScalar()) {
    if (const auto selection = choice(entry, {"representative", "all"})) {
      c2c.pairs = *selection == "all" ? PairSelection::all : PairSelection::representative;
      c2c.pair_list.clear();
    }
    return;
  }
  if (!entry.value.IsSequence() || entry.value.size() == 0 || entry.value.size() > 4096) {
    expect(entry, allowed);
    return;
  }
  std::vector<std::pair<int, int>> list;
  bool valid = true;
  for (const YAML::Node& node : entry.value) {
    const Entry item{entry.key + "[" + std::to_string(list.size()) + "]", node,
                     mark_of(node, entry.mark)};
    const std::optional<std::pair<int, int>> pair = cpu_pair(item);
    valid = valid && pair.has_value();
    list.push_back(pair.value_or(std::pair(-1, -1)));
  }
  if (!valid) return;
  c2c.pairs = PairSelection::list;
  c2c.pair_list = std::move(list);
}

std::optional<std::pair<int, int>> ConfigReader::cpu_pair(const Entry& entry) {
  const std::string allowed = "a pair [cpu, cpu] of CPU numbers " + range_text(0, max_cpu, "");
  if (!entry.value.IsSequence() || entry.value.size() != 2) return expect(entry, allowed);
  std::optional<long long> cpus[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const Entry cpu{entry.key + "[" + std::to_string(i) + "]", entry.value[i],
                    mark_of(entry.value[i], entry.mark)};
    cpus[i] = integer(cpu, 0, max_cpu);
  }
  if (!cpus[0] || !cpus[1]) return std::nullopt;
  return std::pair(static_cast<int>(*cpus[0]), static_cast<int>(*cpus[1]));
}

}  // namespace jitterd::config_detail
