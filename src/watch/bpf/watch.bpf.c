// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program: what the kernel takes from the watched CPUs, measured in the kernel
// without running anything of jitterd's there. Raw tracepoints (CAP_BPF and CAP_PERFMON; no
// tracefs, no perf_event_paranoid) pair each interruption's entry and exit on its own CPU: hard
// IRQs (irq_handler_*), the x86 APIC vectors (irq_vectors: the local timer and the IPIs, which
// are no irq_handler events there), softirqs, NMIs (nmi_handler gives its own length), and the
// application's preemptions (sched_switch away from one of its threads while it was runnable,
// back to it; started at the preempting task's wakeup on that CPU where the kernel's run-queue
// wait starts there too). Nested time counts once, as the innermost's: a frame's own time is its wall time
// less what was booked on that CPU while it ran. Per CPU and source it keeps the count, the
// time, the longest and a log2 histogram in per-CPU maps the loader reads once a window (a read
// of a per-CPU map copies memory; it sends the CPU nothing); each interruption at or above the
// outlier threshold goes to a ring with BPF_RB_NO_WAKEUP, so no irq_work wakes a reader on the
// watched CPU. timer:tick_stop failures count by dependency.
//
// On a CPU with no role every handler looks that CPU's role up (a per-CPU array, inlined by the
// verifier), counts its run and returns; the IPI senders, which run on the sending CPU, check the
// target's role first. Where it works, a handler also times one run in 16 (a clock read costs
// about as much as the rest of a handler in a KVM guest) and books it 16 times over: the loader
// exports both, as turning the kernel's bpf_stats on or off would send every
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
//
// The program is one compilation unit, so one object and one skeleton (cmake/jitterd_bpf.cmake),
// in parts by what they handle, each including the shared state (watch_state.bpf.h: the maps, the
// per-CPU state and the steps every handler shares):
//   watch_interrupts.bpf.h   hard IRQs, APIC vectors, softirqs, TLB shootdowns, NMIs
//   watch_ipi_senders.bpf.h  the IPIs sent to a watched CPU, by sender
//   watch_scheduler.bpf.h    the application's preemptions, the tick that would not stop
//   watch_smi.bpf.h          the watched CPUs' SMI counters, read in their own timer interrupt
//   watch_timers.bpf.h       the timers started on the watched CPUs, by function: who re-arms the tick
//                            (included by watch_interrupts.bpf.h, whose local timer entry reads them)
#include "watch_state.bpf.h"

#include "watch_interrupts.bpf.h"
#include "watch_ipi_senders.bpf.h"
#include "watch_scheduler.bpf.h"
#include "watch_timers.bpf.h"

char LICENSE[] SEC("license") = "GPL";
