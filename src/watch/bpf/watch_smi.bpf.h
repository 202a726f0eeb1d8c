// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program, below the kernel: a watched CPU's System Management Interrupt counter
// (the perf msr PMU's smi event, which the loader opens for each watched CPU and puts in
// smi_events), and its APERF and MPERF counters where the PMU has them, read by that CPU itself,
// in its local timer interrupt, which runs there anyway.
// bpf_perf_event_read_value on the current CPU's own CPU-bound event reads it locally
// (perf_event_read_local: the PMU's read, an rdmsr), so no IPI is sent, unlike a read(2) of the
// counter from the loader's CPU; its time is the timer entry handler's, booked with it (in a KVM
// guest the rdmsr is a VM exit, so it is done at most every JD_SMI_READ_PERIOD_NS, 10 ms, not at
// every tick). Each read that finds the count grown records the interval since the read before
// (10 ms, or one tick where ticks are further apart), so the loader can tell which gaps an SMI may
// have made. A CPU whose tick has
// stopped (nohz_full) is read at its next timer interrupt.
// Runs in the kernel, on the watched CPU.
#ifndef JITTERD_WATCH_SMI_BPF_H
#define JITTERD_WATCH_SMI_BPF_H

#include "watch_smi_shared.h"
#include "watch_state.bpf.h"

// Set by the loader when it opened counters for the watched CPUs: elsewhere the handler returns
// after its role check. frequency_enabled: the APERF and MPERF counters too (aperf_events,
// mperf_events), read with the SMI counter.
const volatile __u32 smi_enabled = 0;
const volatile __u32 frequency_enabled = 0;

// One perf event array per counter, a slot per possible CPU (the loader sizes them).
#define JD_CPU_EVENTS(name)                      \
  struct {                                       \
    __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY); \
    __uint(key_size, sizeof(__u32));             \
    __uint(value_size, sizeof(__u32));           \
    __uint(max_entries, 1);                      \
  } name SEC(".maps")

JD_CPU_EVENTS(smi_events);
JD_CPU_EVENTS(aperf_events);
JD_CPU_EVENTS(mperf_events);

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct jd_smi_state);
} smi_states SEC(".maps");

// This CPU's APERF and MPERF, read back to back so that both cover the same time.
static __always_inline void read_cycles(struct jd_smi_state* st) {
  struct bpf_perf_event_value actual = {}, reference = {};
  if (bpf_perf_event_read_value(&aperf_events, BPF_F_CURRENT_CPU, &actual, sizeof(actual)) != 0 ||
      bpf_perf_event_read_value(&mperf_events, BPF_F_CURRENT_CPU, &reference, sizeof(reference)) != 0) {
    st->read_errors += 1;
    return;
  }
  struct jd_cycle_pair* pair = &st->cycles[(st->cycle_reads + 1) & 1];
  pair->actual = actual.counter;
  pair->reference = reference.counter;
  __sync_fetch_and_add(&st->cycle_reads, 1);  // ordered after the pair (see watch_smi_shared.h)
}

// This CPU's SMI count, and the interval since the last read where it grew.
static __always_inline void read_smis(struct jd_smi_state* st, __u64 now) {
  struct bpf_perf_event_value value = {};
  if (bpf_perf_event_read_value(&smi_events, BPF_F_CURRENT_CPU, &value, sizeof(value)) != 0) {
    st->read_errors += 1;
    return;
  }
  if (st->reads > 0 && value.counter > st->count) {
    __u64 w = st->windows_written;
    struct jd_smi_window* window = &st->windows[w & (JD_SMI_WINDOWS - 1)];
    window->from_ns = st->smi_read_ns;
    window->to_ns = now;
    window->smis = value.counter - st->count;
    st->windows_written = w + 1;  // after the window: the loader reads no half-written one as new
  }
  st->count = value.counter;
  st->smi_read_ns = now;
  st->reads += 1;
}

// Called by the local timer vector's entry handler (watch_interrupts.bpf.h JD_VECTOR) on a CPU
// with a role, at `now`: reads this CPU's counters where it is watched.
static __always_inline void read_smi_on_tick(const struct jd_cpu_role* role, __u64 now) {
  __u32 zero = 0;
  if ((!smi_enabled && !frequency_enabled) || role->role != JD_ROLE_WATCHED) return;
  struct jd_smi_state* st = bpf_map_lookup_elem(&smi_states, &zero);
  if (!st) return;
  if (st->last_read_ns > 0 && now - st->last_read_ns < JD_SMI_READ_PERIOD_NS) return;  // see watch_smi_shared.h
  if (frequency_enabled) read_cycles(st);
  if (smi_enabled) read_smis(st, now);
  st->last_read_ns = now;
}

#endif  // JITTERD_WATCH_SMI_BPF_H
