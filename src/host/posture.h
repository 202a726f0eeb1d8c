// SPDX-License-Identifier: Apache-2.0
// The machine's isolation posture and fingerprint: what the kernel command line asked for
// (isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity=, C-state limits, ...), what the kernel
// actually did (isolated and tickless CPUs, SMT, governors, idle states, clocksource,
// transparent hugepages, key sysctls, the workqueue mask, each IRQ's affinity), and the facts
// whose change explains a change in jitter (kernel, cmdline, microcode, BIOS, CPU model). The
// posture report, the expected-vs-actual checks and the _info metrics are built from it. It only
// reads, through a HostReader, so tests use fixture trees. The parse functions are pure;
// read_posture never throws and turns every missing or unparsable file into one line in
// `problems`. Call it from a housekeeping thread (it reads hundreds of files); the result is a
// plain value, safe to share read-only with any thread once built.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/clock_info.h"
#include "host/host_reader.h"
#include "host/interrupt_counts.h"
#include "host/isolation_sources.h"
#include "host/posture_parse.h"
#include "host/tasks.h"

namespace jitterd {

// ---- the posture ----

struct SmtState {
  std::optional<std::string> control;               // smt/control: "on", "off", "forceoff", ...
  std::optional<bool> active;                       // smt/active
  std::map<int, std::vector<int>> thread_siblings;  // online CPU -> its core's CPUs, itself too
};

struct CpuFreq {  // devices/system/cpu/cpuN/cpufreq; frequencies in kHz as the kernel writes them
  int cpu = 0;
  std::optional<std::string> governor;
  std::optional<long long> min_khz, max_khz, cur_khz;
};

struct IdleState {  // devices/system/cpu/cpuN/cpuidle/stateK
  int index = 0;
  std::string name;                          // "POLL", "C1", "C6", ...
  std::optional<long long> exit_latency_us;  // the "latency" file
  bool enabled = true;                       // "disable" is 0
};

struct CpuIdle {
  int cpu = 0;
  std::vector<IdleState> states;  // by index
};

struct TransparentHugepages {
  std::optional<std::string> enabled, defrag;  // the selected words, e.g. "never"
};

struct Sysctls {  // /proc/sys values, trimmed
  std::optional<std::string> nmi_watchdog, timer_migration, stat_interval, sched_rt_runtime_us, watchdog_cpumask;
};

// Whether the kernel manages an IRQ's affinity (IRQD_AFFINITY_MANAGED: multi-queue devices spread
// one queue per CPU; user space cannot move it, and the kernel shuts it down with its CPU), and
// how that was learned.
enum class IrqManagement {
  unmanaged,        // debugfs says so, or the heuristic below does not match
  managed,          // debugfs irq/irqs/N lists a MANAGED flag
  managed_by_name,  // debugfs unreadable; an NVMe I/O queue (nvmeXqY, Y > 0) bound to one CPU
};

struct IrqAffinity {
  int irq = 0;
  std::string name;        // from /proc/interrupts; "" if not listed there
  std::vector<int> cpus;   // sorted
  bool effective = false;  // true: effective_affinity_list; false: smp_affinity_list (requested)
  IrqManagement management = IrqManagement::unmanaged;
};

// Managed per the debugfs text of irq/irqs/N when given (a line containing "MANAGED", e.g.
// IRQD_AFFINITY_MANAGED), else per the documented heuristic: an NVMe I/O queue ("nvme0q3", not
// the admin queue q0) whose affinity is a single CPU, which is how the nvme driver's managed
// queues look.
IrqManagement irq_management(const std::optional<std::string>& debugfs_text, const std::string& name,
                             const std::vector<int>& cpus);

struct Fingerprint {  // each "" when unknown
  std::string kernel, cmdline, microcode, bios_vendor, bios_version, bios_date, cpu_model;
  std::string hypervisor;  // "yes" or "no" from the x86 cpuinfo flag (host/clock_info.h hypervisor_flag)
  bool operator==(const Fingerprint&) const = default;
};

struct Posture {
  std::string cmdline;  // raw /proc/cmdline
  IsolationParams isolation;
  std::vector<int> online, offline, isolated, nohz_full;  // what the kernel did; sorted
  // Isolation at run time: cgroup v2 cpuset partitions and the kubelet's exclusive CPUs
  // (devices/system/cpu/isolated, `isolated` above, shows neither).
  IsolationSources runtime_isolation;
  bool isolated_known = true;  // false when the isolated file was unreadable (isolated is then empty)
  // false on a kernel built without CONFIG_NO_HZ_FULL (no devices/system/cpu/nohz_full): nohz_full=
  // has no effect there, so posture never suggests it
  bool nohz_full_supported = true;
  SmtState smt;
  std::vector<CpuFreq> cpufreq;  // online CPUs that have a cpufreq directory, by cpu
  std::vector<CpuIdle> cpuidle;  // online CPUs that have a cpuidle directory, by cpu
  std::optional<ClocksourceInfo> clocksource;
  TransparentHugepages thp;
  Sysctls sysctls;
  std::optional<std::vector<int>> workqueue_cpus;  // devices/virtual/workqueue/cpumask
  std::vector<IrqAffinity> irqs;                   // every numeric /proc/irq directory, by irq
  Fingerprint fingerprint;
  std::vector<TaskSeen> tasks;        // every thread /proc shows (none under a fixture without them)
  int reader_pid = 0;                 // the process that read this posture (getpid()): jitterd's own tasks
  std::vector<std::string> problems;  // one line per missing or unparsable file, naming its path
};

// Reads everything above. Never throws.
Posture read_posture(const HostReader& host);

// The same with /proc/interrupts already read and parsed by the caller (std::nullopt: the file
// could not be read), so a caller that needs its counts too reads the file, megabytes on a large
// machine, once.
Posture read_posture(const HostReader& host, const std::optional<InterruptTable>& interrupts);

// Only the fingerprint, for a cheap periodic change check. `problems` may be null.
Fingerprint read_fingerprint(const HostReader& host, std::vector<std::string>* problems);

// The IRQs whose affinity includes `cpu`, by irq.
std::vector<IrqAffinity> irqs_on_cpu(const Posture& posture, int cpu);

// (field, value) in a stable order: kernel, cmdline, microcode, bios_vendor, bios_version,
// bios_date, cpu_model, hypervisor.
std::vector<std::pair<std::string, std::string>> fingerprint_fields(const Fingerprint& fingerprint);

// The inverse of fingerprint_fields: each field's value as `value_of(field name)` gives it.
Fingerprint fingerprint_from_fields(const std::function<std::string(const std::string& field)>& value_of);

// The facts every baseline's fingerprint is made of (report/baseline_recorder.h
// baseline_fingerprint): the fingerprint above, the hostname, the cpufreq governor of each
// sampled CPU that has one, the current clocksource, and which CPUs are isolated by which
// mechanism (host/isolation_sources.h isolation_summary); "" where a file was unreadable.
struct MachineFacts {
  Fingerprint fingerprint;
  std::string hostname;
  std::map<int, std::string> governors;  // by cpu
  std::string clocksource;
  std::string isolation;
  bool operator==(const MachineFacts&) const = default;
};

// The facts of `posture` for the CPUs in `sampled`, and the hostname read through `host`
// (sys/kernel/hostname). Never throws.
MachineFacts machine_facts(const HostReader& host, const Posture& posture, const std::vector<int>& sampled);

// One line per changed field, in fingerprint_fields order:
// `kernel: "6.1.0-9-amd64" -> "6.1.0-10-amd64"`.
std::vector<std::string> fingerprint_changes(const Fingerprint& before, const Fingerprint& after);

// `now` with each field it could not read (empty: its file missing or unparsable this time) taken
// from `known`: a file that vanishes is a problem to report, not a change of the machine.
Fingerprint keep_unread_fields(const Fingerprint& known, Fingerprint now);

}  // namespace jitterd
