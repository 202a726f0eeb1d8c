// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program, the interruptions on the CPU itself: hard IRQs (irq_handler_*), the
// x86 APIC vectors (irq_vectors: the local timer and the IPIs, which are no irq_handler events
// there), softirqs, a call-function IPI that is a TLB shootdown, and NMIs. Each entry pushes a
// frame on the CPU's stack and its exit pops it; nested time counts once, as the innermost's (a
// frame's own time is its wall time less what was booked on that CPU while it ran).
// Runs in the kernel, on the interrupted CPU.
#ifndef JITTERD_WATCH_INTERRUPTS_BPF_H
#define JITTERD_WATCH_INTERRUPTS_BPF_H

#include "watch_smi.bpf.h"
#include "watch_state.bpf.h"

static __always_inline void enter(__u64 now, __u32 source, __u32 id) {
  struct cpu_state* s = cpu_state();
  if (!s) return;
  __u32 d = s->depth;
  s->depth = d + 1;
  if (d >= JD_MAX_DEPTH) {
    struct jd_cpu_counters* c = cpu_counters();
    if (c) c->too_deep += 1;
    return;
  }
  struct frame* f = &s->stack[d & (JD_MAX_DEPTH - 1)];
  f->start = now;
  f->booked_at_entry = s->booked;
  f->source = source;
  f->entry_source = source;
  f->id = id;
}

// A closing frame's own time: its wall time less what was booked on this CPU meanwhile. A frame
// that was open when a wakeup began a preemption of the application (sched_wakeup) ends, for its
// source, at that wakeup: what follows is the preemption's (the kernel counts it in the
// application's run-queue wait), and counted once. `end` is set to where it ended.
static __always_inline __u64 frame_own(struct cpu_state* s, const struct frame* f, __u32 d, __u64* end) {
  __u64 booked = s->booked;
  bool cut = d < s->woken_depth;
  if (cut) {
    s->woken_depth = d;  // the frames inside it have closed; one opened at this depth later was not open then
    *end = s->woken_at;
    booked = s->woken_booked;
  }
  __u64 wall = *end > f->start ? *end - f->start : 0;
  __u64 nested = booked - f->booked_at_entry;
  __u64 own = wall > nested ? wall - nested : 0;
  if (cut) s->woken_booked += own;  // before the preemption: not to be taken out of it
  return own;
}

