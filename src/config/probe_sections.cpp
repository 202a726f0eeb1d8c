// SPDX-License-Identifier: Apache-2.0
#include "config/probe_sections.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "host/cpu_list.h"
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
  NumberError error = NumberError::none;
  const std::optional<double> value = parse_number<double>(text, &error);
  if (error == NumberError::out_of_range) return std::numeric_limits<double>::infinity();
  return value;
}

// The key's mark stays in Config::marks whatever the value, so the later check against the
// machine (is that CPU online?) can cite it.
void read_probe_cpu(ConfigReader& r, const Entry& entry, std::optional<int>& cpu) {
  if (entry.value.IsScalar() && entry.value.Scalar() == "auto")
    cpu = std::nullopt;
  else
    assign(cpu, r.integer(entry, 0, max_cpu, "", "auto"));
}

std::optional<double> rate(ConfigReader& r, const Entry& entry) {
  const std::string range = range_text(1, max_rate, " per second");
  const std::optional<double> value = is_plain(entry.value) ? plain_number(entry.value.Scalar()) : std::nullopt;
  if (!value) return r.expect(entry, "a number " + range);
  if (*value < 1 || *value > max_rate) return r.expect(entry, range);
  return value;
}

// A sequence of 1..16 distinct values, each read (and its error reported) by read_item under the
// key "<key>[index]". Every item is checked; the result is nullopt unless all are valid, so the
// setting keeps its default. Two equal items would measure the same thing twice.
template <typename T>
std::optional<std::vector<T>> distinct_list(ConfigReader& r, const Entry& entry, std::string_view items,
                                            const std::function<std::optional<T>(const Entry&)>& read_item) {
  const std::string allowed = "a sequence of 1.." + std::to_string(max_list_items) + " " + std::string(items);
  if (!entry.value.IsSequence() || entry.value.size() == 0) return r.expect(entry, allowed);
  if (entry.value.size() > max_list_items) {
    r.fail(entry.key, entry.mark,
           "must be " + allowed + ", got " + std::to_string(entry.value.size()) + " of them");
    return std::nullopt;
  }
  std::vector<std::optional<T>> values;
  for (const YAML::Node& node : entry.value) {
    const Entry item{entry.key + "[" + std::to_string(values.size()) + "]", node, mark_of(node, entry.mark)};
    values.push_back(read_item(item));
    const auto same = std::find(values.begin(), values.end() - 1, values.back());
    if (values.back() && same != values.end() - 1) {
      r.fail(item.key, item.mark,
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

void read_c2c_pairs(ConfigReader& r, const Entry& entry, C2cSettings& c2c);
std::optional<std::pair<int, int>> cpu_pair(ConfigReader& r, const Entry& entry);

void read_clock_probe(ConfigReader& r, const Entry& section, ClockSettings& clock) {
  const std::function<std::optional<Duration>(const Entry&)> sleep_request = [&](const Entry& e) {
    return r.duration(e, 1us, 1s);
  };
  r.read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(clock.enabled, r.boolean(e)); }},
       {"interval", [&](const Entry& e) { assign(clock.interval, r.duration(e, min_interval, max_interval)); }},
       {"calibration_window", [&](const Entry& e) { assign(clock.calibration_window, r.duration(e, 10ms, 10s)); }},
       {"sleep_requests",
        [&](const Entry& e) {
          assign(clock.sleep_requests,
                 distinct_list(r, e, "durations, each " + range_text(1us, 1s), sleep_request));
        }},
       {"sleep_samples", [&](const Entry& e) { assign(clock.sleep_samples, r.integer(e, 2, 10000)); }}});
}

