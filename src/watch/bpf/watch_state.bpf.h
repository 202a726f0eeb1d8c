// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program, its shared part: the kernel's types it reads, the settings the loader
// writes before the load, each CPU's state (the stack of interruption frames, the preemption in
// progress), the maps the loader reads, and the steps every handler shares (the CPU's role, its
// run counted and timed, a length booked to its source, an outlier kept). Included by each part of
// the program (watch.bpf.c lists them); one compilation unit, one object, one skeleton.
// Runs in the kernel, on the CPU whose event it handles; per-CPU maps, so no two runs share state.
#ifndef JITTERD_WATCH_STATE_BPF_H
#define JITTERD_WATCH_STATE_BPF_H

#include "watch_state.bpf.h"

#include <linux/bpf.h>
#include <linux/types.h>
#include <stdbool.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "watch_bpf.h"

// The kernel's types, only the fields read here; CO-RE relocates each to this kernel's offset.

// A CPU's run queue: only whether its clock is to be left as it is at the next switch. Reached
// from a task's group run queue (CONFIG_FAIR_GROUP_SCHED): the per-CPU `runqueues` is no symbol
// the program can link to where kallsyms lists functions only (no CONFIG_KALLSYMS_ALL).
struct rq {
  unsigned int clock_update_flags;
} __attribute__((preserve_access_index));

struct cfs_rq {
  struct rq* rq;
} __attribute__((preserve_access_index));

struct sched_entity {
  struct cfs_rq* cfs_rq;  // the task's group's run queue on its CPU
} __attribute__((preserve_access_index));

struct thread_info {
  __u32 cpu;  // the task's CPU (task_cpu())
} __attribute__((preserve_access_index));

struct task_struct {
  struct thread_info thread_info;
  struct sched_entity se;
  int pid;
  int tgid;
  unsigned int flags;
  int nr_cpus_allowed;
  char comm[16];
} __attribute__((preserve_access_index));

struct irqaction {
  const char* name;
} __attribute__((preserve_access_index));

struct cpumask {
  unsigned long bits[1];
} __attribute__((preserve_access_index));

#define PF_KTHREAD 0x00200000
#define TASK_RUNNING 0
#define TLB_REMOTE_SHOOTDOWN 1  // enum tlb_flush_reason
#define JD_MAX_DEPTH 8          // a power of two: the stack index is masked for the verifier
#define RQCF_REQ_SKIP 0x01      // rq.clock_update_flags: the next __schedule() keeps the clock as it is

// Bumped by the loader after each change to the `application` map: a CPU's remembered answers
// (cpu_state.known) from before it are asked again.
__u64 application_generation = 0;

// Set by the loader before the program loads.
const volatile __u32 jitterd_tgid = 0;
const volatile __u32 watched_count = 0;  // entries of watched_list
// The watched CPUs as a bitmap, for an IPI's CPU mask: words 0..watched_words-1.
const volatile __u32 watched_words = 0;
const volatile __u64 watched_bits[JD_MAX_WATCHED / 64] = {};

struct frame {
  __u64 start;
  __u64 booked_at_entry;  // the CPU's `booked` when the frame began
  __u32 source;           // may turn from a call-function IPI into JD_SRC_TLB
  __u32 entry_source;     // what the exit must match
  __u32 id;
  __u32 pad;
};

// A thread's answer from the `application` map, remembered on a CPU: a watched CPU switches
// between the same few threads, and a hash lookup there costs a cache miss or two.
struct known_thread {
  __u64 generation;  // application_generation when asked
  __u32 tid;
  __u32 is_application;
};

struct cpu_state {
  __u64 booked;  // every nanosecond booked to a source on this CPU: frames' own time and NMIs
  __u32 depth;
  __u32 off_tid;  // the application's thread preempted, while off_since is set
  struct frame stack[JD_MAX_DEPTH];
  __u64 off_since;  // when the application's thread was switched out while runnable; 0: not
  __u64 off_booked;
  // A wakeup on this CPU that will preempt the application's running thread (sched_wakeup): its
  // preemption starts there, as the kernel's run-queue wait does. 0: none since the last switch.
  __u64 woken_at;
  __u64 woken_booked;  // `booked` then, plus the part before it of each frame open then, once closed
  __u32 woken_depth;   // stack[0 .. woken_depth-1] were open at woken_at and are not closed yet
  __u32 woken_pad;
  struct known_thread known[2];  // [1]: the last thread of the application asked about; [0]: the last other
  __u32 preempter_pid, preempter_tgid;
  __u16 preempter_flags, pad[3];
  char preempter_comm[16];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct jd_cpu_role);
} roles SEC(".maps");  // each CPU's role and outlier threshold (the loader writes every CPU's slot)

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, JD_MAX_WATCHED);
  __type(key, __u32);
  __type(value, __u32);
} watched_list SEC(".maps");  // the watched CPUs, for an IPI sent from another CPU

// Allocated as used (no preallocation): the loader deletes a sender idle for a whole window, and an
// element freed so is reclaimed only after every program run that may still hold it has ended.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct jd_ipi_sender_key);
  __type(value, __u64);
} ipi_senders SEC(".maps");

// The threads whose preemptions count: the application's and the samplers'. The loader sizes it
// to the kernel's pid_max, so every thread of the machine would fit: nothing can fill it and push
// the application out; allocated as used, it holds only the threads the loader put there.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32);
  __type(value, __u8);
} application SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, JD_PROGRAMS);
  __type(key, __u32);
  __type(value, struct jd_program_cost);
} costs SEC(".maps");  // each handler's runs (every CPU) and time (CPUs with a role)

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct cpu_state);
} states SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, JD_SOURCES);
  __type(key, __u32);
  __type(value, struct jd_figures);
} figures SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct jd_cpu_counters);
} counters SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct jd_irq_key);
  __type(value, struct jd_irq_figures);
} irqs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 256 * 1024);  // the loader sizes it for the CPUs it covers
} outliers SEC(".maps");

