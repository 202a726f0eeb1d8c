// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program, who re-arms the tick: every timer started on a watched CPU
// (timer:hrtimer_start and timer:timer_start), counted by the CPU it is queued on and the function
// it will run, so the loader can name (through /proc/kallsyms) what keeps a watched CPU's tick
// going: on a nohz_full CPU, what made tick_stop fail; anywhere, what sets timers there. These run
// on the arming CPU, whatever its role, and filter first on the timer's CPU (the watched CPUs'
// bitmap). Not timed (no clock read on a CPU that may have no role); the runs count.
#ifndef JITTERD_WATCH_TIMERS_BPF_H
#define JITTERD_WATCH_TIMERS_BPF_H

#include "watch_state.bpf.h"
#include "watch_timers_shared.h"

#define JD_TIMER_CPUMASK 0x0003FFFF  // timer_list.flags: the CPU it is queued on (TIMER_CPUMASK)

struct hrtimer_cpu_base {
  unsigned int cpu;
} __attribute__((preserve_access_index));

struct hrtimer_clock_base {
  struct hrtimer_cpu_base* cpu_base;
} __attribute__((preserve_access_index));

struct hrtimer {
  struct hrtimer_clock_base* base;
  void* function;
} __attribute__((preserve_access_index));

struct timer_list {
  void* function;
  __u32 flags;
} __attribute__((preserve_access_index));

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, JD_TIMER_FUNCTIONS);
  __type(key, struct jd_timer_key);
  __type(value, __u64);
} timer_starts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct jd_timer_counters);
} timer_counters SEC(".maps");

static __always_inline bool cpu_is_watched(__u32 cpu) {
  if (cpu >= JD_MAX_WATCHED) return false;
  return (watched_bits[(cpu / 64) & (JD_MAX_WATCHED / 64 - 1)] >> (cpu % 64)) & 1;
}

static __always_inline void count_timer(__u32 cpu, __u32 kind, void* function) {
  struct jd_timer_key key = {};
  key.cpu = cpu;
  key.kind = kind;
  key.function = (__u64)function;
  __u64* n = bpf_map_lookup_elem(&timer_starts, &key);
  if (!n) {
    __u64 zero = 0;
    bpf_map_update_elem(&timer_starts, &key, &zero, BPF_NOEXIST);
    n = bpf_map_lookup_elem(&timer_starts, &key);
  }
  if (n) {
    __sync_fetch_and_add(n, 1);
    return;
  }
  __u32 zero_key = 0;
  struct jd_timer_counters* c = bpf_map_lookup_elem(&timer_counters, &zero_key);
  if (c) c->untracked += 1;
}

SEC("raw_tp/hrtimer_start")
int BPF_PROG(hrtimer_start, struct hrtimer* timer, int mode, bool was_armed) {
  ran(JD_PROG_HRTIMER_START);
  __u32 cpu = BPF_CORE_READ(timer, base, cpu_base, cpu);
  if (cpu_is_watched(cpu)) count_timer(cpu, JD_TIMER_HRTIMER, BPF_CORE_READ(timer, function));
  return 0;
}

SEC("raw_tp/timer_start")
int BPF_PROG(timer_start, struct timer_list* timer, unsigned long bucket_expiry) {
  ran(JD_PROG_TIMER_START);
  __u32 cpu = BPF_CORE_READ(timer, flags) & JD_TIMER_CPUMASK;
  if (cpu_is_watched(cpu)) count_timer(cpu, JD_TIMER_LIST, BPF_CORE_READ(timer, function));
  return 0;
}

#endif  // JITTERD_WATCH_TIMERS_BPF_H
