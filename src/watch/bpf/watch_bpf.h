// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What the watch's BPF program (watch.bpf.c) and its loader (watch/bpf_watch.cpp) share: the
// sources of time taken from a watched CPU, the per-CPU figures kept for each, and the record of
// one outlier. Plain C, included by the BPF program (clang -target bpf) and by C++; the layout is
// the maps' value layout, so both sides must build from this one file.
#ifndef JITTERD_WATCH_BPF_H
#define JITTERD_WATCH_BPF_H

#ifdef __cplusplus
#include <cstdint>
typedef std::uint64_t jd_u64;
typedef std::uint32_t jd_u32;
typedef std::uint16_t jd_u16;
typedef std::uint8_t jd_u8;
#else
typedef __u64 jd_u64;
typedef __u32 jd_u32;
typedef __u16 jd_u16;
typedef __u8 jd_u8;
#endif

#include "host/softirqs.h"

// Where the time went: one interrupt vector, NMI, device IRQ, softirq vector or class of task
// that ran while the application wanted the CPU. The loader maps each to attribution's causes.
enum jd_source {
  JD_SRC_LOCAL_TIMER = 0,
  JD_SRC_RESCHEDULE,
  JD_SRC_CALL_FUNCTION,
  JD_SRC_CALL_FUNCTION_SINGLE,
  JD_SRC_TLB,  // a call-function IPI that flushed the TLB for another CPU (tlb:tlb_flush inside it)
  JD_SRC_IRQ_WORK,
  JD_SRC_PLATFORM_IPI,
  JD_SRC_THERMAL_APIC,
  JD_SRC_THRESHOLD_APIC,
  JD_SRC_DEFERRED_ERROR_APIC,
  JD_SRC_SPURIOUS_APIC,
  JD_SRC_ERROR_APIC,
  JD_SRC_NMI,
  JD_SRC_DEVICE_IRQ,
  JD_SRC_SOFTIRQ_FIRST,  // softirq vector 0 (HI) to the last (RCU): host/softirqs.h
  JD_SRC_SOFTIRQ_LAST = JD_SRC_SOFTIRQ_FIRST + JD_SOFTIRQ_COUNT - 1,
  // The application preempted, by the class of the task that took the CPU (host/task_classes.h's):
  JD_SRC_PREEMPT_JITTERD,        // one of jitterd's own threads
  JD_SRC_PREEMPT_KERNEL_PERCPU,  // a kernel thread bound to that CPU (ksoftirqd/N, kworker/N:M, ...)
  JD_SRC_PREEMPT_APPLICATION,    // another of the application's threads
  JD_SRC_PREEMPT_STRAY,          // anything else: a task that should not run on an isolated CPU
  JD_SOURCES
};

// The x86 APIC vectors, the one list of them, is host/x86_vectors.h's JD_X86_VECTORS (event,
// handler stem, source, cause): attribution's tracepoints in host/ expand it too.
#include "host/x86_vectors.h"

// Single interruptions by duration: bucket b holds durations in [2^b, 2^(b+1)) ns (bucket 0 also
// 0 and 1 ns), the last one everything from 2^(JD_BUCKETS-1) ns (about 2.1 s) up.
#define JD_BUCKETS 32

// One source's figures on one CPU, cumulative from the program's load.
struct jd_figures {
  jd_u64 count;
  jd_u64 ns;  // the time it took, its nested interruptions taken out (they count as their own)
  jd_u64 max_ns;
  jd_u64 buckets[JD_BUCKETS];
};

// Per-CPU counters of the program itself and of timer:tick_stop.
#define JD_TICK_DEPENDENCIES 8  // timer:tick_stop's dependency bits: POSIX_TIMER, PERF_EVENTS, SCHED, ...
struct jd_cpu_counters {
  jd_u64 tick_stop_failures[JD_TICK_DEPENDENCIES];  // by dependency bit
  jd_u64 tick_stop_failures_unknown;                // no dependency bit, or one beyond JD_TICK_DEPENDENCIES
  jd_u64 outliers_lost;                             // the outlier ring was full
  jd_u64 unmatched_exits;                           // an exit with no entry (the program attached mid-interrupt)
  jd_u64 too_deep;                                  // nesting beyond JD_MAX_DEPTH, not counted
  jd_u64
      ipi_senders_untracked;  // IPIs sent from this CPU to a watched one that the full sender map could not take
};

