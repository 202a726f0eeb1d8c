// SPDX-License-Identifier: Apache-2.0
// The loader's side of the timers armed on the watched CPUs (bpf/watch_timers.bpf.h): the
// program's map of starts by (CPU, kind, function address), read by a walk on the reader's CPU,
// the addresses named through /proc/kallsyms (host/kernel_symbols.h). Internal to the BPF
// engine; one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/kernel_symbols.h"

namespace jitterd {

// Starts of one timer function on one watched CPU since the program loaded.
struct TimerStarts {
  int cpu = 0;
  std::string kind;      // "hrtimer" (timer:hrtimer_start) or "timer" (timer:timer_start)
  std::string function;  // its kernel symbol ("hrtimer_wakeup", "tick_nohz_handler")
  std::uint64_t count = 0;
  bool operator==(const TimerStarts&) const = default;
};

struct TimerStartsReading {
  std::vector<TimerStarts> starts;  // by CPU, then most first
  std::uint64_t untracked = 0;      // starts the program's full map could not take
  std::string names_why_not;        // why the functions are addresses ("" when named)
  std::uint64_t inexact = 0;        // addresses at which no known symbol starts (a module loaded since?)
};

// Every entry of the program's map `starts_fd` and the untracked count of `counters_fd` (a
// per-CPU array of `possible_cpus` slots), named by `symbols`.
TimerStartsReading read_timer_starts(int starts_fd, int counters_fd, std::size_t possible_cpus,
                                     const KernelSymbols& symbols);

}  // namespace jitterd
