// The daemon's settings and the strict reader that fills them from YAML. Strict means an unknown
// key, a wrong type or an out-of-range value is an error that names file:line:column, the key,
// what is allowed and what was seen, and every error in the file is reported at once, so an
// operator fixes the file in one pass (start-up exits 78 on them; reload keeps the old Config).
// Checks against the machine (do these CPUs exist?) happen later, citing the marks kept here.
// Reading is pure: no globals, safe from any thread; Config is a plain value to copy around.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/duration.h"
#include "probes/c2c_pairs.h"
#include "measure/ping_pong.h"
#include "measure/tick.h"
#include "probes/posture_checks.h"

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
  SourceMark mark;
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
  std::string listen_address = "0.0.0.0:9978";
  std::string telemetry_path = "/metrics";
  bool operator==(const WebConfig&) const = default;
};

struct LogConfig {
  std::string level = "info";  // trace debug info warn error critical off
  bool operator==(const LogConfig&) const = default;
};

// The periodic probes. Each runs every `interval` while enabled; the checks of `cpu` against the
// machine (online? sampled?) happen later, citing its mark.
enum class PacingAction { udp, noop };

struct ProbeCpu {
  std::optional<int> cpu;  // nullopt = "auto": the first housekeeping CPU; else 0..8191
  SourceMark mark;
  bool operator==(const ProbeCpu&) const = default;
};

struct ClockProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::minutes{5};                  // 10s..24h
  Duration calibration_window = std::chrono::milliseconds{200};  // 10ms..10s
  std::vector<Duration> sleep_requests = {  // 1..16 distinct, each 1us..1s
      std::chrono::microseconds{1}, std::chrono::microseconds{10},
      std::chrono::microseconds{100}, std::chrono::milliseconds{1}};
  std::size_t sleep_samples = 50;  // 2..10000 per request
  bool operator==(const ClockProbeConfig&) const = default;
};

struct PacingProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::minutes{15};  // 10s..24h
  ProbeCpu cpu;
  std::vector<double> rates = {1000, 10000, 100000};  // 1..16 distinct, each 1..1e7 per second
  Duration duration = std::chrono::milliseconds{500};  // 10ms..60s per rate
  PacingAction action = PacingAction::udp;
  bool operator==(const PacingProbeConfig&) const = default;
};

struct KernelCostProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::minutes{15};  // 10s..24h
  ProbeCpu cpu;
  std::size_t samples = 1000;  // 10..1000000
  bool operator==(const KernelCostProbeConfig&) const = default;
};

struct PinningProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::minutes{15};     // 10s..24h
  Duration window = std::chrono::milliseconds{500};  // 10ms..60s
  bool operator==(const PinningProbeConfig&) const = default;
};

struct C2cProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::minutes{5};  // 10s..24h
  PingPongMethod method = PingPongMethod::cas;
  std::size_t samples = 100;       // 2..100000 timed samples per pair, after one warm-up
  std::size_t round_trips = 1000;  // 1..1000000 per sample; samples × round_trips <= 10^7
  PairSelection pairs = PairSelection::representative;
  std::vector<std::pair<int, int>> pair_list;  // for PairSelection::list, as written
  SourceMark pairs_mark;                       // checked against the machine later
  std::size_t budget = 64;  // 1..100000 pairs per run
  bool allow_unsampled = false;
  bool operator==(const C2cProbeConfig&) const = default;
};

struct PostureProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::minutes{1};  // 10s..24h
  std::size_t irq_detail = 0;  // 0..64 device IRQs named per sampled or isolated CPU; 0: counts only
  bool operator==(const PostureProbeConfig&) const = default;
};

struct AttributionProbeConfig {
  bool enabled = true;
  Duration interval = std::chrono::seconds{10};  // 10s..24h: one attribution window
  bool tracepoints = true;  // match single interruptions to irq/softirq/sched events if allowed
  std::size_t source_detail = 0;  // 0..64 sources counted one by one per sampled CPU; 0: by cause only
  bool operator==(const AttributionProbeConfig&) const = default;
};

struct ProbesConfig {
  ClockProbeConfig clock;
  PacingProbeConfig pacing;
  KernelCostProbeConfig kernel_cost;
  PinningProbeConfig pinning;
  C2cProbeConfig c2c;
  PostureProbeConfig posture;
  AttributionProbeConfig attribution;
  bool operator==(const ProbesConfig&) const = default;
};

// `expect:`, what the isolation posture should be (probes/posture_checks.h); each unmet
// expectation is exported and fails `jitterd report posture`. Unset expectations are not checked;
// per-CPU ones apply to the sampled CPUs.
using ExpectConfig = PostureExpectations;

struct Config {
  std::string path;  // the file it came from, for messages
  CpuSetting cpus;
  SamplerConfig sampler;
  WebConfig web;
  LogConfig log;
  ProbesConfig probes;
  ExpectConfig expect;
  bool operator==(const Config&) const = default;
};

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

 private:
  std::vector<ConfigError> errors_;
};

// Throws ConfigErrors; a missing or unreadable file is one error naming the path and the reason.
Config load_config_file(const std::string& path);

// Throws ConfigErrors; path_for_messages is what the messages (and Config::path) call the file.
Config parse_config(const std::string& yaml_text, const std::string& path_for_messages);

}  // namespace jitterd