void read_pacing_probe(ConfigReader& r, const Entry& section, PacingSettings& pacing) {
  const std::function<std::optional<double>(const Entry&)> read_rate = [&](const Entry& e) { return rate(r, e); };
  r.read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(pacing.enabled, r.boolean(e)); }},
       {"interval", [&](const Entry& e) { assign(pacing.interval, r.duration(e, min_interval, max_interval)); }},
       {"cpu", [&](const Entry& e) { read_probe_cpu(r, e, pacing.cpu); }},
       {"rates",
        [&](const Entry& e) {
          assign(pacing.rates,
                 distinct_list(r, e, "rates, each " + range_text(1, max_rate, " per second"), read_rate));
        }},
       {"duration", [&](const Entry& e) { assign(pacing.duration, r.duration(e, 10ms, 60s)); }},
       {"action", [&](const Entry& e) {
          if (const auto action = r.choice(e, {"udp", "noop"}))
            pacing.send = *action == "udp" ? PacingSend::udp : PacingSend::noop;
        }}});
}

void read_kernel_cost_probe(ConfigReader& r, const Entry& section, KernelCostSettings& cost) {
  r.read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(cost.enabled, r.boolean(e)); }},
       {"interval", [&](const Entry& e) { assign(cost.interval, r.duration(e, min_interval, max_interval)); }},
       {"cpu", [&](const Entry& e) { read_probe_cpu(r, e, cost.cpu); }},
       {"samples", [&](const Entry& e) { assign(cost.samples, r.integer(e, 10, 1000000)); }}});
}

void read_pinning_probe(ConfigReader& r, const Entry& section, PinningSettings& pinning) {
  r.read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(pinning.enabled, r.boolean(e)); }},
       {"interval", [&](const Entry& e) { assign(pinning.interval, r.duration(e, min_interval, max_interval)); }},
       {"window", [&](const Entry& e) { assign(pinning.window, r.duration(e, 10ms, 60s)); }}});
}

void read_c2c_probe(ConfigReader& r, const Entry& section, C2cSettings& c2c) {
  // samples × round_trips bounds one pair's time: 10^7 round trips of 2 × 200 ns is 4 s.
  constexpr long long max_round_trips_per_pair = 10'000'000;
  std::optional<Entry> samples_entry, round_trips_entry;
  r.read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(c2c.enabled, r.boolean(e)); }},
       {"interval", [&](const Entry& e) { assign(c2c.interval, r.duration(e, min_interval, max_interval)); }},
       {"method",
        [&](const Entry& e) {
          if (const auto method = r.choice(e, {"cas", "two_lines"}))
            c2c.method = *method == "cas" ? PingPongMethod::cas : PingPongMethod::two_lines;
        }},
       {"samples",
        [&](const Entry& e) {
          if (assign(c2c.samples, r.integer(e, 2, 100000))) samples_entry = e;
        }},
       {"round_trips",
        [&](const Entry& e) {
          if (assign(c2c.round_trips, r.integer(e, 1, 1000000))) round_trips_entry = e;
        }},
       {"pairs", [&](const Entry& e) { read_c2c_pairs(r, e, c2c); }},
       {"budget", [&](const Entry& e) { assign(c2c.budget, r.integer(e, 1, 100000, " pairs per run")); }},
       {"allow_unsampled", [&](const Entry& e) { assign(c2c.allow_unsampled, r.boolean(e)); }}});
  const long long product = static_cast<long long>(c2c.samples) * static_cast<long long>(c2c.round_trips);
  if (product > max_round_trips_per_pair) {
    const Entry& culprit = round_trips_entry ? *round_trips_entry : *samples_entry;
    r.fail(culprit.key, culprit.mark,
           "samples × round_trips must be at most " + std::to_string(max_round_trips_per_pair) +
               " round trips per pair, got " + std::to_string(c2c.samples) + " × " +
               std::to_string(c2c.round_trips) + " = " + std::to_string(product));
  }
}

