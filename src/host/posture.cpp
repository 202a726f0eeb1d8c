// SPDX-License-Identifier: Apache-2.0
// Reading the posture through a HostReader (the parsers are in posture_parse.cpp).
#include "host/posture.h"

#include <unistd.h>

#include <algorithm>
#include <functional>

#include "host/clock_info.h"
#include "host/cpu_list.h"
#include "host/interrupt_counts.h"
#include "host/text.h"
#include "host/topology.h"

namespace jitterd {
namespace {

// Reads files and records one problem line per missing or unparsable one, naming its path.
class Reading {
 public:
  Reading(const HostReader& reader, std::vector<std::string>* problems) : host(reader), problems_(problems) {}

  void problem(std::string line) const {
    if (problems_ != nullptr) problems_->push_back(std::move(line));
  }
  std::string sys_path(std::string_view relative) const { return host.sys_path(relative).string(); }
  std::string proc_path(std::string_view relative) const { return host.proc_path(relative).string(); }
  // The trimmed text, or std::nullopt with "<path>: missing; <consequence>".
  std::optional<std::string> sys(std::string_view relative, std::string_view consequence) const {
    return checked(host.read_sys(relative), sys_path(relative), consequence);
  }
  std::optional<std::string> proc(std::string_view relative, std::string_view consequence) const {
    return checked(host.read_proc(relative), proc_path(relative), consequence);
  }
  std::optional<long long> sys_integer(std::string_view relative) const {
    return integer(sys(relative, ""), sys_path(relative));
  }
  // The same for file `name` of `dir`, opened at <sysfs_root>/<relative_dir> (messages name the
  // path): one openat(2) into the stack buffer instead of a path walk per file.
  std::optional<std::string> sys_at(const Directory& dir, const std::string& relative_dir, const char* name,
                                    std::string_view consequence) const {
    if (const std::optional<std::string_view> text = dir.read_trimmed(name, buffer_)) return std::string(*text);
    missing(sys_path(relative_dir + name), consequence);
    return std::nullopt;
  }
  std::optional<long long> sys_integer_at(const Directory& dir, const std::string& relative_dir,
                                          const char* name) const {
    return integer(sys_at(dir, relative_dir, name, ""), sys_path(relative_dir + name));
  }

  const HostReader& host;

 private:
  void missing(const std::string& path, std::string_view consequence) const {
    problem(path + ": missing" + (consequence.empty() ? "" : "; ") + std::string(consequence));
  }
  std::optional<std::string> checked(std::optional<std::string> text, const std::string& path,
                                     std::string_view consequence) const {
    if (!text) {
      missing(path, consequence);
      return std::nullopt;
    }
    return std::string(trim(*text));
  }
  // The text as an integer, or std::nullopt with "<path>: not an integer: ..." (nothing more if the
  // file was missing: that is already said).
  std::optional<long long> integer(const std::optional<std::string>& text, const std::string& path) const {
    if (!text) return std::nullopt;
    const std::optional<long long> value = parse_integer(*text);
    if (!value) problem(path + ": not an integer: \"" + *text + "\"");
    return value;
  }

