// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program, the scheduler's part: the application's preemptions (sched_switch away
// from one of its threads while it was runnable, or the wakeup on that CPU that caused it, back to
// it), booked to what preempted it, and the
// tick that would not stop (timer:tick_stop failures, counted by dependency).
// Runs in the kernel, on the CPU that switches or keeps its tick.
#ifndef JITTERD_WATCH_SCHEDULER_BPF_H
#define JITTERD_WATCH_SCHEDULER_BPF_H

#include "watch_state.bpf.h"

SEC("raw_tp/tick_stop")
int BPF_PROG(tick_stop, int success, int dependency) {
  JD_ROLE_OR_RETURN(JD_PROG_TICK_STOP);
  struct jd_cpu_counters* c = cpu_counters();
  if (!success && c) {
    __u32 bit = dependency ? log2_u64((__u32)dependency) : JD_TICK_DEPENDENCIES;
    if (bit < JD_TICK_DEPENDENCIES)
      c->tick_stop_failures[bit & (JD_TICK_DEPENDENCIES - 1)] += 1;
    else
      c->tick_stop_failures_unknown += 1;
  }
  ran_since(JD_PROG_TICK_STOP, now);
  return 0;
}

static __always_inline __u32 preempter_source(const struct cpu_state* s) {
  if (s->preempter_tgid == jitterd_tgid && jitterd_tgid != 0) return JD_SRC_PREEMPT_JITTERD;
  if ((s->preempter_flags & JD_TASK_KERNEL_THREAD) && (s->preempter_flags & JD_TASK_PER_CPU))
    return JD_SRC_PREEMPT_KERNEL_PERCPU;
  if (s->preempter_flags & JD_TASK_APPLICATION) return JD_SRC_PREEMPT_APPLICATION;
  return JD_SRC_PREEMPT_STRAY;
}

// The application's thread back on the CPU: the time it waited, less what interrupts took
// meanwhile (booked to them), went to the task that preempted it.
static __always_inline void preemption_ended(struct cpu_state* s, __u64 now, __u64 outlier_threshold_ns) {
  __u64 start = s->off_since;
  __u64 wall = now - start;
  __u64 nested = s->booked - s->off_booked;
  __u64 own = wall > nested ? wall - nested : 0;
  __u32 source = preempter_source(s);
  s->off_since = 0;
  book(source, own);
  if (own < outlier_threshold_ns) return;
  struct jd_outlier o = {};
  o.start_ns = start;
  o.end_ns = now;
  o.duration_ns = own;
  o.cpu = bpf_get_smp_processor_id();
  o.source = (__u16)source;
  o.task_flags = s->preempter_flags;
  o.id = s->preempter_pid;
  o.tgid = s->preempter_tgid;
  __builtin_memcpy(o.name, s->preempter_comm, sizeof(o.name));
  keep_outlier(&o);
}

// `start`: the run's clock read if it is timed, else 0; the clock is read only where a preemption
// ends or starts without its wakeup's time (a watched CPU's other switches need none).
static __always_inline void switched(struct cpu_state* s, const struct jd_cpu_role* role, __u64 start,
                                     struct task_struct* prev, struct task_struct* next, unsigned int prev_state) {
  // No task switch happens inside an interrupt or a softirq (PREEMPT_RT's threaded softirqs
  // aside): a frame still open here lost its exit, so the stack starts afresh.
  if (s->depth != 0) {
    struct jd_cpu_counters* c = cpu_counters();
    if (c) c->unmatched_exits += 1;
    s->depth = 0;
  }
  __u64 woken_at = s->woken_at;  // a preempting wakeup is one switch's: this one's or none
  s->woken_at = 0;
  s->woken_depth = 0;
  __u32 next_tid = (__u32)next->pid;
  if (s->off_since && next_tid == s->off_tid) preemption_ended(s, clock_or(start), role->outlier_threshold_ns);
  if (prev_state != TASK_RUNNING) return;  // it sleeps: a voluntary switch
  __u32 prev_tid = (__u32)prev->pid;
  if (!is_application(s, prev_tid)) return;
  s->off_since = woken_at ? woken_at : clock_or(start);
  s->off_booked = woken_at ? s->woken_booked : s->booked;
  s->off_tid = prev_tid;
  s->preempter_pid = next_tid;
  s->preempter_tgid = (__u32)next->tgid;
  __u16 flags = 0;
  if (next->flags & PF_KTHREAD) flags |= JD_TASK_KERNEL_THREAD;
  if (next->nr_cpus_allowed == 1) flags |= JD_TASK_PER_CPU;
  if (is_application(s, next_tid)) flags |= JD_TASK_APPLICATION;
  s->preempter_flags = flags;
  // Typed pointer: two loads, not a probe-read helper call.
  const __u64* comm = (const __u64*)next->comm;
  __u64* into = (__u64*)s->preempter_comm;
  into[0] = comm[0];
  into[1] = comm[1];
}

// Whether the next switch on `t`'s CPU keeps the run queue's clock as the last wakeup read it.
static __always_inline bool clock_kept_for_switch(const struct task_struct* t) {
  if (!bpf_core_field_exists(((struct cfs_rq*)0)->rq)) return false;  // no group scheduling: not known
  const struct cfs_rq* cfs = t->se.cfs_rq;
  if (!cfs) return false;
  const struct rq* rq = cfs->rq;
  return rq && (rq->clock_update_flags & RQCF_REQ_SKIP);
}

// A wakeup on this CPU of a task that will preempt the application's running thread: the kernel
// has marked it for rescheduling before this tracepoint and asked that the run queue's clock, read
// for this wakeup, be kept for the switch that follows (RQCF_REQ_SKIP), so the thread's run-queue
// wait starts here. So does the preemption:
// the rest of the interrupt that woke the task and the path to the switch are the preemption's
// (frame_own ends the open frames here). The first such wakeup before a switch counts. A wakeup
// from another CPU runs there (and the IPI it sends is booked to its vector): that preemption
// starts at the switch.
SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct* p) {
  const struct jd_cpu_role* role = cpu_role();
  if (!role) {
    ran(JD_PROG_SCHED_WAKEUP);
    return 0;
  }
  __u64 start = timed_start(JD_PROG_SCHED_WAKEUP);  // the clock is read only for a preempting wakeup
  struct cpu_state* s = cpu_state();
  struct task_struct* current = bpf_get_current_task_btf();
  if (s && !s->woken_at && p->thread_info.cpu == bpf_get_smp_processor_id() && clock_kept_for_switch(current)) {
    if (is_application(s, (__u32)current->pid)) {
      s->woken_at = clock_or(start);
      s->woken_booked = s->booked;
      s->woken_depth = s->depth < JD_MAX_DEPTH ? s->depth : JD_MAX_DEPTH;
    }
  }
  ran_from(JD_PROG_SCHED_WAKEUP, start);
  return 0;
}

// tp_btf: the tasks are typed pointers the program reads directly (no probe-read helper call per
// field, which every switch on a watched CPU would pay).
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  const struct jd_cpu_role* role = cpu_role();
  if (!role) {
    ran(JD_PROG_SCHED_SWITCH);
    return 0;
  }
  __u64 start = timed_start(JD_PROG_SCHED_SWITCH);
  struct cpu_state* s = cpu_state();
  if (s) switched(s, role, start, prev, next, prev_state);
  ran_from(JD_PROG_SCHED_SWITCH, start);
  return 0;
}

#endif  // JITTERD_WATCH_SCHEDULER_BPF_H
