// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The x86 APIC vectors, the one list of them, in host/ so that both engines (the BPF program and
// the tracepoints engine) can expand it: per vector its kernel event (tracepoints irq_vectors:NAME_entry and _exit, and the BPF
// handlers of those names), its handlers' jd_program stem, the watch's source (an enumerator of
// watch/bpf/watch_bpf.h enum jd_source, a bare name until watch/ expands it) and its cause
// (host/attribution.h cause_names). Expanded by the BPF program (watch/bpf/), watch_sources.cpp
// and trace_watch.cpp; vector_table fails on a second list. Preprocessor only, for the BPF program (clang -target bpf) and C++.
#ifndef JITTERD_HOST_X86_VECTORS_H
#define JITTERD_HOST_X86_VECTORS_H

#define JD_X86_VECTORS(X)                                                              \
  X(local_timer, LOCAL_TIMER, JD_SRC_LOCAL_TIMER, timer)                               \
  X(reschedule, RESCHEDULE, JD_SRC_RESCHEDULE, ipi_resched)                            \
  X(call_function, CALL_FUNCTION, JD_SRC_CALL_FUNCTION, ipi_call)                      \
  X(call_function_single, CALL_FUNCTION_SINGLE, JD_SRC_CALL_FUNCTION_SINGLE, ipi_call) \
  X(irq_work, IRQ_WORK, JD_SRC_IRQ_WORK, other_irq)                                    \
  X(x86_platform_ipi, X86_PLATFORM_IPI, JD_SRC_PLATFORM_IPI, other_irq)                \
  X(thermal_apic, THERMAL_APIC, JD_SRC_THERMAL_APIC, other_irq)                        \
  X(threshold_apic, THRESHOLD_APIC, JD_SRC_THRESHOLD_APIC, other_irq)                  \
  X(deferred_error_apic, DEFERRED_ERROR_APIC, JD_SRC_DEFERRED_ERROR_APIC, other_irq)   \
  X(spurious_apic, SPURIOUS_APIC, JD_SRC_SPURIOUS_APIC, other_irq)                     \
  X(error_apic, ERROR_APIC, JD_SRC_ERROR_APIC, other_irq)

#endif
