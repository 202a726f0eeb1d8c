// SPDX-License-Identifier: Apache-2.0
// The BPF program's sources of time (watch/bpf/watch_bpf.h enum jd_source), its handlers (enum
// jd_program) and timer:tick_stop's dependency bits, named as the kernel does, and each source's cause in attribution's vocabulary
// (host/attribution.h cause_names, "preempted" for the preemptions) and preempting task class.
#include <algorithm>
#include <array>
#include <string_view>

#include "host/attribution.h"
#include "host/softirqs.h"
#include "host/task_classes.h"
#include "watch/bpf_watch.h"
#include "watch_bpf.h"

namespace jitterd {
namespace {

// Each source's name and cause: a vector's from the table (host/x86_vectors.h JD_X86_VECTORS),
// named as its event; every other one here.
struct SourceWords {
  std::string_view name, cause;
};
constexpr std::array<SourceWords, JD_SOURCES> kSources = [] {
  std::array<SourceWords, JD_SOURCES> words{};
#define JD_VECTOR_SOURCE(event, stem, source, cause) words[source] = {#event, #cause};
  JD_X86_VECTORS(JD_VECTOR_SOURCE)
#undef JD_VECTOR_SOURCE
  words[JD_SRC_TLB] = {"tlb", "tlb"};
  words[JD_SRC_NMI] = {"nmi", "other_irq"};
  words[JD_SRC_DEVICE_IRQ] = {"device_irq", "device_irq"};
  std::size_t softirq = JD_SRC_SOFTIRQ_FIRST;
#define JD_SOFTIRQ_SOURCE(vector, cause) words[softirq++] = {"softirq_" #vector, #cause};
  JD_SOFTIRQS(JD_SOFTIRQ_SOURCE)
#undef JD_SOFTIRQ_SOURCE
  words[JD_SRC_PREEMPT_JITTERD] = {"preempt_jitterd", "preempted"};
  words[JD_SRC_PREEMPT_KERNEL_PERCPU] = {"preempt_kernel_percpu", "preempted"};
  words[JD_SRC_PREEMPT_APPLICATION] = {"preempt_application", "preempted"};
  words[JD_SRC_PREEMPT_STRAY] = {"preempt_stray", "preempted"};
  return words;
}();

static_assert(std::none_of(kSources.begin(), kSources.end(), [](const SourceWords& w) { return w.name.empty(); }),
              "a name for every source (a cause: tests/unit/watch_bpf_test.cpp)");

// As the BPF programs are named (watch.bpf.c), in enum jd_program order.
#define JD_VECTOR_PROGRAM_NAMES(event, stem, source, cause) #event "_entry", #event "_exit",
constexpr std::array<std::string_view, JD_PROGRAMS> kProgramNames = {
    "irq_entry",
    "irq_exit",
    "softirq_entry",
    "softirq_exit",
    JD_X86_VECTORS(JD_VECTOR_PROGRAM_NAMES) "tlb_flush",
    "nmi_handler",
    "ipi_send_cpu",
    "ipi_send_cpumask",
    "tick_stop",
    "sched_switch",
    "sched_wakeup",
    "hrtimer_start",
    "timer_start"};
#undef JD_VECTOR_PROGRAM_NAMES

static_assert(!kProgramNames.back().empty(), "a name for every program");

constexpr std::array<std::string_view, JD_TICK_DEPENDENCIES> kTickDependencies = {
    "POSIX_TIMER", "PERF_EVENTS", "SCHED", "CLOCK_UNSTABLE", "RCU", "RCU_EXP", "bit6", "bit7"};

}  // namespace

std::size_t watch_source_count() { return JD_SOURCES; }
std::string_view watch_source_name(std::size_t source) {
  return source < JD_SOURCES ? kSources[source].name : "?";
}
std::string_view watch_source_cause(std::size_t source) {
  return source < JD_SOURCES ? kSources[source].cause : "?";
}
std::string_view watch_source_task_class(std::size_t source) {
  switch (source) {
    case JD_SRC_PREEMPT_JITTERD:
      return to_string(TaskClass::jitterd);
    case JD_SRC_PREEMPT_KERNEL_PERCPU:
      return to_string(TaskClass::kernel_percpu);
    case JD_SRC_PREEMPT_APPLICATION:
      return to_string(TaskClass::application);
    case JD_SRC_PREEMPT_STRAY:
      return to_string(TaskClass::stray);
    default:
      return "";
  }
}
std::size_t bpf_program_count() { return JD_PROGRAMS; }
std::string_view bpf_program_name(std::size_t program) {
  return program < JD_PROGRAMS ? kProgramNames[program] : "?";
}
bool bpf_program_timed(std::size_t program) {
  return program < JD_PROGRAMS && program != JD_PROG_IPI_SEND_CPU && program != JD_PROG_IPI_SEND_CPUMASK &&
         program != JD_PROG_HRTIMER_START && program != JD_PROG_TIMER_START;
}
std::string_view tick_dependency_name(std::size_t bit) {
  return bit < kTickDependencies.size() ? kTickDependencies[bit] : "?";
}

}  // namespace jitterd
