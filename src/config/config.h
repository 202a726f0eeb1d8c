// SPDX-License-Identifier: Apache-2.0
// The daemon's settings and the strict reader that fills them from YAML. Strict means an unknown
// key, a wrong type or an out-of-range value is an error that names file:line:column, the key,
// what is allowed and what was seen, and every error in the file is reported at once, so an
// operator fixes the file in one pass (start-up exits 78 on them; reload keeps the old Config).
// Checks against the machine (do these CPUs exist?) happen later, citing the marks kept here.
// Reading is pure: no globals, safe from any thread; Config is a plain value to copy around.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/duration.h"
#include "config/web_config.h"
#include "measure/tick.h"
#include "probes/probe_registry.h"

namespace jitterd {

// Where a value stood in the file, 1-based; 0 means it did not come from a file.
struct SourceMark {
  int line = 0;
  int column = 0;
  bool operator==(const SourceMark&) const = default;
};

// `cpus:` as written ("auto", "2-5,8", 3 or [2, 3]) and as a list; empty list when automatic.
struct CpuSetting {
  bool automatic = true;
  std::vector<int> list;
  std::string text = "auto";
  // `cpus_per_core:` "one" (false, the default) or "all": with auto, sample every thread of a
  // core instead of one thread per core with its SMT siblings left idle.
  bool all_threads_per_core = false;
  bool operator==(const CpuSetting&) const = default;
};

enum class DutyCycleMode { continuous, burst };

struct SamplerConfig {
  std::optional<TickMethod> tick_source;           // nullopt = "auto": the architecture's default
  std::optional<Duration> interruption_threshold;  // nullopt = "auto": floor × multiple below
  unsigned threshold_floor_multiple = 20;          // 2..10000
  DutyCycleMode duty_cycle = DutyCycleMode::burst;
  Duration burst_spin = std::chrono::milliseconds{100};  // 1ms..burst_period
  Duration burst_period = std::chrono::seconds{1};       // 10ms..60s
  Duration warmup = std::chrono::seconds{1};             // 10ms..60s (first window, discarded)
  Duration window = std::chrono::seconds{60};            // 10s..1h (rolling summaries)
  bool lock_memory = true;
  int realtime_priority = 0;             // 0 = off (SCHED_OTHER), 1..99 = SCHED_FIFO
  std::size_t interruption_ring = 4096;  // 16..1048576 entries per CPU
  bool operator==(const SamplerConfig&) const = default;
};

struct WebConfig {
  std::string listen_address = "0.0.0.0:9978";  // parse_listen_address takes it
  std::string telemetry_path = "/metrics";      // telemetry_path_problem finds nothing in it
  std::string config_file;                      // the web configuration file (TLS, basic auth); empty: none
  WebSecurity security;                         // config_file, read by load_web_config_file when it is set
  bool operator==(const WebConfig&) const = default;
};

struct LogConfig {
  std::string level = "info";  // trace debug info warn error critical off
  bool operator==(const LogConfig&) const = default;
};

struct Config {
  std::string path;  // the file it came from, for messages
  CpuSetting cpus;
  SamplerConfig sampler;
  WebConfig web;
  LogConfig log;
  // `probes:`, in the probes' own settings types; the top-level `expect:` section is the posture
  // probe's expectations (probes.posture.expect).
  ProbesSettings probes;
  // Where each key's value stood in the file ("probes.pacing.cpu" -> 12:10), so checks against
  // the machine made after reading can cite it.
  std::map<std::string, SourceMark> marks;
  // Keys a command-line flag set in place of the file ("cpus" -> "--cpus"): checks against the
  // machine name the flag, not the file.
  std::map<std::string, std::string> flags;

  // The mark of `key`, or {} (no line) when the file did not set it.
  SourceMark mark_of(const std::string& key) const;
  bool operator==(const Config&) const = default;
};

// What a configuration file (jitterd.yaml or the web configuration file) may be, far above any
// real one (the shipped file is 3 kB and 150 values): larger is refused before it can cost memory.
inline constexpr std::size_t kMaxConfigFileBytes = 256 * 1024;
inline constexpr std::size_t kMaxConfigValues = 10000;        // nodes, an alias counted at each use
inline constexpr int kMaxConfigDepth = 32;                    // nested mappings and sequences
inline constexpr std::size_t kMaxPemFileBytes = 1024 * 1024;  // a certificate, key or CA file
// Errors listed in full; the rest are counted ("... and 5 more errors").
inline constexpr std::size_t kMaxListedConfigErrors = 20;

struct ConfigError {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;
  std::string message;

  // "file:line:col: key: message"; no ":line:col" when line is 0, no "key: " when key is empty.
  std::string to_string() const;
};

// Every error found in one file; what() lists them one per line.
class ConfigErrors : public std::runtime_error {
 public:
  explicit ConfigErrors(std::vector<ConfigError> errors);
  const std::vector<ConfigError>& errors() const;
  // The lines to show: the first kMaxListedConfigErrors errors, then one counting the rest.
  std::vector<std::string> listed() const;

 private:
  std::vector<ConfigError> errors_;
};

// The text of a configuration file (this one or the web configuration file) within the limits
// above; throws ConfigErrors, one error naming the path and why it cannot be read.
std::string read_config_text(const std::string& path);

// Throws ConfigErrors; a missing or unreadable file is one error naming the path and the reason.
Config load_config_file(const std::string& path);

// Throws ConfigErrors; path_for_messages is what the messages (and Config::path) call the file.
Config parse_config(const std::string& yaml_text, const std::string& path_for_messages);

}  // namespace jitterd