static __always_inline void leave(const struct jd_cpu_role* role, __u64 now, __u32 source,
                                  const struct irqaction* action) {
  struct cpu_state* s = cpu_state();
  if (!s) return;
  __u32 d = s->depth;
  if (d == 0) {
    struct jd_cpu_counters* c = cpu_counters();
    if (c) c->unmatched_exits += 1;
    return;
  }
  d -= 1;
  s->depth = d;
  if (d >= JD_MAX_DEPTH) return;  // a frame too deep to have been kept
  struct frame* f = &s->stack[d & (JD_MAX_DEPTH - 1)];
  if (f->entry_source != source) {  // an entry missed (attached mid-interrupt): start afresh
    s->depth = 0;
    struct jd_cpu_counters* c = cpu_counters();
    if (c) c->unmatched_exits += 1;
    return;
  }
  __u64 end = now;
  __u64 own = frame_own(s, f, d, &end);
  __sync_fetch_and_add(&s->booked, own);
  book(f->source, own);
  __u32 cpu = bpf_get_smp_processor_id();
  if (source == JD_SRC_DEVICE_IRQ) {
    struct jd_irq_key key = {.cpu = cpu, .irq = f->id};
    struct jd_irq_figures* irq = bpf_map_lookup_elem(&irqs, &key);
    if (!irq) {
      struct jd_irq_figures zero = {};
      bpf_map_update_elem(&irqs, &key, &zero, BPF_NOEXIST);
      irq = bpf_map_lookup_elem(&irqs, &key);
    }
    if (irq) {
      irq->count += 1;
      irq->ns += own;
      if (own > irq->max_ns) irq->max_ns = own;
    }
  }
  if (own < role->outlier_threshold_ns) return;
  struct jd_outlier o = {};
  o.start_ns = f->start;
  o.end_ns = end;
  o.duration_ns = own;
  o.cpu = cpu;
  o.source = (__u16)f->source;
  o.id = f->id;
  if (action) bpf_probe_read_kernel_str(o.name, sizeof(o.name), BPF_CORE_READ(action, name));
  keep_outlier(&o);
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(irq_entry, int irq, struct irqaction* action) {
  JD_ROLE_OR_RETURN(JD_PROG_IRQ_ENTRY);
  enter(now, JD_SRC_DEVICE_IRQ, (__u32)irq);
  ran_since(JD_PROG_IRQ_ENTRY, now);
  return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(irq_exit, int irq, struct irqaction* action, int ret) {
  JD_ROLE_OR_RETURN(JD_PROG_IRQ_EXIT);
  leave(role, now, JD_SRC_DEVICE_IRQ, action);
  ran_since(JD_PROG_IRQ_EXIT, now);
  return 0;
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(softirq_entry, unsigned int vec) {
  JD_ROLE_OR_RETURN(JD_PROG_SOFTIRQ_ENTRY);
  if (vec <= JD_SRC_SOFTIRQ_LAST - JD_SRC_SOFTIRQ_FIRST) enter(now, JD_SRC_SOFTIRQ_FIRST + vec, vec);
  ran_since(JD_PROG_SOFTIRQ_ENTRY, now);
  return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec) {
  JD_ROLE_OR_RETURN(JD_PROG_SOFTIRQ_EXIT);
  if (vec <= JD_SRC_SOFTIRQ_LAST - JD_SRC_SOFTIRQ_FIRST) leave(role, now, JD_SRC_SOFTIRQ_FIRST + vec, 0);
  ran_since(JD_PROG_SOFTIRQ_EXIT, now);
  return 0;
}

// The x86 APIC vectors (host/x86_vectors.h JD_X86_VECTORS): one entry and one exit program each, the
// vector number as the id.
#define JD_VECTOR(event, stem, source, cause)                        \
  SEC("raw_tp/" #event "_entry")                                     \
  int BPF_PROG(event##_entry, int vector) {                          \
    JD_ROLE_OR_RETURN(JD_PROG_##stem##_ENTRY);                       \
    enter(now, source, (__u32)vector);                               \
    if ((source) == JD_SRC_LOCAL_TIMER) read_smi_on_tick(role, now); \
    ran_since(JD_PROG_##stem##_ENTRY, now);                          \
    return 0;                                                        \
  }                                                                  \
  SEC("raw_tp/" #event "_exit")                                      \
  int BPF_PROG(event##_exit, int vector) {                           \
    JD_ROLE_OR_RETURN(JD_PROG_##stem##_EXIT);                        \
    leave(role, now, source, 0);                                     \
    ran_since(JD_PROG_##stem##_EXIT, now);                           \
    return 0;                                                        \
  }

JD_X86_VECTORS(JD_VECTOR)

// A call-function IPI that flushes this CPU's TLB for another CPU is a TLB shootdown.
SEC("raw_tp/tlb_flush")
int BPF_PROG(tlb_flush, int reason, unsigned long pages) {
  JD_ROLE_OR_RETURN(JD_PROG_TLB_FLUSH);
  struct cpu_state* s = cpu_state();
  if (reason == TLB_REMOTE_SHOOTDOWN && s && s->depth != 0 && s->depth <= JD_MAX_DEPTH) {
    struct frame* f = &s->stack[(s->depth - 1) & (JD_MAX_DEPTH - 1)];
    if (f->source == JD_SRC_CALL_FUNCTION || f->source == JD_SRC_CALL_FUNCTION_SINGLE) f->source = JD_SRC_TLB;
  }
  ran_since(JD_PROG_TLB_FLUSH, now);
  return 0;
}

// The NMI handler's own length; an NMI inside a frame is taken out of that frame's time.
SEC("raw_tp/nmi_handler")
int BPF_PROG(nmi_handler, void* handler, __s64 delta_ns, int handled) {
  JD_ROLE_OR_RETURN(JD_PROG_NMI_HANDLER);
  struct cpu_state* s = cpu_state();
  if (delta_ns > 0 && s) {
    __sync_fetch_and_add(&s->booked, (__u64)delta_ns);
    book(JD_SRC_NMI, (__u64)delta_ns);
  }
  ran_since(JD_PROG_NMI_HANDLER, now);
  return 0;
}

#endif  // JITTERD_WATCH_INTERRUPTS_BPF_H
