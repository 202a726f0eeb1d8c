// SPDX-License-Identifier: Apache-2.0
// A baseline: one complete measurement saved to a file so that a later run can be compared with
// it (`jitterd baseline`, `jitterd report --save`, `jitterd compare`). It holds what the machine
// was (fingerprint), how jitterd measured (configuration), each sampled CPU's full-resolution gap
// histogram and per-sub-window figures (what compare's tests need), and the probes' tables.
//
// The file is versioned JSON (docs/before-and-after.md): format "jitterd-baseline",
// format_version "MAJOR.MINOR". A reader accepts its own major version and older ones and
// refuses a newer major; minor versions only add fields. Writing replaces a regular file whole
// (host/file_writer.h: a temporary file no one can name in advance, renamed over the target), so
// no reader ever sees half a file, and refuses a link, a device or a FIFO; "-" is standard output.
// Pure functions plus the file operations; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/cpu_figures.h"
#include "measure/histogram.h"
#include "measure/tail_thresholds.h"
#include "measure/watched_figures.h"
#include "probes/probe.h"
#include "report/render.h"

namespace jitterd {

// What a baseline file may hold, so that no file costs more to read than its size: 64 MiB
// (a 60 s baseline of 1,024 CPUs is about 35 MB, one CPU for 24 h about 35 MB) and 8,192 CPUs
// (x86-64's largest NR_CPUS, MAXSMP).
inline constexpr std::size_t kBaselineMaxBytes = 64u << 20;
inline constexpr std::size_t kBaselineMaxCpus = 8192;
// Loops a file may hold: the loops probe reads at most 256 segments (loops/loop_reader.h).
inline constexpr std::size_t kBaselineMaxLoops = 256;

inline constexpr int kBaselineFormatMajor = 1;
// 1.1 added probes[].samples (the individual values behind the probes' quantiles); 1.2 added
// loops[] (the application's own loops) and watched[] (the watched CPUs).
inline constexpr int kBaselineFormatMinor = 2;
inline constexpr const char* kBaselineFormatName = "jitterd-baseline";

// Gaps at or above kTailThresholdsNs (measure/tail_thresholds.h) are counted per sub-window:
// compare judges the tail by these rates.

// A sub-window: the CPU's figures over it (the file holds sampled_seconds as "seconds",
// samples, the quantiles (bucket upper edges, not capped: a sub-window has no max),
// interruptions and stolen_seconds) and its tail counts.
struct SubWindow : CpuFigures {
  std::vector<std::uint64_t> over_threshold;  // per kTailThresholdsNs
};

// A sampled CPU: its figures over the whole run (the file holds samples, sampled and stolen
// seconds, interruptions, floor, threshold and max; its quantiles come from the histogram, by
// baseline_quantile_ns), its histogram and its sub-windows.
struct BaselineCpu : CpuFigures {
  int cpu = 0;
  std::string error;            // non-empty: not sampled
  HistogramSnapshot histogram;  // ticks
  std::vector<SubWindow> sub_windows;
};

// An application's loop (probes/loops_probe.h, format 1.2): a sampled CPU's figures, in the loop's
// own counter (`counter_hertz`, which may differ from the file's), plus its name; `cpu` is the CPU
// the loop says it runs on.
struct BaselineLoop : BaselineCpu {
  std::string name;
  double counter_hertz = 0;
};

// The watch's methods (probes/watch_probe.h) count different things: `bpf` and `tracepoints` pair
// every interruption (hard IRQs, IPIs, softirqs, each once) entry to exit, the one in the kernel,
// the other from perf's records; `counts` adds the kernel's interrupt and softirq counters.
inline constexpr const char* kWatchMethodBpf = "bpf";
inline constexpr const char* kWatchMethodTracepoints = "tracepoints";
inline constexpr const char* kWatchMethodCounts = "counts";
// A method this version writes; one that pairs interruptions knows each one's length.
inline bool known_watch_method(std::string_view m) {
  return m == kWatchMethodBpf || m == kWatchMethodTracepoints || m == kWatchMethodCounts;
}
inline bool watch_method_pairs(std::string_view m) { return m == kWatchMethodBpf || m == kWatchMethodTracepoints; }

// A watched CPU (format 1.2): its figures over the run (the totals), per sub-window, and how;
// a tail count unknown in one of them says why in tail_unknown.
struct BaselineWatched : WatchedFigures {
  int cpu = 0;
  std::string method;               // kWatchMethodBpf, kWatchMethodTracepoints or kWatchMethodCounts
  double outlier_threshold_ns = 0;  // bpf: the single interruptions kept with their length
  std::string tail_unknown;         // why a tail count is unknown; "" when every one is known
  std::vector<WatchedFigures> sub_windows;
};

struct BaselineProbe {
  std::string name;
  bool success = false;
  std::string error;
  std::vector<ProbeTable> tables;
  std::vector<std::string> notes;
  // The values compare tests the tables' quantiles with (format 1.1). has_samples is false for a
  // probe read from an older file, which has none: its figures cannot be tested.
  std::vector<ProbeSamples> samples;
  bool has_samples = true;
};

struct Baseline {
  std::string format_version;  // as read; written as the current one
  std::string created;         // UTC, ISO 8601
  std::string jitterd_version;
  // kernel, cmdline, microcode, bios_*, cpu_model, governor, clocksource: what the machine was.
  std::vector<std::pair<std::string, std::string>> fingerprint;
  // What jitterd did: tick method, counter frequency, duty cycle, thresholds, durations.
  std::vector<std::pair<std::string, std::string>> configuration;
  std::string tick_method;
  double counter_hertz = 0;
  double duration_seconds = 0;
  double sub_window_seconds = 0;
  std::vector<double> tail_thresholds_ns = kTailThresholdsNs;
  // Empty: each CPU's histogram is jitterd's fine one. Otherwise the `le` bounds (ns) of the
  // exported Prometheus histogram it was rebuilt from (compare/prometheus_history.h): each bucket's
  // count sits in the fine bucket holding its bound, and quantiles are these bounds. Such a
  // baseline lives for one compare; it is not a file format (write_baseline refuses it).
  std::vector<double> histogram_bounds_ns;
  std::vector<BaselineCpu> cpus;
  std::vector<BaselineProbe> probes;
  std::vector<BaselineLoop> loops;       // format 1.2; none in an older file
  std::vector<BaselineWatched> watched;  // format 1.2; none in an older file
};

// A file that cannot be used as a baseline. exit_code: 66 cannot be read (EX_NOINPUT), 65 not a
// baseline or not one this jitterd can read (EX_DATAERR); 73 cannot be written (EX_CANTCREAT).
class BaselineError : public std::runtime_error {
 public:
  BaselineError(int exit_code, const std::string& message) : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

inline constexpr int kExitBadBaseline = 65;
inline constexpr int kExitUnreadableBaseline = 66;
// No answer from another server (Prometheus, a running jitterd), or it does not hold what was asked.
inline constexpr int kExitUnavailable = 69;
inline constexpr int kExitCannotWrite = 73;

// Figures of one sub-window from the difference of two cumulative snapshots.
SubWindow sub_window_of(const HistogramSnapshot& delta, double ns_per_tick, double seconds,
                        std::uint64_t interruptions, double stolen_seconds,
                        const std::vector<double>& thresholds_ns);

Json baseline_json(const Baseline& baseline);
// Reading a baseline from its JSON: report/baseline_reader.h.
// Throws BaselineError: 66 unreadable, 65 larger than kBaselineMaxBytes, not valid JSON or not a
// baseline. A pipe is read as it comes, up to the same limit.
Baseline read_baseline(const std::string& path);
// `path` "-": standard output. Otherwise the file `path`, replaced whole (host/file_writer.h).
// Throws BaselineError (73) naming the path and why (a symbolic link, a device, "No space left on
// device"), or (65) for a baseline at exported-bucket resolution, which the file format does not
// hold.
inline constexpr const char* kStandardOutputPath = "-";
void write_baseline(const Baseline& baseline, const std::string& path);
// What write_baseline would refuse about `path` before anything is measured: throws BaselineError
// (73), as write_baseline would.
void check_baseline_target(const std::string& path);

// The value of `key` among a baseline's fingerprint or configuration fields; "" when absent.
std::string field_value(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& key);

// Quantile q of a CPU's histogram in ns (upper bucket edge, capped by the max); at exported-bucket
// resolution the `le` bound of the exported bucket holding it.
double baseline_quantile_ns(const Baseline& baseline, const BaselineCpu& cpu, double q);
// The same for a histogram in a counter of `counter_hertz` (a loop's own).
double baseline_quantile_ns(const Baseline& baseline, const BaselineCpu& cpu, double q, double counter_hertz);

}  // namespace jitterd
