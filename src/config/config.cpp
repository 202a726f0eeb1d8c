// SPDX-License-Identifier: Apache-2.0
#include "config/config.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "config/config_reader.h"
#include "config/probe_sections.h"
#include "config/web_config.h"
#include "host/cpu_list.h"
#include "host/host_reader.h"
#include "host/text.h"

namespace jitterd {
namespace config_detail {
namespace {

using namespace std::chrono_literals;

constexpr std::array<TickMethod, 5> all_tick_methods{
    TickMethod::lfence_rdtsc, TickMethod::rdtsc, TickMethod::rdtscp, TickMethod::cntvct, TickMethod::steady_clock};

}  // namespace

Config ConfigReader::read(const YAML::Node& root) {
  Config config;
  read_mapping(Entry{"", root, to_source_mark(root.Mark())},
               {{"cpus", [&](const Entry& e) { read_cpus(e, config.cpus, true); }},
                {"cpus_per_core",
                 [&](const Entry& e) {
                   if (const auto mode = choice(e, {"one", "all"}))
                     config.cpus.all_threads_per_core = *mode == "all";
                 }},
                {"sampler", [&](const Entry& e) { read_sampler(e, config.sampler); }},
                {"web", [&](const Entry& e) { read_web(e, config.web); }},
                {"log", [&](const Entry& e) { read_log(e, config.log); }},
                {"probes", [&](const Entry& e) { read_probes_section(*this, e, config.probes); }},
                {"expect", [&](const Entry& e) { read_expect_section(*this, e, config.probes.posture.expect); }},
                {"application",
                 [&](const Entry& e) { read_application_section(*this, e, config.probes.watch.application); }},
                {"watch", [&](const Entry& e) { read_watch_section(*this, e, config.probes.watch); }},
                {"loops", [&](const Entry& e) { read_loops_section(*this, e, config.probes.loops); }}});
  name_application_once(config.probes);
  config.probes.loops.window = config.sampler.window;  // a loop's summaries span a sampled CPU's window
  config.probes.watch.window = config.sampler.window;  // the watch's history spans it too
  config.marks = marks_;
  return config;
}

void ConfigReader::read_cpus(const Entry& entry, CpuSetting& cpus, bool allow_empty) {
  const std::string allowed =
      std::string("auto, a CPU list such as \"2-5,8\", a CPU number or a sequence of CPU numbers") +
      (allow_empty ? " ([] for none)" : "");
  std::optional<std::string> text;  // as the one cpu-list parser reads it
  if (entry.value.IsScalar())
    text = entry.value.Scalar();
  else if (entry.value.IsSequence() && entry.value.size() > 0)
    text = cpu_sequence_text(entry);
  else if (entry.value.IsSequence() && allow_empty) {
    cpus.automatic = false;  // samples nothing: a daemon that only watches
    cpus.list.clear();
    cpus.text = "[]";
    return;
  } else {
    expect(entry, allowed);
    return;
  }
  if (!text || *text == "auto") return;
  std::string reason;
  std::optional<std::vector<int>> list = parse_cpu_list(*text, &reason);
  if (list && list->empty()) reason = "no CPUs";  // the kernel's format allows "", a config not
  if (!list || list->empty()) {
    const std::string seen = entry.value.IsSequence() ? "[" + *text + "]" : describe(entry.value);
    return fail(entry.key, entry.mark, "must be " + std::string(allowed) + ", got " + seen + " (" + reason + ")");
  }
  if (!cpus_listed_once(entry, *text)) return;
  cpus.automatic = false;
  cpus.list = std::move(*list);
  cpus.text = std::move(*text);
}

bool ConfigReader::cpus_listed_once(const Entry& entry, const std::string& text) {
  const std::optional<int> cpu = repeated_cpu(text);
  if (!cpu) return true;
  const std::string seen = entry.value.IsSequence() ? "[" + text + "]" : describe(entry.value);
  fail(entry.key, entry.mark,
       "must list each CPU once, got " + seen + " (cpu " + std::to_string(*cpu) + " more than once)");
  return false;
}

std::optional<std::string> ConfigReader::cpu_sequence_text(const Entry& entry) {
  std::string text;
  bool valid = true;
  for (const YAML::Node& item : entry.value) {
    if (!is_plain(item) || !decimal(item.Scalar())) {
      expect(Entry{entry.key, item, mark_of(item, entry.mark)}, "a CPU number");
      valid = false;
      continue;
    }
    text += (text.empty() ? "" : ",") + item.Scalar();
  }
  return valid ? std::optional(text) : std::nullopt;
}

void ConfigReader::read_sampler(const Entry& section, SamplerConfig& s) {
  std::optional<Entry> spin, period;  // read after the rest: each one's range depends on the other
  read_mapping(
      section,
      {{"tick_source", [&](const Entry& e) { read_tick_source(e, s.tick_source); }},
       {"interruption_threshold", [&](const Entry& e) { read_threshold(e, s.interruption_threshold); }},
       {"threshold_floor_multiple",
        [&](const Entry& e) { assign(s.threshold_floor_multiple, integer(e, 2, 10000)); }},
       {"duty_cycle",
        [&](const Entry& e) {
          if (const auto mode = choice(e, {"burst", "continuous"}))
            s.duty_cycle = *mode == "burst" ? DutyCycleMode::burst : DutyCycleMode::continuous;
        }},
       {"burst_spin", [&](const Entry& e) { spin = e; }},
       {"burst_period", [&](const Entry& e) { period = e; }},
       {"warmup", [&](const Entry& e) { assign(s.warmup, duration(e, 10ms, 60s)); }},
       {"window", [&](const Entry& e) { assign(s.window, duration(e, 10s, 1h)); }},
       {"lock_memory", [&](const Entry& e) { assign(s.lock_memory, boolean(e)); }},
       {"realtime_priority",
        [&](const Entry& e) { assign(s.realtime_priority, integer(e, 0, 99, " (0 = off, 1..99 = SCHED_FIFO)")); }},
       {"interruption_ring",
        [&](const Entry& e) { assign(s.interruption_ring, integer(e, 16, 1048576, " entries")); }}});
  read_burst(spin, period, s);
}

// A burst spins for burst_spin out of every burst_period, so the spin cannot be the longer one.
void ConfigReader::read_burst(const std::optional<Entry>& spin, const std::optional<Entry>& period,
                              SamplerConfig& s) {
  const bool period_valid = !period || assign(s.burst_period, duration(*period, 10ms, 60s));
  if (spin && period_valid)
    assign(s.burst_spin, duration(*spin, 1ms, s.burst_period, " (at most sampler.burst_period)"));
  else if (spin)
    assign(s.burst_spin, duration(*spin, 1ms, 60s));
  else if (period && period_valid && s.burst_spin > s.burst_period)
    fail(period->key, period->mark,
         "must be at least sampler.burst_spin (" + format_duration(s.burst_spin) + ", its default), got " +
             describe(period->value));
}

void ConfigReader::read_web(const Entry& section, WebConfig& web) {
  read_mapping(section,
               {{"listen_address", [&](const Entry& e) { assign(web.listen_address, listen_address(e)); }},
                {"telemetry_path", [&](const Entry& e) { assign(web.telemetry_path, telemetry_path(e)); }},
                {"config_file", [&](const Entry& e) { assign(web.config_file, scalar(e, "a file name")); }}});
}

void ConfigReader::read_log(const Entry& section, LogConfig& log) {
  read_mapping(section, {{"level", [&](const Entry& e) { assign(log.level, checked(e, check_log_level)); }}});
}

// nullopt stands for "auto" in the target, so an error leaves the target alone instead.
void ConfigReader::read_tick_source(const Entry& entry, std::optional<TickMethod>& method) {
  std::vector<std::string_view> allowed{"auto"};
  for (TickMethod each : all_tick_methods) allowed.push_back(to_string(each));
  if (const std::optional<std::string> name = choice(entry, allowed))
    method = *name == "auto" ? std::nullopt : tick_method_from_string(*name);
}

void ConfigReader::read_threshold(const Entry& entry, std::optional<Duration>& threshold) {
  if (entry.value.IsScalar() && entry.value.Scalar() == "auto")
    threshold = std::nullopt;
  else if (const std::optional<Duration> value = duration(entry, 10ns, 1s, "", "auto"))
    threshold = value;
}

std::optional<std::string> ConfigReader::listen_address(const Entry& entry) {
  return checked(entry, check_listen_address);
}

std::optional<std::string> ConfigReader::telemetry_path(const Entry& entry) {
  return checked(entry, check_telemetry_path);
}

// The rules the command line's flags share (config/value_checks.h); a value that is not a scalar
// fails them as the empty text would, with the message saying what it was.
std::optional<std::string> ConfigReader::checked(const Entry& entry, ValueCheck check) {
  CheckedValue result = check(entry.value.IsScalar() ? entry.value.Scalar() : "", describe(entry.value));
  if (!result.value) fail(entry.key, entry.mark, std::move(result.error));
  return std::move(result.value);
}

}  // namespace config_detail

namespace {

// The errors as a message lists them: the first kMaxListedConfigErrors, then how many more.
std::vector<std::string> listed_lines(const std::vector<ConfigError>& errors) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < errors.size() && i < kMaxListedConfigErrors; ++i)
    lines.push_back(errors[i].to_string());
  if (errors.size() > kMaxListedConfigErrors) {
    const std::size_t rest = errors.size() - kMaxListedConfigErrors;
    lines.push_back("... and " + std::to_string(rest) + " more error" + (rest == 1 ? "" : "s"));
  }
  return lines;
}

}  // namespace