// This CPU's role, or NULL where the program does nothing.
static __always_inline const struct jd_cpu_role* cpu_role(void) {
  __u32 zero = 0;
  const struct jd_cpu_role* r = bpf_map_lookup_elem(&roles, &zero);
  return r && r->role != JD_ROLE_NONE ? r : 0;
}

// A run counted where the CPU has no role: the lookup above and this increment are all it does.
static __always_inline void ran(__u32 program) {
  struct jd_program_cost* c = bpf_map_lookup_elem(&costs, &program);
  if (c) c->runs += 1;
}

// Whether a handler's run number `run` (from 1) is one of those timed: one in JD_COST_SAMPLE, by a
// multiplicative hash (Fibonacci hashing: the top bits of run x 2^64/phi), not every 16th, so
// handlers whose runs alternate (a switch away, a switch back) are timed on both kinds.
_Static_assert(JD_COST_SAMPLE == 16, "timed_run keeps the top 4 bits");
static __always_inline bool timed_run(__u64 run) {
  return (run * 0x9E3779B97F4A7C15ULL) >> 60 == 0;  // 60 = 64 - log2(JD_COST_SAMPLE)
}

// A run on a CPU with a role, counted; one run in JD_COST_SAMPLE is timed from `start` (the
// handler's first clock read) to a second read, its time booked JD_COST_SAMPLE times over (an
// unbiased estimate of the total). A clock read costs 40 to 50 ns in a KVM guest, as much as the
// rest of a handler: timing every run would nearly double what the program takes from a watched
// CPU.
static __always_inline void ran_since(__u32 program, __u64 start) {
  struct jd_program_cost* c = bpf_map_lookup_elem(&costs, &program);
  if (!c) return;
  __u64 run = c->runs + 1;
  c->runs = run;
  if (timed_run(run)) c->ns += (bpf_ktime_get_ns() - start) * JD_COST_SAMPLE;
}

// For a handler that reads the clock only where its work needs it: a clock read if this run is to
// be timed, else 0; ran_from then counts the run and books its time.
static __always_inline __u64 timed_start(__u32 program) {
  struct jd_program_cost* c = bpf_map_lookup_elem(&costs, &program);
  return c && timed_run(c->runs + 1) ? bpf_ktime_get_ns() : 0;
}

static __always_inline void ran_from(__u32 program, __u64 start) {
  struct jd_program_cost* c = bpf_map_lookup_elem(&costs, &program);
  if (!c) return;
  c->runs += 1;
  if (start) c->ns += (bpf_ktime_get_ns() - start) * JD_COST_SAMPLE;
}

// The time now: `start` where the run has read it already.
static __always_inline __u64 clock_or(__u64 start) { return start ? start : bpf_ktime_get_ns(); }

static __always_inline struct cpu_state* cpu_state(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&states, &zero);
}

// Whether thread `tid` is one whose preemptions count: remembered per CPU (one of the
// application's, one other), asked of the hash map when not known since its last change.
static __always_inline bool is_application(struct cpu_state* s, __u32 tid) {
  __u64 generation = application_generation;
  if (s->known[1].tid == tid && s->known[1].generation == generation) return true;
  if (s->known[0].tid == tid && s->known[0].generation == generation) return false;
  bool yes = bpf_map_lookup_elem(&application, &tid) != 0;
  struct known_thread* k = &s->known[yes ? 1 : 0];
  k->generation = generation;
  k->tid = tid;
  k->is_application = yes;
  return yes;
}

static __always_inline struct jd_cpu_counters* cpu_counters(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&counters, &zero);
}

static __always_inline __u32 log2_u64(__u64 v) {
  __u32 r = 0;
  if (v >> 32) {
    v >>= 32;
    r += 32;
  }
  if (v >> 16) {
    v >>= 16;
    r += 16;
  }
  if (v >> 8) {
    v >>= 8;
    r += 8;
  }
  if (v >> 4) {
    v >>= 4;
    r += 4;
  }
  if (v >> 2) {
    v >>= 2;
    r += 2;
  }
  if (v >> 1) r += 1;
  return r;
}

static __always_inline void book(__u32 source, __u64 ns) {
  struct jd_figures* f = bpf_map_lookup_elem(&figures, &source);
  if (!f) return;
  __u32 bucket = log2_u64(ns);
  if (bucket >= JD_BUCKETS) bucket = JD_BUCKETS - 1;
  f->count += 1;
  f->ns += ns;
  if (ns > f->max_ns) f->max_ns = ns;
  f->buckets[bucket & (JD_BUCKETS - 1)] += 1;
}

static __always_inline void keep_outlier(struct jd_outlier* o) {
  if (bpf_ringbuf_output(&outliers, o, sizeof(*o), BPF_RB_NO_WAKEUP) != 0) {
    struct jd_cpu_counters* c = cpu_counters();
    if (c) c->outliers_lost += 1;
  }
}

// Every handler begins so: on a CPU with no role, one per-CPU array lookup, a compare and the run
// counted; elsewhere the clock read once, the work, and the handler's own time booked.
#define JD_ROLE_OR_RETURN(program)             \
  const struct jd_cpu_role* role = cpu_role(); \
  if (!role) {                                 \
    ran(program);                              \
    return 0;                                  \
  }                                            \
  __u64 now = bpf_ktime_get_ns()

#endif  // JITTERD_WATCH_STATE_BPF_H
