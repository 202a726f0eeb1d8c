// SPDX-License-Identifier: Apache-2.0
// The pure parsers behind posture.h: the kernel command line and its isolation parameters,
// /proc/stat CPU times, and the small sysfs and procfs formats posture reading meets. Plain
// functions over text, tested on literal strings; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

// ---- the kernel command line ----

struct CmdlineParam {
  std::string key;                   // as written, e.g. "intel_idle.max_cstate"
  std::optional<std::string> value;  // std::nullopt for a bare flag, "" for "key="
  bool operator==(const CmdlineParam&) const = default;
};

// Splits /proc/cmdline text into parameters in order, as the kernel's next_arg() does: blanks
// separate, double quotes group ("key=\"a b\"" gives value "a b", quotes removed). Parameters
// after a lone "--" belong to init and are left out.
std::vector<CmdlineParam> parse_kernel_cmdline(std::string_view text);

// The parameters that decide isolation, each std::nullopt when absent. Where a key repeats, the
// last one wins, as for most kernel parameters; '-' and '_' in keys match each other, as in the
// kernel's parameq().
struct IsolationParams {
  std::optional<std::string> isolcpus;      // the cpu-list part only, e.g. "2-7"
  std::vector<std::string> isolcpus_flags;  // e.g. {"nohz", "domain", "managed_irq"}, as written
  std::optional<std::string> nohz_full, rcu_nocbs, irqaffinity;
  bool rcu_nocb_poll = false;
  std::optional<std::string> skew_tick, intel_idle_max_cstate, processor_max_cstate, idle, mitigations;
  bool operator==(const IsolationParams&) const = default;
};

IsolationParams parse_isolation_params(const std::vector<CmdlineParam>& params);

// A cpu-list parameter value as CPUs: std::nullopt when absent or unparsable (then *error, if
// given, says why, naming the value).
std::optional<std::vector<int>> param_cpus(const std::optional<std::string>& value, std::string* error = nullptr);

// ---- small file formats ----

// The selected word of a sysfs choice file: "always [madvise] never" gives "madvise";
// std::nullopt when no word is bracketed.
std::optional<std::string> parse_bracketed_choice(std::string_view text);

// A whole-file integer such as a sysctl or a kHz frequency, blanks around it allowed.
std::optional<long long> parse_integer(std::string_view text);

// The first value of `key` in /proc/cpuinfo text ("microcode", "model name", "CPU part"), trimmed;
// the key is matched whole.
std::optional<std::string> cpuinfo_field(std::string_view cpuinfo_text, std::string_view key);

// Per-CPU time from the "cpuN ..." lines of /proc/stat, in clock ticks (USER_HZ): busy is
// everything but idle and iowait; steal is the time the hypervisor ran something else while this
// virtual CPU wanted to run (the eighth column; has_steal false on a line too short to hold it).
// Lines it cannot read are skipped.
struct CpuTimes {
  std::uint64_t busy = 0, total = 0;
  std::uint64_t steal = 0;
  bool has_steal = false;
  bool operator==(const CpuTimes&) const = default;
};
std::map<int, CpuTimes> parse_proc_stat(std::string_view text);

// Busy share of each CPU between two readings, for CPUs in both whose total advanced.
std::map<int, double> busy_shares(const std::map<int, CpuTimes>& before, const std::map<int, CpuTimes>& after);

}  // namespace jitterd
