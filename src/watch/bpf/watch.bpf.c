// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program: what the kernel takes from the watched CPUs, measured in the kernel
// without running anything of jitterd's there. Raw tracepoints (CAP_BPF and CAP_PERFMON; no
// tracefs, no perf_event_paranoid) pair each interruption's entry and exit on its own CPU: hard
// IRQs (irq_handler_*), the x86 APIC vectors (irq_vectors: the local timer and the IPIs, which
// are no irq_handler events there), softirqs, NMIs (nmi_handler gives its own length), and the
// application's preemptions (sched_switch away from one of its threads while it was runnable,
// back to it). Nested time counts once, as the innermost's: a frame's own time is its wall time
// less what was booked on that CPU while it ran. Per CPU and source it keeps the count, the
// time, the longest and a log2 histogram in per-CPU maps the loader reads once a window (a read
// of a per-CPU map copies memory; it sends the CPU nothing); each interruption at or above the
// outlier threshold goes to a ring with BPF_RB_NO_WAKEUP, so no irq_work wakes a reader on the
// watched CPU. timer:tick_stop failures count by dependency.
//
// On a CPU with no role every handler looks that CPU's role up (a per-CPU array, inlined by the
// verifier), counts its run and returns; the IPI senders, which run on the sending CPU, check the
// target's role first. Where it works, a handler also books its own time (first clock read to
// last): the loader exports both, as turning the kernel's bpf_stats on or off would send every
// CPU IPIs.
//
// The same program covers the sampled CPUs for attribution (role JD_ROLE_SAMPLED): there the
// thread whose preemptions count is the sampler, and the outliers, down to a fraction of the
// sampler's threshold, let the attribution probe name what made each of the sampler's gaps in
// the vocabulary the watched CPUs use.
//
// Dual-licensed: the kernel lets only GPL-compatible programs call the tracing helpers, and its
// list of accepted licence strings has no Apache pairing, so the program declares "GPL" below;
// the file may be used under either licence (the rest of jitterd is Apache-2.0 only).
#include <linux/bpf.h>
#include <linux/types.h>
#include <stdbool.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "watch_bpf.h"

char LICENSE[] SEC("license") = "GPL";

