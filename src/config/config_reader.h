// The strict configuration reader's pieces, shared by the files that read one part of the
// configuration each: config_reader.cpp (walking mappings, typed values, error collection),
// config.cpp (the top level, cpus, sampler, web, log) and config_probes.cpp (probes). Private to
// those files; everyone else calls parse_config or load_config_file in config.h. A ConfigReader
// reads one document on one thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
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

 private:
  // config_reader.cpp: the machinery every section uses.
  void fail(const std::string& key, SourceMark mark, std::string message);
  std::nullopt_t expect(const Entry& entry, std::string_view allowed);
  void read_mapping(const Entry& section, const std::vector<Field>& fields);
  std::optional<std::string> scalar(const Entry& entry, std::string_view allowed);
  std::optional<std::string> choice(const Entry& entry,
                                    const std::vector<std::string_view>& allowed);
  std::optional<bool> boolean(const Entry& entry);
  std::optional<long long> integer(const Entry& entry, long long min, long long max,
                                   std::string_view unit = "", std::string_view alternative = "");
  std::optional<Duration> duration(const Entry& entry, Duration min, Duration max,
                                   std::string_view max_note = "",
                                   std::string_view alternative = "");

  // config.cpp: cpus, sampler, web, log.
  void read_cpus(const Entry& entry, CpuSetting& cpus);
  std::optional<std::string> cpu_sequence_text(const Entry& entry);
  void read_sampler(const Entry& section, SamplerConfig& sampler);
  void read_burst(const std::optional<Entry>& spin, const std::optional<Entry>& period,
                  SamplerConfig& sampler);
  void read_web(const Entry& section, WebConfig& web);
  void read_log(const Entry& section, LogConfig& log);
  void read_expect(const Entry& section, ExpectConfig& expect);
  std::optional<std::vector<int>> expected_cpu_set(const Entry& entry);
  std::optional<std::string> name_word(const Entry& entry, std::string_view what);
  void read_tick_source(const Entry& entry, std::optional<TickMethod>& method);
  void read_threshold(const Entry& entry, std::optional<Duration>& threshold);
  std::optional<std::string> listen_address(const Entry& entry);
  std::optional<std::string> telemetry_path(const Entry& entry);
  using ValueCheck = CheckedValue (*)(const std::string& text, std::string_view seen);
  std::optional<std::string> checked(const Entry& entry, ValueCheck check);

  // config_probes.cpp: probes.
  void read_probes(const Entry& section, ProbesConfig& probes);
  void read_clock_probe(const Entry& section, ClockProbeConfig& clock);
  void read_pacing_probe(const Entry& section, PacingProbeConfig& pacing);
  void read_kernel_cost_probe(const Entry& section, KernelCostProbeConfig& kernel_cost);
  void read_pinning_probe(const Entry& section, PinningProbeConfig& pinning);
  void read_c2c_probe(const Entry& section, C2cProbeConfig& c2c);
  void read_posture_probe(const Entry& section, PostureProbeConfig& posture);
  void read_attribution_probe(const Entry& section, AttributionProbeConfig& attribution);
  void read_c2c_pairs(const Entry& entry, C2cProbeConfig& c2c);
  std::optional<std::pair<int, int>> cpu_pair(const Entry& entry);
  void read_probe_cpu(const Entry& entry, ProbeCpu& cpu);
  std::optional<double> rate(const Entry& entry);
  template <typename T>
  std::optional<std::vector<T>> distinct_list(
      const Entry& entry, std::string_view items,
      const std::function<std::optional<T>(const Entry&)>& read_item);

  std::string file_;
  std::vector<ConfigError> errors_;
};

}  // namespace jitterd::config_detail
