// SPDX-License-Identifier: Apache-2.0
// The BPF program's sources of time (watch/bpf/watch_bpf.h enum jd_source), its handlers (enum
// jd_program) and timer:tick_stop's dependency bits, named as the kernel does, and each source's cause in attribution's vocabulary
// (host/attribution.h cause_names, "preempted" for the preemptions) and preempting task class.
#include <array>
#include <string_view>

#include "watch/bpf_watch.h"
#include "watch_bpf.h"

namespace jitterd {
namespace {

constexpr std::array<std::string_view, JD_SOURCES> kSourceNames = {"local_timer",
                                                                   "reschedule",
                                                                   "call_function",
                                                                   "call_function_single",
                                                                   "tlb",
                                                                   "irq_work",
                                                                   "x86_platform_ipi",
                                                                   "thermal_apic",
                                                                   "threshold_apic",
                                                                   "deferred_error_apic",
                                                                   "spurious_apic",
                                                                   "error_apic",
                                                                   "nmi",
                                                                   "device_irq",
                                                                   "softirq_HI",
                                                                   "softirq_TIMER",
                                                                   "softirq_NET_TX",
                                                                   "softirq_NET_RX",
                                                                   "softirq_BLOCK",
                                                                   "softirq_IRQ_POLL",
                                                                   "softirq_TASKLET",
                                                                   "softirq_SCHED",
                                                                   "softirq_HRTIMER",
                                                                   "softirq_RCU",
                                                                   "preempt_jitterd",
                                                                   "preempt_kernel_percpu",
                                                                   "preempt_application",
                                                                   "preempt_stray"};

static_assert(!kSourceNames.back().empty(), "a name for every source");

constexpr std::array<std::string_view, JD_SOURCES> kSourceCauses = {
    "timer",         "ipi_resched",   "ipi_call",      "ipi_call",      "tlb",         "other_irq",
    "other_irq",     "other_irq",     "other_irq",     "other_irq",     "other_irq",   "other_irq",
    "other_irq",     "device_irq",    "softirq_other", "timer",         "softirq_net", "softirq_net",
    "softirq_other", "softirq_other", "softirq_other", "softirq_other", "timer",       "softirq_rcu",
    "preempted",     "preempted",     "preempted",     "preempted"};

static_assert(!kSourceCauses.back().empty(), "a cause for every source");

// As the BPF programs are named (watch.bpf.c), in enum jd_program order.
constexpr std::array<std::string_view, JD_PROGRAMS> kProgramNames = {"irq_entry",
                                                                     "irq_exit",
                                                                     "softirq_entry",
                                                                     "softirq_exit",
                                                                     "local_timer_entry",
                                                                     "local_timer_exit",
                                                                     "reschedule_entry",
                                                                     "reschedule_exit",
                                                                     "call_function_entry",
                                                                     "call_function_exit",
                                                                     "call_function_single_entry",
                                                                     "call_function_single_exit",
                                                                     "irq_work_entry",
                                                                     "irq_work_exit",
                                                                     "x86_platform_ipi_entry",
                                                                     "x86_platform_ipi_exit",
                                                                     "thermal_apic_entry",
                                                                     "thermal_apic_exit",
                                                                     "threshold_apic_entry",
                                                                     "threshold_apic_exit",
                                                                     "deferred_error_apic_entry",
                                                                     "deferred_error_apic_exit",
                                                                     "spurious_apic_entry",
                                                                     "spurious_apic_exit",
                                                                     "error_apic_entry",
                                                                     "error_apic_exit",
                                                                     "tlb_flush",
                                                                     "nmi_handler",
                                                                     "ipi_send_cpu",
                                                                     "ipi_send_cpumask",
                                                                     "tick_stop",
                                                                     "sched_switch",
                                                                     "sched_wakeup"};

static_assert(!kProgramNames.back().empty(), "a name for every program");

constexpr std::array<std::string_view, JD_TICK_DEPENDENCIES> kTickDependencies = {
    "POSIX_TIMER", "PERF_EVENTS", "SCHED", "CLOCK_UNSTABLE", "RCU", "RCU_EXP", "bit6", "bit7"};

}  // namespace

std::size_t watch_source_count() { return JD_SOURCES; }
std::string_view watch_source_name(std::size_t source) { return source < JD_SOURCES ? kSourceNames[source] : "?"; }
std::string_view watch_source_cause(std::size_t source) {
  return source < JD_SOURCES ? kSourceCauses[source] : "?";
}
std::string_view watch_source_task_class(std::size_t source) {
  switch (source) {
    case JD_SRC_PREEMPT_JITTERD:
      return "jitterd";
    case JD_SRC_PREEMPT_KERNEL_PERCPU:
      return "kernel_percpu";
    case JD_SRC_PREEMPT_APPLICATION:
      return "application";
    case JD_SRC_PREEMPT_STRAY:
      return "stray";
    default:
      return "";
  }
}
std::size_t bpf_program_count() { return JD_PROGRAMS; }
std::string_view bpf_program_name(std::size_t program) {
  return program < JD_PROGRAMS ? kProgramNames[program] : "?";
}
bool bpf_program_timed(std::size_t program) {
  return program < JD_PROGRAMS && program != JD_PROG_IPI_SEND_CPU && program != JD_PROG_IPI_SEND_CPUMASK;
}
std::string_view tick_dependency_name(std::size_t bit) {
  return bit < kTickDependencies.size() ? kTickDependencies[bit] : "?";
}

}  // namespace jitterd
