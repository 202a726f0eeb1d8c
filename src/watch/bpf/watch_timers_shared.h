// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What the watch's timer counter (watch_timers.bpf.h) and its loader (watch/bpf_timers.cpp)
// share: the timers armed on a watched CPU, counted by the function they will run. Plain C,
// included by the BPF program and by C++.
#ifndef JITTERD_WATCH_TIMERS_SHARED_H
#define JITTERD_WATCH_TIMERS_SHARED_H

#include "watch_bpf.h"

#define JD_TIMER_HRTIMER 0  // timer:hrtimer_start
#define JD_TIMER_LIST 1     // timer:timer_start (a timer_list: the timer wheel)

// Distinct (CPU, kind, function) entries the program keeps at the least (the loader gives 256 per
// watched CPU beyond four, up to bpf_map_reads.h kHashEntries, 4,096, what a reading walks); a start beyond them is counted in jd_timer_counters.untracked.
// Preallocated, so the map never grows.
#define JD_TIMER_FUNCTIONS 1024

struct jd_timer_key {
  jd_u32 cpu;  // the CPU the timer is queued on
  jd_u32 kind;
  jd_u64 function;  // the kernel address of the function it runs
};

struct jd_timer_counters {
  jd_u64 untracked;  // starts whose entry the full map could not take (the arming CPU's slot)
};

#endif