void read_posture_probe(ConfigReader& r, const Entry& section, PostureSettings& posture) {
  r.read_mapping(
      section,
      {{"enabled", [&](const Entry& e) { assign(posture.enabled, r.boolean(e)); }},
       {"interval", [&](const Entry& e) { assign(posture.interval, r.duration(e, min_interval, max_interval)); }},
       {"irq_detail", [&](const Entry& e) { assign(posture.irq_detail, r.integer(e, 0, 64, " IRQs per cpu")); }}});
}

void read_attribution_probe(ConfigReader& r, const Entry& section, AttributionSettings& attribution) {
  r.read_mapping(
      section, {{"enabled", [&](const Entry& e) { assign(attribution.enabled, r.boolean(e)); }},
                {"interval",
                 [&](const Entry& e) { assign(attribution.interval, r.duration(e, min_interval, max_interval)); }},
                {"bpf", [&](const Entry& e) { assign(attribution.bpf, r.boolean(e)); }},
                {"tracepoints", [&](const Entry& e) { assign(attribution.tracepoints, r.boolean(e)); }},
                {"source_detail", [&](const Entry& e) {
                   assign(attribution.source_detail, r.integer(e, 0, 64, " sources per cpu"));
                 }}});
}

// `representative`, `all`, or a sequence of [a, b] pairs; the pairs are checked against the
// machine later (are both CPUs in the probe's scope?), citing the mark kept here.
void read_c2c_pairs(ConfigReader& r, const Entry& entry, C2cSettings& c2c) {
  const std::string allowed = "representative, all, or a sequence of 1..4096 [cpu, cpu] pairs";
  if (entry.value.IsScalar()) {
    if (const auto selection = r.choice(entry, {"representative", "all"})) {
      c2c.pairs.selection = *selection == "all" ? PairSelection::all : PairSelection::representative;
      c2c.pairs.list.clear();
    }
    return;
  }
  if (!entry.value.IsSequence() || entry.value.size() == 0 || entry.value.size() > 4096) {
    r.expect(entry, allowed);
    return;
  }
  std::vector<std::pair<int, int>> list;
  bool valid = true;
  for (const YAML::Node& node : entry.value) {
    const Entry item{entry.key + "[" + std::to_string(list.size()) + "]", node, mark_of(node, entry.mark)};
    const std::optional<std::pair<int, int>> pair = cpu_pair(r, item);
    valid = valid && pair.has_value();
    list.push_back(pair.value_or(std::pair(-1, -1)));
  }
  if (!valid) return;
  c2c.pairs.selection = PairSelection::list;
  c2c.pairs.list = std::move(list);
}

std::optional<std::pair<int, int>> cpu_pair(ConfigReader& r, const Entry& entry) {
  const std::string allowed = "a pair [cpu, cpu] of CPU numbers " + range_text(0, max_cpu, "");
  if (!entry.value.IsSequence() || entry.value.size() != 2) return r.expect(entry, allowed);
  std::optional<long long> cpus[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const Entry cpu{entry.key + "[" + std::to_string(i) + "]", entry.value[i],
                    mark_of(entry.value[i], entry.mark)};
    cpus[i] = r.integer(cpu, 0, max_cpu);
  }
  if (!cpus[0] || !cpus[1]) return std::nullopt;
  return std::pair(static_cast<int>(*cpus[0]), static_cast<int>(*cpus[1]));
}

// A CPU set to compare with the kernel's: a cpu list, a sequence of CPU numbers, or "" / [] for
// none (an expectation that nothing is isolated is a valid one).
std::optional<std::vector<int>> expected_cpu_set(ConfigReader& r, const Entry& entry) {
  constexpr std::string_view allowed = "a CPU list such as \"2-5,8\", a sequence of CPU numbers, or \"\" for none";
  std::optional<std::string> text;
  if (entry.value.IsScalar())
    text = entry.value.Scalar();
  else if (entry.value.IsSequence())
    text = entry.value.size() == 0 ? std::optional<std::string>("") : r.cpu_sequence_text(entry);
  else
    return r.expect(entry, allowed);
  if (!text) return std::nullopt;
  std::string reason;
  std::optional<std::vector<int>> list = parse_cpu_list(*text, &reason);
  if (!list) {
    r.fail(entry.key, entry.mark,
           "must be " + std::string(allowed) + ", got " + describe(entry.value) + " (" + reason + ")");
  } else if (!r.cpus_listed_once(entry, *text)) {
    return std::nullopt;
  }
  return list;
}