  std::vector<std::string>* problems_;
  mutable FileBuffer buffer_;
};

std::string cpu_dir(int cpu) { return std::string(kSysCpuDir) + "/cpu" + std::to_string(cpu); }

// Reads `sub` (cpufreq, cpuidle) of every online CPU that has it, opened once per CPU, with
// `read_one(cpu, directory, relative path with a trailing '/')`. A machine with none (a VM without a
// cpufreq or cpuidle driver) gets one problem line, not one per CPU; those lines come before the
// reading's own.
template <typename Entry, typename ReadOne>
std::vector<Entry> read_cpu_subdirs(const Reading& r, const std::vector<int>& online, const std::string& sub,
                                    std::string_view consequence, ReadOne read_one) {
  std::vector<Entry> entries;
  std::vector<int> without;
  std::vector<std::string> reading_problems;
  const Reading inner(r.host, &reading_problems);
  const Directory cpus = r.host.sys_dir(kSysCpuDir);
  for (int cpu : online) {
    const std::string name = "cpu" + std::to_string(cpu) + "/" + sub;
    const Directory dir(cpus, name);
    if (!dir.open()) {
      without.push_back(cpu);
      continue;
    }
    entries.push_back(read_one(inner, cpu, dir, std::string(kSysCpuDir) + "/" + name + "/"));
  }
  if (entries.empty() && !online.empty()) {
    r.problem(r.sys_path(cpu_dir(online.front()) + "/" + sub) + ": missing on every online CPU; " +
              std::string(consequence));
    return entries;
  }
  for (int cpu : without)
    r.problem(r.sys_path(cpu_dir(cpu) + "/" + sub) + ": missing; " + std::string(consequence) + " for cpu " +
              std::to_string(cpu));
  for (std::string& line : reading_problems) r.problem(std::move(line));
  return entries;
}

void read_cmdline(const Reading& r, Posture& posture) {
  posture.cmdline = posture.fingerprint.cmdline;
  posture.isolation = parse_isolation_params(parse_kernel_cmdline(posture.cmdline));
  const IsolationParams& iso = posture.isolation;
  const std::pair<const char*, const std::optional<std::string>*> lists[] = {{"isolcpus", &iso.isolcpus},
                                                                             {"nohz_full", &iso.nohz_full},
                                                                             {"rcu_nocbs", &iso.rcu_nocbs},
                                                                             {"irqaffinity", &iso.irqaffinity}};
  for (const auto& [key, value] : lists) {
    std::string error;
    if (*value && !param_cpus(*value, &error)) r.problem(r.proc_path("cmdline") + ": " + key + ": " + error);
  }
}

// Online, offline, isolated, tickless and siblings come from read_topology, which has its own
// fallbacks and problem lines.
void read_cpus(const HostReader& host, Posture& posture) {
  Topology topology = read_topology(host);
  posture.online = topology.online;
  posture.offline = topology.offline;
  posture.isolated = topology.isolated;
  posture.isolated_known = topology.isolated_known;
  posture.nohz_full = topology.nohz_full;
  posture.nohz_full_supported = topology.nohz_full_supported;
  for (const CpuTopology& cpu : topology.cpus) posture.smt.thread_siblings[cpu.cpu] = cpu.thread_siblings;
  for (std::string& line : topology.problems) posture.problems.push_back(std::move(line));
}

void read_smt(const Reading& r, SmtState& smt) {
  const std::string dir = std::string(kSysCpuDir) + "/smt";
  if (!r.host.sys_exists(dir)) {
    r.problem(r.sys_path(dir) + ": missing (no CONFIG_HOTPLUG_SMT, or not x86); SMT control unknown");
    return;
  }
  smt.control = r.sys(dir + "/control", "");
  if (const std::optional<long long> active = r.sys_integer(dir + "/active")) smt.active = *active != 0;
}

CpuFreq read_cpufreq(const Reading& r, int cpu, const Directory& dir, const std::string& relative) {
  return {cpu, r.sys_at(dir, relative, "scaling_governor", ""),
          r.sys_integer_at(dir, relative, "scaling_min_freq"), r.sys_integer_at(dir, relative, "scaling_max_freq"),
          r.sys_integer_at(dir, relative, "scaling_cur_freq")};
}

CpuIdle read_cpuidle(const Reading& r, int cpu, const Directory& dir, const std::string& relative) {
  CpuIdle idle{cpu, {}};
  // stateN/name and the others are opened from the cpuidle directory: no descriptor per state.
  for (int index : numbered_entries(dir.list(), "state")) {
    const std::string state = "state" + std::to_string(index) + "/";
    IdleState entry{index, r.sys_at(dir, relative, (state + "name").c_str(), "").value_or(""),
                    r.sys_integer_at(dir, relative, (state + "latency").c_str()), true};
    if (const std::optional<long long> disable = r.sys_integer_at(dir, relative, (state + "disable").c_str()))
      entry.enabled = *disable == 0;
    idle.states.push_back(std::move(entry));
  }
  return idle;
}

std::optional<std::string> read_choice(const Reading& r, const std::string& relative) {
  const std::optional<std::string> text = r.sys(relative, "");
  if (!text) return std::nullopt;
  std::optional<std::string> choice = parse_bracketed_choice(*text);
  if (!choice) r.problem(r.sys_path(relative) + ": no [selected] word in \"" + *text + "\"");
  return choice;
}

Sysctls read_sysctls(const Reading& r) {
  return {r.proc("sys/kernel/nmi_watchdog", ""), r.proc("sys/kernel/timer_migration", ""),
          r.proc("sys/vm/stat_interval", ""), r.proc("sys/kernel/sched_rt_runtime_us", ""),
          r.proc("sys/kernel/watchdog_cpumask", "")};
}

std::optional<std::vector<int>> read_workqueue_cpus(const Reading& r) {
  const std::string relative = "devices/virtual/workqueue/cpumask";
  const std::optional<std::string> text = r.sys(relative, "unbound workqueue CPUs unknown");
  if (!text) return std::nullopt;
  std::string error;
  std::vector<int> cpus = parse_cpu_mask_hex(*text, &error);
  if (!error.empty()) {
    r.problem(r.sys_path(relative) + ": " + error);
    return std::nullopt;
  }
  return cpus;
}

// effective_affinity_list is where the IRQ is delivered; kernels without
// CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK only have smp_affinity_list, the requested set. Falling
// back is one summary line, not one per IRQ.
std::vector<IrqAffinity> read_irqs(const Reading& r, const std::optional<InterruptTable>& interrupts) {
  if (!interrupts) r.problem(r.proc_path("interrupts") + ": missing; IRQ names unknown");
  // The action names of the numbered rows; LOC, RES and the other named rows have no IRQ dir.
  std::map<int, std::string> names;
  for (const InterruptRow& row : interrupts ? interrupts->rows : std::vector<InterruptRow>{}) {
    if (all_digits(row.source)) names[static_cast<int>(parse_integer(row.source).value_or(-1))] = row.name;
  }
  std::vector<IrqAffinity> irqs;
  std::vector<int> fell_back;
  const Directory irq_root = r.host.proc_dir("irq");
  const std::vector<int> numbers = numbered_entries(irq_root.list(), "");
  if (numbers.empty()) r.problem(r.proc_path("irq") + ": missing or empty; IRQ affinities unknown");
  // debugfs is root-only and often unmounted: its absence selects the heuristic, no problem line.
  const Directory debug_irqs = r.host.sys_dir("kernel/debug/irq/irqs");
  FileBuffer buffer;
  for (int irq : numbers) {
    const std::string number = std::to_string(irq);
    const std::string dir = "irq/" + number + "/";
    IrqAffinity entry{irq, names.count(irq) ? names.at(irq) : "", {}, true};
    std::optional<std::string> text;
    // irq/N/<file> opened from the irq directory: no descriptor per IRQ.
    if (const std::optional<std::string_view> effective =
            irq_root.read_stripped((number + "/effective_affinity_list").c_str(), buffer))
      text = std::string(*effective);
    if (!text) {
      entry.effective = false;
      fell_back.push_back(irq);
      if (const std::optional<std::string_view> smp =
              irq_root.read_trimmed((number + "/smp_affinity_list").c_str(), buffer)) {
        text = std::string(*smp);
      } else {
        r.problem(r.proc_path(dir + "smp_affinity_list") + ": missing; IRQ " + number + " left out");
        continue;
      }
    }
    std::string error;
    const std::optional<std::vector<int>> cpus = parse_cpu_list(*text, &error);
    const std::string file = entry.effective ? "effective_affinity_list" : "smp_affinity_list";
    if (!cpus) {
      r.problem(r.proc_path(dir + file) + ": " + error + "; IRQ " + std::to_string(irq) + " left out");
      continue;
    }
    entry.cpus = *cpus;
    std::optional<std::string> debugfs;
    if (const std::optional<std::string_view> found = debug_irqs.read(number.c_str(), buffer))
      debugfs = std::string(*found);
    entry.management = irq_management(debugfs, entry.name, entry.cpus);
    irqs.push_back(std::move(entry));
  }
  if (!fell_back.empty()) {
    const std::size_t others = fell_back.size() - 1;
    r.problem(r.proc_path("irq/" + std::to_string(fell_back.front()) + "/effective_affinity_list") + ": missing" +
              (others ? " (and for " + std::to_string(others) + " other IRQs)" : "") +
              "; using smp_affinity_list, the requested rather than the effective affinity");
  }
  return irqs;
}

std::string read_cpu_model(const std::string& cpuinfo) {
  if (std::optional<std::string> model = cpuinfo_field(cpuinfo, "model name")) return *model;
  // aarch64 prints no model name; the implementer and part codes name the core.
  const std::optional<std::string> implementer = cpuinfo_field(cpuinfo, "CPU implementer");
  const std::optional<std::string> part = cpuinfo_field(cpuinfo, "CPU part");
  if (implementer && part) return "CPU implementer " + *implementer + ", part " + *part;
  return "";
}

std::string read_microcode(const Reading& r, const std::optional<std::string>& cpuinfo) {
  if (cpuinfo) {
    if (std::optional<std::string> microcode = cpuinfo_field(*cpuinfo, "microcode")) return *microcode;
  }
  const std::string relative = cpu_dir(0) + "/microcode/version";
  if (std::optional<std::string> version = r.host.read_sys(relative)) return std::string(trim(*version));
  r.problem(r.sys_path(relative) + ": missing, and " + r.proc_path("cpuinfo") +
            " has no microcode field; the microcode revision is unknown");
  return "";
}

}  // namespace

Fingerprint read_fingerprint(const HostReader& host, std::vector<std::string>* problems) {
  const Reading r(host, problems);
  Fingerprint fp;
  fp.kernel = r.proc("sys/kernel/osrelease", "the kernel release is unknown").value_or("");
  fp.cmdline = r.proc("cmdline", "the kernel command line is unknown").value_or("");
  const std::optional<std::string> cpuinfo = r.proc("cpuinfo", "the CPU model is unknown");
  fp.microcode = read_microcode(r, cpuinfo);
  const std::string dmi = "class/dmi/id/";
  fp.bios_vendor = r.sys(dmi + "bios_vendor", "").value_or("");
  fp.bios_version = r.sys(dmi + "bios_version", "").value_or("");
  fp.bios_date = r.sys(dmi + "bios_date", "").value_or("");
  fp.cpu_model = cpuinfo ? read_cpu_model(*cpuinfo) : "";
  fp.hypervisor = cpuinfo ? hypervisor_flag(parse_cpuinfo_clock(*cpuinfo)) : "";
  return fp;
}

Posture read_posture(const HostReader& host) {
  const std::optional<std::string> text = host.read_proc("interrupts");
  return read_posture(host, text ? std::optional<InterruptTable>(parse_proc_interrupts(*text)) : std::nullopt);
}

Posture read_posture(const HostReader& host, const std::optional<InterruptTable>& interrupts) {
  Posture posture;
  const Reading r(host, &posture.problems);
  posture.fingerprint = read_fingerprint(host, &posture.problems);
  read_cmdline(r, posture);
  read_cpus(host, posture);
  read_smt(r, posture.smt);
  posture.cpufreq =
      read_cpu_subdirs<CpuFreq>(r, posture.online, "cpufreq", "governor and frequencies unknown", read_cpufreq);
  posture.cpuidle = read_cpu_subdirs<CpuIdle>(r, posture.online, "cpuidle", "idle states unknown", read_cpuidle);
  posture.clocksource = read_clocksource(host, &posture.problems);
  posture.thp = {read_choice(r, "kernel/mm/transparent_hugepage/enabled"),
                 read_choice(r, "kernel/mm/transparent_hugepage/defrag")};
  posture.sysctls = read_sysctls(r);
  posture.workqueue_cpus = read_workqueue_cpus(r);
  posture.irqs = read_irqs(r, interrupts);
  posture.runtime_isolation = read_isolation_sources(host);
  for (std::string& line : isolation_problems(posture.runtime_isolation))
    posture.problems.push_back(std::move(line));
  posture.tasks = read_tasks(host);
  posture.reader_pid = static_cast<int>(::getpid());
  return posture;
}

IrqManagement irq_management(const std::optional<std::string>& debugfs_text, const std::string& name,
                             const std::vector<int>& cpus) {
  if (debugfs_text) {
    return debugfs_text->find("MANAGED") != std::string::npos ? IrqManagement::managed : IrqManagement::unmanaged;
  }
  // "nvme<controller>q<queue>", queue > 0.
  const std::string_view text = name;
  if (cpus.size() != 1 || text.substr(0, 4) != "nvme") return IrqManagement::unmanaged;
  const std::size_t q = text.find('q', 4);
  if (q == std::string_view::npos || q == 4) return IrqManagement::unmanaged;
  const std::string_view controller = text.substr(4, q - 4);
  const std::string_view queue = text.substr(q + 1);
  const bool io_queue = all_digits(controller) && all_digits(queue) && !queue.empty() &&
                        queue.find_first_not_of('0') != std::string_view::npos;
  return io_queue ? IrqManagement::managed_by_name : IrqManagement::unmanaged;
}

std::vector<IrqAffinity> irqs_on_cpu(const Posture& posture, int cpu) {
  std::vector<IrqAffinity> out;
  for (const IrqAffinity& irq : posture.irqs)
    if (std::binary_search(irq.cpus.begin(), irq.cpus.end(), cpu)) out.push_back(irq);
  return out;
}

namespace {

// The fields in fingerprint_fields order.
constexpr std::pair<const char*, std::string Fingerprint::*> kFingerprintMembers[] = {
    {"kernel", &Fingerprint::kernel},
    {"cmdline", &Fingerprint::cmdline},
    {"microcode", &Fingerprint::microcode},
    {"bios_vendor", &Fingerprint::bios_vendor},
    {"bios_version", &Fingerprint::bios_version},
    {"bios_date", &Fingerprint::bios_date},
    {"cpu_model", &Fingerprint::cpu_model},
    {"hypervisor", &Fingerprint::hypervisor}};

}  // namespace

std::vector<std::pair<std::string, std::string>> fingerprint_fields(const Fingerprint& fp) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& [name, member] : kFingerprintMembers) fields.emplace_back(name, fp.*member);
  return fields;
}