SourceMark Config::mark_of(const std::string& key) const {
  const auto found = marks.find(key);
  return found == marks.end() ? SourceMark{} : found->second;
}

std::string ConfigError::to_string() const {
  std::string text = file;
  if (line != 0) text += ":" + std::to_string(line) + ":" + std::to_string(column);
  text += ": ";
  if (!key.empty()) text += key + ": ";
  return text + message;
}

ConfigErrors::ConfigErrors(std::vector<ConfigError> errors)
    : std::runtime_error(joined_with(listed_lines(errors), "\n")), errors_(std::move(errors)) {}

const std::vector<ConfigError>& ConfigErrors::errors() const { return errors_; }

std::vector<std::string> ConfigErrors::listed() const { return listed_lines(errors_); }

std::string read_config_text(const std::string& path) {
  std::string reason;
  std::optional<std::string> text = read_regular_file(path, kMaxConfigFileBytes, &reason);
  if (!text) throw ConfigErrors({ConfigError{path, 0, 0, "", "cannot read: " + reason}});
  return std::move(*text);
}

Config load_config_file(const std::string& path) { return parse_config(read_config_text(path), path); }

Config parse_config(const std::string& yaml_text, const std::string& path_for_messages) {
  config_detail::ConfigReader reader(path_for_messages);
  const std::optional<YAML::Node> root = reader.load(yaml_text);
  Config config = root ? reader.read(*root) : Config{};
  config.path = path_for_messages;
  reader.throw_if_errors();
  return config;
}

}  // namespace jitterd
