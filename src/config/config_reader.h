// SPDX-License-Identifier: Apache-2.0
// The strict configuration reader's machinery: walking mappings (unknown and duplicate keys are
// errors), typed values with ranges, and error collection, each error citing file:line:column and
// the dotted key. The sections are read by config.cpp (the top level, cpus, sampler, web, log) and
// probe_sections.cpp (probes and expect) with it. Private to config/; everyone else calls
// parse_config or load_config_file in config.h. A ConfigReader reads one document on one thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/value_checks.h"

namespace jitterd::config_detail {

inline constexpr std::string_view duration_units = "a number and one of ns, us, ms, s, m, h";

// One value in the file: its dotted key for messages, the node, and where a message points.
struct Entry {
  std::string key;
  YAML::Node value;
  SourceMark mark;
};

// A key a mapping allows, and what to do with its value.
struct Field {
  std::string_view name;
  std::function<void(const Entry&)> read;
};

SourceMark to_source_mark(const YAML::Mark& mark);
// Where a value stood, or `fallback` (its key's mark) where yaml-cpp cannot say.
SourceMark mark_of(const YAML::Node& node, SourceMark fallback);
// Quoted or explicitly tagged scalars are strings to YAML, so they are not booleans or numbers.
bool is_plain(const YAML::Node& node);
// The value seen, as a message shows it: plain text as written, strings in quotes.
std::string describe(const YAML::Node& node);
std::string join(const std::vector<std::string_view>& words);
std::string range_text(long long min, long long max, std::string_view unit);
std::string range_text(Duration min, Duration max);
// Plain decimal digits only: no sign, no spaces, no leading zero (inet_aton reads those as octal).
std::optional<unsigned> decimal(std::string_view text);
// 1..`max` printable ASCII characters.
bool printable_text(std::string_view text, std::size_t max);
// A user name (letters, digits, '_', '-', '.', at most 32, not starting with '-') or a numeric uid.
bool user_name_text(std::string_view text);

template <typename T, typename U>
bool assign(T& target, const std::optional<U>& value) {
  if (value) target = static_cast<T>(*value);
  return value.has_value();
}

// Walks one document and keeps every error instead of stopping at the first.
class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  std::optional<YAML::Node> load(const std::string& text);
  Config read(const YAML::Node& root);
  void throw_if_errors();

  // The machinery every section uses.
  void fail(const std::string& key, SourceMark mark, std::string message);
  std::nullopt_t expect(const Entry& entry, std::string_view allowed);
  void read_mapping(const Entry& section, const std::vector<Field>& fields);
  std::optional<std::string> scalar(const Entry& entry, std::string_view allowed);
  std::optional<std::string> choice(const Entry& entry, const std::vector<std::string_view>& allowed);
  std::optional<bool> boolean(const Entry& entry);
  std::optional<long long> integer(const Entry& entry, long long min, long long max, std::string_view unit = "",
                                   std::string_view alternative = "");
  std::optional<Duration> duration(const Entry& entry, Duration min, Duration max, std::string_view max_note = "",
                                   std::string_view alternative = "");
  // A sequence of CPU numbers as cpu-list text ([2, 3] becomes "2,3"), so both spellings go
  // through the one cpu-list parser; nullopt (each bad item reported) unless all are numbers.
  std::optional<std::string> cpu_sequence_text(const Entry& entry);
  // False, with "must list each CPU once" recorded, when the cpu-list `text` (as read from
  // entry) names a CPU twice ("1-3,2", [1, 1]).
  bool cpus_listed_once(const Entry& entry, const std::string& text);
  // A CPU setting (`cpus:`, `watch.cpus:`): auto, a list such as "2-5,8", a number or a sequence;
  // an empty sequence ("[]", no CPU) only where `allow_empty`.
  void read_cpus(const Entry& entry, CpuSetting& cpus, bool allow_empty);
  // A sequence of 1..64 (else "must be <allowed>") scalars that `valid` accepts (else "must be
  // <item_rule>" for that item); `target` is set only when every one is.
  void read_strings(const Entry& entry, std::string_view allowed, std::string_view item_rule,
                    bool (*valid)(std::string_view), std::vector<std::string>& target);

 private:
  // config.cpp: cpus, sampler, web, log.
  void read_sampler(const Entry& section, SamplerConfig& sampler);
  void read_burst(const std::optional<Entry>& spin, const std::optional<Entry>& period, SamplerConfig& sampler);
  void read_web(const Entry& section, WebConfig& web);
  void read_log(const Entry& section, LogConfig& log);
  void read_tick_source(const Entry& entry, std::optional<TickMethod>& method);
  void read_threshold(const Entry& entry, std::optional<Duration>& threshold);
  std::optional<std::string> listen_address(const Entry& entry);
  std::optional<std::string> telemetry_path(const Entry& entry);
  using ValueCheck = CheckedValue (*)(const std::string& text, std::string_view seen);
  std::optional<std::string> checked(const Entry& entry, ValueCheck check);

  std::string file_;
  std::vector<ConfigError> errors_;
  std::map<std::string, SourceMark> marks_;  // where each key read so far stood, by dotted key
};

}  // namespace jitterd::config_detail
