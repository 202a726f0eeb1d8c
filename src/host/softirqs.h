// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The kernel's softirq vectors, the one list of them, in vector order (include/linux/interrupt.h;
// the names the softirq_entry format prints): per vector its name and its cause (host/attribution.h
// cause_names). Expanded by attribution.cpp (cause_of), trace_format.cpp (the attribution probe's
// tracepoints), watch_sources.cpp (the watch's source names) and the BPF program's enum jd_source
// (JD_SOFTIRQ_COUNT of them); vector_table fails on a second list. Preprocessor only, for the BPF
// program (clang -target bpf) and C++.
#ifndef JITTERD_HOST_SOFTIRQS_H
#define JITTERD_HOST_SOFTIRQS_H

#define JD_SOFTIRQS(X)       \
  X(HI, softirq_other)       \
  X(TIMER, timer)            \
  X(NET_TX, softirq_net)     \
  X(NET_RX, softirq_net)     \
  X(BLOCK, softirq_other)    \
  X(IRQ_POLL, softirq_other) \
  X(TASKLET, softirq_other)  \
  X(SCHED, softirq_other)    \
  X(HRTIMER, timer)          \
  X(RCU, softirq_rcu)

#define JD_SOFTIRQ_ONE(name, cause) +1
#define JD_SOFTIRQ_COUNT (0 JD_SOFTIRQS(JD_SOFTIRQ_ONE))

#endif