// Device IRQs by number, per CPU: a hash map's key and value.
struct jd_irq_key {
  jd_u32 cpu;
  jd_u32 irq;
};
struct jd_irq_figures {
  jd_u64 count;
  jd_u64 ns;
  jd_u64 max_ns;
};

// IPIs sent to a watched CPU, by the task that sent them (ipi:ipi_send_cpu, ipi_send_cpumask): a
// hash map's key; its value is the count.
struct jd_ipi_sender_key {
  jd_u32 cpu;     // the watched CPU the IPI was sent to
  char comm[16];  // the sending task's name
};
// At most this many watched CPUs are looked up in an IPI's CPU mask.
#define JD_MAX_WATCHED 1024

// What the program does on one CPU (a per-CPU array's value, written by the loader for every
// CPU): nothing, watch it (the application's CPU), or watch it for the attribution of a sampled
// CPU's gaps. Both keep the same figures; the roles differ in which threads' preemptions count
// (the application's or the sampler's) and in the outlier threshold.
#define JD_ROLE_NONE 0
#define JD_ROLE_WATCHED 1
#define JD_ROLE_SAMPLED 2
struct jd_cpu_role {
  jd_u64 outlier_threshold_ns;  // interruptions this long or longer (own time) go to the outlier ring
  jd_u32 role;                  // JD_ROLE_*
  jd_u32 pad;
};

// An interruption or preemption of at least its CPU's outlier threshold, in the outlier ring.
struct jd_outlier {
  jd_u64 start_ns;     // bpf_ktime_get_ns (CLOCK_MONOTONIC) at its start (entry, or the switch away)
  jd_u64 end_ns;       // bpf_ktime_get_ns at its end
  jd_u64 duration_ns;  // nested interruptions taken out
  jd_u32 cpu;
  jd_u16 source;      // enum jd_source
  jd_u16 task_flags;  // JD_TASK_* for a preemption
  jd_u32 id;          // the IRQ number, the softirq vector, or the preempting task's pid
  jd_u32 tgid;        // the preempting task's process
  char name[16];      // the IRQ's handler name or the preempting task's comm
};
#define JD_TASK_KERNEL_THREAD 1
#define JD_TASK_PER_CPU 2  // allowed on one CPU only
#define JD_TASK_APPLICATION 4

// The program's own handlers, for their cost (a per-CPU array indexed by these): each run counts
// on every CPU; on a CPU with a role one run in JD_COST_SAMPLE is timed (below) and its time booked
// that many times over. watch/watch_sources.cpp names them as their BPF programs are named.
enum jd_program {
  JD_PROG_IRQ_ENTRY = 0,
  JD_PROG_IRQ_EXIT,
  JD_PROG_SOFTIRQ_ENTRY,
  JD_PROG_SOFTIRQ_EXIT,
#define JD_PROG_OF_VECTOR(event, stem, source, cause) JD_PROG_##stem##_ENTRY, JD_PROG_##stem##_EXIT,
  JD_X86_VECTORS(JD_PROG_OF_VECTOR)  // each APIC vector's entry and exit, in the table's order
#undef JD_PROG_OF_VECTOR
  JD_PROG_TLB_FLUSH,
  JD_PROG_NMI_HANDLER,
  JD_PROG_IPI_SEND_CPU,
  JD_PROG_IPI_SEND_CPUMASK,
  JD_PROG_TICK_STOP,
  JD_PROG_SCHED_SWITCH,
  JD_PROG_SCHED_WAKEUP,
  JD_PROG_HRTIMER_START,  // watch_timers.bpf.h
  JD_PROG_TIMER_START,
  JD_PROGRAMS
};

// One handler's cost on one CPU, cumulative from the program's load.
struct jd_program_cost {
  jd_u64 runs;  // every run
  jd_u64 ns;    // on a CPU with a role only: JD_COST_SAMPLE x the timed runs' time (none elsewhere)
};
// On a CPU with a role, one handler run in this many (a power of two) is timed, from its first
// clock read to a second one; each such time counts this many times over.
#define JD_COST_SAMPLE 16

#endif