Fingerprint fingerprint_from_fields(const std::function<std::string(const std::string& field)>& value_of) {
  Fingerprint fp;
  for (const auto& [name, member] : kFingerprintMembers) fp.*member = value_of(name);
  return fp;
}

MachineFacts machine_facts(const HostReader& host, const Posture& posture, const std::vector<int>& sampled) {
  MachineFacts facts;
  facts.fingerprint = posture.fingerprint;
  facts.hostname = std::string(trim(host.read_proc("sys/kernel/hostname").value_or("")));
  for (const CpuFreq& f : posture.cpufreq)
    if (f.governor && std::find(sampled.begin(), sampled.end(), f.cpu) != sampled.end())
      facts.governors[f.cpu] = *f.governor;
  facts.clocksource = posture.clocksource ? posture.clocksource->current : "";
  if (posture.isolated_known) facts.isolation = isolation_summary(posture.isolated, posture.runtime_isolation);
  return facts;
}

Fingerprint keep_unread_fields(const Fingerprint& known, Fingerprint now) {
  for (const auto& [name, field] : kFingerprintMembers)
    if ((now.*field).empty()) now.*field = known.*field;
  return now;
}

std::vector<std::string> fingerprint_changes(const Fingerprint& before, const Fingerprint& after) {
  const auto old_fields = fingerprint_fields(before);
  const auto new_fields = fingerprint_fields(after);
  std::vector<std::string> changes;
  for (std::size_t i = 0; i < old_fields.size(); ++i) {
    if (old_fields[i].second == new_fields[i].second) continue;
    changes.push_back(old_fields[i].first + ": \"" + old_fields[i].second + "\" -> \"" + new_fields[i].second +
                      "\"");
  }
  return changes;
}

}  // namespace jitterd