// Kernel names of governors and clocksources: letters, digits, '_', '-' and '.'.
std::optional<std::string> name_word(ConfigReader& r, const Entry& entry, std::string_view what) {
  const std::string allowed = std::string(what) + " (letters, digits, _ - .)";
  const std::optional<std::string> text = r.scalar(entry, allowed);
  if (!text) return std::nullopt;
  const bool ok = !text->empty() && std::all_of(text->begin(), text->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!ok) return r.expect(entry, allowed);
  return text;
}

// `no_device_irqs`: true (none may fire: affinity and firing), false, or fired (judge only the
// IRQs seen firing over the posture interval).
void read_no_device_irqs(ConfigReader& r, const Entry& entry, PostureExpectations& expect) {
  if (is_plain(entry.value) && entry.value.IsScalar() && entry.value.Scalar() == "fired") {
    expect.no_device_irqs = true;
    expect.device_irqs_fired_only = true;
    return;
  }
  if (entry.value.IsScalar() && is_plain(entry.value) &&
      (entry.value.Scalar() == "true" || entry.value.Scalar() == "false")) {
    assign(expect.no_device_irqs, r.boolean(entry));
    expect.device_irqs_fired_only = false;
    return;
  }
  r.expect(entry, "true, false or fired");
}

// fnmatch(3) patterns of IRQ or task names: 1..64 non-empty strings of at most 128 printable
// characters.
void read_name_patterns(ConfigReader& r, const Entry& entry, const std::string& what,
                        std::vector<std::string>& target) {
  const std::string allowed = "a sequence of 1..64 " + what + " patterns (fnmatch, e.g. \"" +
                              (what == "IRQ name" ? "nvme*" : "trader*") + "\")";
  const std::string pattern_rule =
      std::string(what == "IRQ name" ? "an " : "a ") + what + " pattern of 1..128 printable characters";
  r.read_strings(
      entry, allowed, pattern_rule, [](std::string_view text) { return printable_text(text, 128); }, target);
}

// A cgroup v2 path: 1..4096 printable characters without "." or ".." components.
void read_cgroup(ConfigReader& r, const Entry& entry, std::string& cgroup) {
  const std::string allowed =
      "a cgroup v2 path such as \"system.slice/trader.service\" (relative to /sys/fs/cgroup, or under it)";
  const std::optional<std::string> text = r.scalar(entry, allowed);
  if (!text) return;
  if (!printable_text(*text, 4096) || cgroup_relative_path(*text).empty()) {
    r.expect(entry, allowed);
    return;
  }
  cgroup = *text;
}

// A user name (letters, digits, '_', '-', '.', at most 32, not starting with '-') or a numeric uid.
void read_application_user(ConfigReader& r, const Entry& entry, std::string& user) {
  const std::string allowed = "a user name (letters, digits, '_', '-', '.', at most 32) or a numeric uid";
  const std::optional<std::string> text = r.scalar(entry, allowed);
  if (!text) return;
  if (!user_name_text(*text)) {
    r.expect(entry, allowed);
    return;
  }
  user = *text;
}

}  // namespace

void read_application_section(ConfigReader& r, const Entry& section, ApplicationSettings& application) {
  r.read_mapping(section,
                 {{"tasks", [&](const Entry& e) { read_name_patterns(r, e, "task name", application.tasks); }},
                  {"cgroup", [&](const Entry& e) { read_cgroup(r, e, application.cgroup); }},
                  {"user", [&](const Entry& e) { read_application_user(r, e, application.user); }}});
}

