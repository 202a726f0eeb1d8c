// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The watch's BPF program, the IPI senders: who sent an IPI to a watched CPU, counted by the
// sending task's name. These programs run on the sending CPU, whatever its role, and filter first
// on the target's (ipi:ipi_send_cpu, ipi:ipi_send_cpumask; newer kernels).
#ifndef JITTERD_WATCH_IPI_SENDERS_BPF_H
#define JITTERD_WATCH_IPI_SENDERS_BPF_H

#include "watch_state.bpf.h"

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

#endif  // JITTERD_WATCH_IPI_SENDERS_BPF_H