// The kernel's types, only the fields read here; CO-RE relocates each to this kernel's offset.
struct task_struct {
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

struct cpu_state {
  __u64 booked;  // every nanosecond booked to a source on this CPU: frames' own time and NMIs
  __u32 depth;
  __u32 off_tid;  // the application's thread preempted, while off_since is set
  struct frame stack[JD_MAX_DEPTH];
  __u64 off_since;  // when the application's thread was switched out while runnable; 0: not
  __u64 off_booked;
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

// A run on a CPU with a role, timed from `start` (the handler's first clock read).
static __always_inline void ran_since(__u32 program, __u64 start) {
  struct jd_program_cost* c = bpf_map_lookup_elem(&costs, &program);
  if (!c) return;
  c->runs += 1;
  c->ns += bpf_ktime_get_ns() - start;
}

static __always_inline struct cpu_state* cpu_state(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&states, &zero);
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
  __u64 wall = now - f->start;
  __u64 nested = s->booked - f->booked_at_entry;
  __u64 own = wall > nested ? wall - nested : 0;
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
  o.end_ns = now;
  o.duration_ns = own;
  o.cpu = cpu;
  o.source = (__u16)f->source;
  o.id = f->id;
  if (action) bpf_probe_read_kernel_str(o.name, sizeof(o.name), BPF_CORE_READ(action, name));
  keep_outlier(&o);
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

// The x86 APIC vectors: one entry and one exit program each, the vector number as the id.
#define JD_VECTOR(event, source, program)   \
  SEC("raw_tp/" #event "_entry")            \
  int BPF_PROG(event##_entry, int vector) { \
    JD_ROLE_OR_RETURN(program);             \
    enter(now, source, (__u32)vector);      \
    ran_since(program, now);                \
    return 0;                               \
  }                                         \
  SEC("raw_tp/" #event "_exit")             \
  int BPF_PROG(event##_exit, int vector) {  \
    JD_ROLE_OR_RETURN(program + 1);         \
    leave(role, now, source, 0);            \
    ran_since(program + 1, now);            \
    return 0;                               \
  }

JD_VECTOR(local_timer, JD_SRC_LOCAL_TIMER, JD_PROG_LOCAL_TIMER_ENTRY)
JD_VECTOR(reschedule, JD_SRC_RESCHEDULE, JD_PROG_RESCHEDULE_ENTRY)
JD_VECTOR(call_function, JD_SRC_CALL_FUNCTION, JD_PROG_CALL_FUNCTION_ENTRY)
JD_VECTOR(call_function_single, JD_SRC_CALL_FUNCTION_SINGLE, JD_PROG_CALL_FUNCTION_SINGLE_ENTRY)
JD_VECTOR(irq_work, JD_SRC_IRQ_WORK, JD_PROG_IRQ_WORK_ENTRY)
JD_VECTOR(x86_platform_ipi, JD_SRC_PLATFORM_IPI, JD_PROG_X86_PLATFORM_IPI_ENTRY)
JD_VECTOR(thermal_apic, JD_SRC_THERMAL_APIC, JD_PROG_THERMAL_APIC_ENTRY)
JD_VECTOR(threshold_apic, JD_SRC_THRESHOLD_APIC, JD_PROG_THRESHOLD_APIC_ENTRY)
JD_VECTOR(deferred_error_apic, JD_SRC_DEFERRED_ERROR_APIC, JD_PROG_DEFERRED_ERROR_APIC_ENTRY)
JD_VECTOR(spurious_apic, JD_SRC_SPURIOUS_APIC, JD_PROG_SPURIOUS_APIC_ENTRY)
JD_VECTOR(error_apic, JD_SRC_ERROR_APIC, JD_PROG_ERROR_APIC_ENTRY)

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

// An IPI sent to a watched CPU, counted by the sending task (the sender runs elsewhere: this
// program runs on the sending CPU and looks the target up in watched_list).
static __always_inline void count_ipi_sender(__u32 cpu) {
  struct jd_ipi_sender_key key = {};
  key.cpu = cpu;
  bpf_get_current_comm(&key.comm, sizeof(key.comm));
  __u64* n = bpf_map_lookup_elem(&ipi_senders, &key);
  if (!n) {
    __u64 zero = 0;
    bpf_map_update_elem(&ipi_senders, &key, &zero, BPF_NOEXIST);
    n = bpf_map_lookup_elem(&ipi_senders, &key);
  }
  if (n) {
    __sync_fetch_and_add(n, 1);
    return;
  }
  struct jd_cpu_counters* c = cpu_counters();  // the sending CPU's slot: the loader sums every CPU's
  if (c) c->ipi_senders_untracked += 1;
}

// The IPI senders run on the sending CPU, whatever its role: they filter first on the target's.
// One CPU: its slot of the roles array. Not timed (no clock read on a CPU that may have no role);
// the runs count.
SEC("raw_tp/ipi_send_cpu")
int BPF_PROG(ipi_send_cpu, unsigned int cpu, unsigned long callsite, void* callback) {
  ran(JD_PROG_IPI_SEND_CPU);
  __u32 zero = 0;
  const struct jd_cpu_role* target = bpf_map_lookup_percpu_elem(&roles, &zero, cpu);
  if (target && target->role == JD_ROLE_WATCHED) count_ipi_sender(cpu);
  return 0;
}

// A CPU mask: its words that can hold a watched CPU, against the watched CPUs' bits, first.
static __always_inline bool mask_has_watched(const struct cpumask* mask) {
  unsigned long any = 0;
  for (__u32 w = 0; w < JD_MAX_WATCHED / 64 && w < watched_words; ++w) {
    unsigned long word = 0;
    if (bpf_probe_read_kernel(&word, sizeof(word), (const char*)mask + w * sizeof(word)) != 0) continue;
    any |= word & watched_bits[w];
  }
  return any != 0;
}

SEC("raw_tp/ipi_send_cpumask")
int BPF_PROG(ipi_send_cpumask, struct cpumask* mask, unsigned long callsite, void* callback) {
  ran(JD_PROG_IPI_SEND_CPUMASK);
  if (!mask_has_watched(mask)) return 0;
  for (__u32 i = 0; i < JD_MAX_WATCHED && i < watched_count; ++i) {
    __u32 key = i;
    __u32* cpu = bpf_map_lookup_elem(&watched_list, &key);
    if (!cpu) break;
    unsigned long word = 0;
    if (bpf_probe_read_kernel(&word, sizeof(word), (const char*)mask + (*cpu / 64) * sizeof(word)) != 0) continue;
    if (word & (1UL << (*cpu % 64))) count_ipi_sender(*cpu);
  }
  return 0;
}

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

static __always_inline void switched(struct cpu_state* s, const struct jd_cpu_role* role, __u64 now,
                                     struct task_struct* prev, struct task_struct* next, unsigned int prev_state) {
  // No task switch happens inside an interrupt or a softirq (PREEMPT_RT's threaded softirqs
  // aside): a frame still open here lost its exit, so the stack starts afresh.
  if (s->depth != 0) {
    struct jd_cpu_counters* c = cpu_counters();
    if (c) c->unmatched_exits += 1;
    s->depth = 0;
  }
  __u32 next_tid = (__u32)next->pid;
  if (s->off_since && next_tid == s->off_tid) preemption_ended(s, now, role->outlier_threshold_ns);
  if (prev_state != TASK_RUNNING) return;  // it sleeps: a voluntary switch
  __u32 prev_tid = (__u32)prev->pid;
  if (!bpf_map_lookup_elem(&application, &prev_tid)) return;
  s->off_since = now;
  s->off_booked = s->booked;
  s->off_tid = prev_tid;
  s->preempter_pid = next_tid;
  s->preempter_tgid = (__u32)next->tgid;
  __u16 flags = 0;
  if (next->flags & PF_KTHREAD) flags |= JD_TASK_KERNEL_THREAD;
  if (next->nr_cpus_allowed == 1) flags |= JD_TASK_PER_CPU;
  if (bpf_map_lookup_elem(&application, &next_tid)) flags |= JD_TASK_APPLICATION;
  s->preempter_flags = flags;
  BPF_CORE_READ_STR_INTO(&s->preempter_comm, next, comm);
}

// tp_btf: the tasks are typed pointers the program reads directly (no probe-read helper call per
// field, which every switch on a watched CPU would pay).
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  JD_ROLE_OR_RETURN(JD_PROG_SCHED_SWITCH);
  struct cpu_state* s = cpu_state();
  if (s) switched(s, role, now, prev, next, prev_state);
  ran_since(JD_PROG_SCHED_SWITCH, now);
  return 0;
}