void read_watch_section(ConfigReader& r, const Entry& section, WatchSettings& watch) {
  watch.enabled = true;
  r.read_mapping(section, {{"cpus",
                            [&](const Entry& e) {
                              CpuSetting cpus;
                              r.read_cpus(e, cpus, false);
                              watch.cpus_automatic = cpus.automatic;
                              watch.cpus = cpus.list;
                              watch.cpus_text = cpus.text;
                            }},
                           {"method",
                            [&](const Entry& e) {
                              // The names are watch_method_name's, the one list of them.
                              constexpr WatchMethod methods[] = {WatchMethod::automatic, WatchMethod::bpf,
                                                                 WatchMethod::tracepoints, WatchMethod::counts};
                              std::vector<std::string_view> names;
                              for (WatchMethod m : methods) names.push_back(watch_method_name(m));
                              if (const auto name = r.choice(e, names))
                                for (WatchMethod m : methods)
                                  if (watch_method_name(m) == *name) watch.method = m;
                            }},
                           {"interval", [&](const Entry& e) { assign(watch.interval, r.duration(e, 100ms, 1h)); }},
                           {"outlier_threshold",
                            [&](const Entry& e) { assign(watch.outlier_threshold, r.duration(e, 1us, 1s)); }}});
}

void name_application_once(ProbesSettings& probes) {
  std::vector<std::string>& tasks = probes.posture.expect.application_tasks;
  for (const std::string& pattern : probes.watch.application.tasks)
    if (std::find(tasks.begin(), tasks.end(), pattern) == tasks.end()) tasks.push_back(pattern);
}

void read_probes_section(ConfigReader& r, const Entry& section, ProbesSettings& probes) {
  r.read_mapping(section,
                 {{"clock", [&](const Entry& e) { read_clock_probe(r, e, probes.clock); }},
                  {"pacing", [&](const Entry& e) { read_pacing_probe(r, e, probes.pacing); }},
                  {"kernel_cost", [&](const Entry& e) { read_kernel_cost_probe(r, e, probes.kernel_cost); }},
                  {"pinning", [&](const Entry& e) { read_pinning_probe(r, e, probes.pinning); }},
                  {"c2c", [&](const Entry& e) { read_c2c_probe(r, e, probes.c2c); }},
                  {"posture", [&](const Entry& e) { read_posture_probe(r, e, probes.posture); }},
                  {"attribution", [&](const Entry& e) { read_attribution_probe(r, e, probes.attribution); }}});
}

void read_expect_section(ConfigReader& r, const Entry& section, PostureExpectations& expect) {
  r.read_mapping(
      section,
      {{"isolated", [&](const Entry& e) { assign(expect.isolated, expected_cpu_set(r, e)); }},
       {"nohz_full", [&](const Entry& e) { assign(expect.nohz_full, expected_cpu_set(r, e)); }},
       {"governor", [&](const Entry& e) { assign(expect.governor, name_word(r, e, "a cpufreq governor name")); }},
       {"clocksource", [&](const Entry& e) { assign(expect.clocksource, name_word(r, e, "a clocksource name")); }},
       {"no_device_irqs", [&](const Entry& e) { read_no_device_irqs(r, e, expect); }},
       {"irq_exempt", [&](const Entry& e) { read_name_patterns(r, e, "IRQ name", expect.irq_exempt); }},
       {"no_stray_tasks", [&](const Entry& e) { assign(expect.no_stray_tasks, r.boolean(e)); }},
       {"application_tasks",
        [&](const Entry& e) { read_name_patterns(r, e, "task name", expect.application_tasks); }},
       {"max_exit_latency", [&](const Entry& e) { assign(expect.max_exit_latency, r.duration(e, 0ns, 10ms)); }},
       {"smt_siblings_idle", [&](const Entry& e) { assign(expect.smt_siblings_idle, r.boolean(e)); }}});
}

}  // namespace jitterd::config_detail
