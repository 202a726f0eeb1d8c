// SPDX-License-Identifier: Apache-2.0
#include "synthetic_host.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "host/cpu_list.h"

namespace jitterd::synthetic {
namespace {

// The number of IRQ `index` in /proc/interrupts: 0-15 legacy, then MSI vectors from 24 on.
int irq_number(int index) { return index < 16 ? index : index + 8; }

// Legacy IRQ names; "" is a chained IRQ with no action.
constexpr const char* kLegacyNames[16] = {"timer", "i8042", "", "", "ttyS0", "", "", "",
                                          "rtc0",  "acpi",  "", "", "i8042", "", "", ""};

struct IrqSpec {
  int number = 0;
  std::string chip, trigger, name;
  int cpu = 0;             // effective affinity: one CPU
  bool spread = false;     // requested affinity: every CPU (else the one CPU)
  std::uint64_t rate = 0;  // interrupts per generation on `cpu`
};

// Device IRQs: one queue in four an NVMe queue (managed, bound to its CPU), the others NIC
// completion queues spread over every CPU, as an untuned multi-queue server has them.
IrqSpec irq_spec(const HostShape& shape, int index) {
  const int cpus = shape_cpus(shape);
  IrqSpec spec;
  spec.number = irq_number(index);
  if (index < 16) {
    spec.chip = "IR-IO-APIC";
    spec.trigger = std::to_string(index) + "-edge";
    spec.name = kLegacyNames[index];
    spec.cpu = 0;
    spec.spread = true;
    spec.rate = index == 0 ? 1 : 0;
    return spec;
  }
  const int queue = index - 16;
  spec.chip = "IR-PCI-MSIX-0000:" + std::to_string(0x3b + queue % 4) + ":00.0";
  spec.trigger = std::to_string(queue) + "-edge";
  spec.cpu = queue % cpus;
  if (queue % 4 == 3) {
    spec.name = "nvme" + std::to_string(queue / 4 % 8) + "q" + std::to_string(queue / 32 + 1);
  } else {
    spec.name =
        "mlx5_comp" + std::to_string(queue / 4) + "@pci:0000:" + std::to_string(0x3b + queue % 4) + ":00.0";
    spec.spread = true;
  }
  spec.rate = 1 + static_cast<std::uint64_t>(queue % 50);
  return spec;
}

void append_count(std::string& out, std::uint64_t value, const char* format) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, format, static_cast<unsigned long long>(value));
  out.append(buffer, static_cast<std::size_t>(n));
}

// x86 arch_show_interrupts rows: code, description, per-CPU count for (cpu, generation).
struct NamedRow {
  const char* code;
  const char* description;
  std::uint64_t (*count)(bool isolated, int cpu, std::uint64_t generation);
};

constexpr NamedRow kNamedRows[] = {
    {"NMI", "Non-maskable interrupts", [](bool, int, std::uint64_t g) { return 2 + g / 8; }},
    {"LOC", "Local timer interrupts",
     [](bool iso, int cpu, std::uint64_t g) {
       return (iso ? 1 : 1000) * (g + 1) + static_cast<std::uint64_t>(cpu);
     }},
    {"SPU", "Spurious interrupts", [](bool, int, std::uint64_t) -> std::uint64_t { return 0; }},
    {"PMI", "Performance monitoring interrupts", [](bool, int, std::uint64_t g) { return 2 + g / 8; }},
    {"IWI", "IRQ work interrupts", [](bool iso, int, std::uint64_t g) { return iso ? 0 : g * 3; }},
    {"RTR", "APIC ICR read retries", [](bool, int, std::uint64_t) -> std::uint64_t { return 0; }},
    {"RES", "Rescheduling interrupts",
     [](bool iso, int cpu, std::uint64_t g) {
       return (g + 1) * (iso ? 1 : 40 + static_cast<std::uint64_t>(cpu % 7));
     }},
    {"CAL", "Function call interrupts", [](bool iso, int, std::uint64_t g) { return (g + 1) * (iso ? 1 : 12); }},
    {"TLB", "TLB shootdowns", [](bool iso, int, std::uint64_t g) { return (g + 1) * (iso ? 0 : 5); }},
    {"TRM", "Thermal event interrupts", [](bool, int, std::uint64_t) -> std::uint64_t { return 0; }},
    {"THR", "Threshold APIC interrupts", [](bool, int, std::uint64_t) -> std::uint64_t { return 0; }},
    {"DFR", "Deferred Error APIC interrupts", [](bool, int, std::uint64_t) -> std::uint64_t { return 0; }},
    {"MCE", "Machine check exceptions", [](bool, int, std::uint64_t) -> std::uint64_t { return 0; }},
    {"MCP", "Machine check polls", [](bool, int, std::uint64_t g) { return 10 + g / 300; }},
};

constexpr const char* kSoftirqs[] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                                     "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};

std::string cpu_header(int cpus, int indent) {
  std::string out(static_cast<std::size_t>(indent), ' ');
  char buffer[32];
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const int n = std::snprintf(buffer, sizeof buffer, "CPU%-8d", cpu);
    out.append(buffer, static_cast<std::size_t>(n));
  }
  out += '\n';
  return out;
}

// A CPU list as sysfs writes it ("0-15,512-527").
std::string list_text(const std::vector<int>& cpus) { return format_cpu_list(cpus); }

// cpumask hex as sysfs writes it: 32-bit groups, most significant first, comma-separated.
std::string mask_text(const std::vector<int>& cpus, int total) {
  const int groups = (total + 31) / 32;
  std::vector<std::uint32_t> words(static_cast<std::size_t>(groups), 0);
  for (int cpu : cpus) words[static_cast<std::size_t>(cpu / 32)] |= std::uint32_t{1} << (cpu % 32);
  std::string out;
  char buffer[16];
  for (int g = groups - 1; g >= 0; --g) {
    std::snprintf(buffer, sizeof buffer, "%08x", words[static_cast<std::size_t>(g)]);
    out += buffer;
    if (g > 0) out += ',';
  }
  return out;
}

std::string task_stat(int tid, const std::string& comm, int cpu, unsigned long flags) {
  // Fields 3.. of proc_pid_stat(5); field 9 is flags, field 39 the processor.
  std::string out = std::to_string(tid) + " (" + comm + ") S 2 0 0 0 -1 " + std::to_string(flags);
  for (int field = 10; field <= 52; ++field) out += field == 39 ? " " + std::to_string(cpu) : " 0";
  return out + "\n";
}

std::string task_status(int tgid, int tid, const std::string& comm, const std::vector<int>& allowed, int total,
                        std::uint64_t voluntary, std::uint64_t involuntary) {
  return "Name:\t" + comm + "\nUmask:\t0000\nState:\tS (sleeping)\nTgid:\t" + std::to_string(tgid) +
         "\nNgid:\t0\nPid:\t" + std::to_string(tid) +
         "\nPPid:\t2\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t\nThreads:\t1\n"
         "SigQ:\t0/2062444\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
         "SigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\nCapInh:\t0000000000000000\n"
         "CapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n"
         "CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n"
         "Speculation_Store_Bypass:\tthread vulnerable\nSpeculationIndirectBranch:\tconditional enabled\n"
         "Cpus_allowed:\t" +
         mask_text(allowed, total) + "\nCpus_allowed_list:\t" + list_text(allowed) +
         "\nMems_allowed:\t00000000,00000001\nMems_allowed_list:\t0\nvoluntary_ctxt_switches:\t" +
         std::to_string(voluntary) + "\nnonvoluntary_ctxt_switches:\t" + std::to_string(involuntary) + "\n";
}

}  // namespace

int shape_cores(const HostShape& shape) { return shape.sockets * shape.l3_per_socket * shape.cores_per_l3; }

int shape_cpus(const HostShape& shape) { return shape_cores(shape) * shape.threads_per_core; }

CpuPlace place_of(const HostShape& shape, int cpu) {
  const int cores = shape_cores(shape);
  CpuPlace place;
  place.thread = cpu / cores;
  place.core = cpu % cores;
  place.l3 = place.core / shape.cores_per_l3;
  place.socket = place.l3 / shape.l3_per_socket;
  return place;
}

std::vector<int> housekeeping_cpus(const HostShape& shape) {
  std::vector<int> out;
  const int cores = shape_cores(shape);
  const int per_socket = shape.l3_per_socket * shape.cores_per_l3;
  for (int thread = 0; thread < shape.threads_per_core; ++thread)
    for (int socket = 0; socket < shape.sockets; ++socket) out.push_back(thread * cores + socket * per_socket);
  return sorted_cpus(std::move(out));
}

std::vector<int> isolated_cpus(const HostShape& shape) {
  std::vector<int> all(static_cast<std::size_t>(shape_cpus(shape)));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return cpus_minus(all, housekeeping_cpus(shape));
}

SyntheticHost::SyntheticHost(HostShape shape, std::filesystem::path parent) : shape_(shape) {
  static int counter = 0;
  root_ = parent / ("jitterd_synthetic_host_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(root_);
  std::filesystem::create_directories(root_);
  write_sysfs();
  write_procfs();
  write_counters(0);
}

SyntheticHost::~SyntheticHost() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void SyntheticHost::write(const std::string& relative, const std::string& text) const {
  const std::filesystem::path path = root_ / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(path.string() + ": cannot write the synthetic tree");
}

void SyntheticHost::write_sysfs() const {
  const int cpus = shape_cpus(shape_);
  const std::string all = "0-" + std::to_string(cpus - 1) + "\n";
  const std::string cpu_dir = "sys/devices/system/cpu/";
  const std::string isolated = list_text(isolated_cpus(shape_)) + "\n";
  write(cpu_dir + "possible", all);
  write(cpu_dir + "present", all);
  write(cpu_dir + "online", all);
  write(cpu_dir + "offline", "\n");
  write(cpu_dir + "isolated", isolated);
  write(cpu_dir + "nohz_full", isolated);
  write(cpu_dir + "kernel_max", "8191\n");
  write(cpu_dir + "smt/control", shape_.threads_per_core > 1 ? "on\n" : "notsupported\n");
  write(cpu_dir + "smt/active", shape_.threads_per_core > 1 ? "1\n" : "0\n");
  for (int cpu = 0; cpu < cpus; ++cpu) write_cpu(cpu);
  for (int socket = 0; socket < shape_.sockets; ++socket) {
    std::vector<int> node;
    for (int cpu = 0; cpu < cpus; ++cpu)
      if (place_of(shape_, cpu).socket == socket) node.push_back(cpu);
    write("sys/devices/system/node/node" + std::to_string(socket) + "/cpulist", list_text(node) + "\n");
  }
  write("sys/devices/system/node/online", "0-" + std::to_string(shape_.sockets - 1) + "\n");
  write("sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
  write("sys/devices/system/clocksource/clocksource0/available_clocksource", "tsc hpet acpi_pm \n");
  write("sys/class/dmi/id/bios_vendor", "American Megatrends International, LLC.\n");
  write("sys/class/dmi/id/bios_version", "2.6.1\n");
  write("sys/class/dmi/id/bios_date", "03/14/2026\n");
  write("sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
  write("sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n");
  write("sys/devices/virtual/workqueue/cpumask", mask_text(housekeeping_cpus(shape_), cpus) + "\n");
}

void SyntheticHost::write_cpu(int cpu) const {
  const int cpus = shape_cpus(shape_);
  const int cores = shape_cores(shape_);
  const CpuPlace place = place_of(shape_, cpu);
  const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/";
  std::vector<int> siblings, l3;
  for (int t = 0; t < shape_.threads_per_core; ++t) siblings.push_back(t * cores + place.core);
  for (int other = 0; other < cpus; ++other)
    if (place_of(shape_, other).l3 == place.l3) l3.push_back(other);
  const std::string sibling_list = list_text(siblings) + "\n";
  if (cpu != 0) write(dir + "online", "1\n");
  const int per_socket_cores = shape_.l3_per_socket * shape_.cores_per_l3;
  write(dir + "topology/core_id", std::to_string(place.core % per_socket_cores) + "\n");
  write(dir + "topology/physical_package_id", std::to_string(place.socket) + "\n");
  write(dir + "topology/die_id", "0\n");
  write(dir + "topology/thread_siblings_list", sibling_list);
  write(dir + "topology/cluster_cpus_list", sibling_list);
  const struct {
    int level;
    const char* type;
    const std::vector<int>& shared;
  } caches[] = {{1, "Data", siblings}, {1, "Instruction", siblings}, {2, "Unified", siblings}, {3, "Unified", l3}};
  for (std::size_t i = 0; i < std::size(caches); ++i) {
    const std::string index = dir + "cache/index" + std::to_string(i) + "/";
    write(index + "level", std::to_string(caches[i].level) + "\n");
    write(index + "type", std::string(caches[i].type) + "\n");
    write(index + "shared_cpu_list", list_text(caches[i].shared) + "\n");
  }
  const bool housekeeping = !has_cpu(isolated_cpus(shape_), cpu);
  write(dir + "cpufreq/scaling_governor", housekeeping ? "schedutil\n" : "performance\n");
  write(dir + "cpufreq/scaling_driver", "acpi-cpufreq\n");
  write(dir + "cpufreq/scaling_min_freq", "1500000\n");
  write(dir + "cpufreq/scaling_max_freq", "3100000\n");
  write(dir + "cpufreq/scaling_cur_freq", housekeeping ? "2200000\n" : "3100000\n");
  const struct {
    const char* name;
    int latency;
  } states[] = {{"POLL", 0}, {"C1", 1}, {"C2", 18}};
  for (std::size_t i = 0; i < std::size(states); ++i) {
    const std::string state = dir + "cpuidle/state" + std::to_string(i) + "/";
    write(state + "name", std::string(states[i].name) + "\n");
    write(state + "latency", std::to_string(states[i].latency) + "\n");
    write(state + "disable", "0\n");
  }
}

void SyntheticHost::write_procfs() const {
  const int cpus = shape_cpus(shape_);
  const std::string isolated = list_text(isolated_cpus(shape_));
  write("proc/cmdline",
        "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=5f3c1a2e-8d4b-4c7e-9a61-2b0f7d9e4c13 ro "
        "quiet isolcpus=managed_irq,domain," +
            isolated + " nohz_full=" + isolated + " rcu_nocbs=" + isolated +
            " irqaffinity=" + list_text(housekeeping_cpus(shape_)) +
            " processor.max_cstate=1 skew_tick=1 tsc=reliable nosoftlockup\n");
  std::string cpuinfo;
  const int cores = shape_cores(shape_);
  const int per_socket_cores = shape_.l3_per_socket * shape_.cores_per_l3;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const CpuPlace place = place_of(shape_, cpu);
    cpuinfo += "processor\t: " + std::to_string(cpu) +
               "\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC 9654 96-Core "
               "Processor\nstepping\t: 1\nmicrocode\t: 0xa101148\ncpu MHz\t\t: 3100.000\ncache size\t: 1024 KB\n"
               "physical id\t: " +
               std::to_string(place.socket) + "\nsiblings\t: " + std::to_string(cpus / shape_.sockets) +
               "\ncore id\t\t: " + std::to_string(place.core % per_socket_cores) +
               "\ncpu cores\t: " + std::to_string(cores / shape_.sockets) +
               "\napicid\t\t: " + std::to_string(cpu) +
               "\nfpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 16\nwp\t\t: yes\n"
               "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx "
               "fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good amd_lbr_v2 "
               "nopl nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 pcid "
               "sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic "
               "cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core "
               "perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 invpcid_single hw_pstate ssbd mba "
               "perfmon_v2 ibrs ibpb stibp ibrs_enhanced vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm "
               "rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw "
               "avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local "
               "avx512_bf16 clzero irperf xsaveerptr rdpru wbnoinvd amd_ppin cppc arat npt lbrv svm_lock "
               "nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic "
               "v_vmsave_vmload vgif x2avic v_spec_ctrl avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes "
               "vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq la57 rdpid overflow_recov succor smca "
               "fsrm flush_l1d\nbugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2 spec_rstack_overflow\n"
               "bogomips\t: 4792.86\nTLB size\t: 3584 4K pages\nclflush size\t: 64\ncache_alignment\t: 64\n"
               "address sizes\t: 52 bits physical, 57 bits virtual\npower management: ts ttp tm hwpstate cpb "
               "eff_freq_ro [13] [14]\n\n";
  }
  write("proc/cpuinfo", cpuinfo);
  write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
  write("proc/sys/kernel/nmi_watchdog", "0\n");
  write("proc/sys/kernel/timer_migration", "0\n");
  write("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
  write("proc/sys/kernel/watchdog_cpumask", list_text(housekeeping_cpus(shape_)) + "\n");
  write("proc/sys/kernel/hostname", "synthetic-" + std::to_string(cpus) + "\n");
  write("proc/sys/vm/stat_interval", "10\n");
  write_irq_dirs();
  write_kthreads();
}

void SyntheticHost::write_irq_dirs() const {
  const int cpus = shape_cpus(shape_);
  const std::string all = "0-" + std::to_string(cpus - 1) + "\n";
  for (int index = 0; index < shape_.device_irqs; ++index) {
    const IrqSpec spec = irq_spec(shape_, index);
    const std::string dir = "proc/irq/" + std::to_string(spec.number) + "/";
    write(dir + "effective_affinity_list", std::to_string(spec.cpu) + "\n");
    write(dir + "smp_affinity_list", spec.spread ? all : std::to_string(spec.cpu) + "\n");
  }
}

void SyntheticHost::write_kthreads() const {
  constexpr const char* kinds[] = {"cpuhp/", "migration/", "ksoftirqd/", "kworker/", "rcuc/", "idle_inject/"};
  const int cpus = shape_cpus(shape_);
  int tid = 100;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    for (int k = 0; k < shape_.kthreads_per_cpu; ++k, ++tid) {
      const std::string kind = kinds[static_cast<std::size_t>(k) % std::size(kinds)];
      const std::string comm = kind + std::to_string(cpu) + (kind == "kworker/" ? ":0H" : "");
      const std::string dir = "proc/" + std::to_string(tid) + "/task/" + std::to_string(tid) + "/";
      write(dir + "stat", task_stat(tid, comm, cpu, 0x208040));
      write(dir + "status", task_status(tid, tid, comm, {cpu}, cpus, 10, 0));
    }
  }
}

void SyntheticHost::add_pinned_threads(pid_t pid, const std::string& comm, const std::vector<int>& cpus,
                                       const std::vector<pid_t>& tids) {
  const int total = shape_cpus(shape_);
  for (std::size_t i = 0; i < cpus.size() && i < tids.size(); ++i) {
    const std::string dir = "proc/" + std::to_string(pid) + "/task/" + std::to_string(tids[i]) + "/";
    write(dir + "stat", task_stat(tids[i], comm, cpus[i], 0x40));
    write(dir + "status", task_status(pid, tids[i], comm, {cpus[i]}, total, 3 + i % 5, 1 + i % 3));
    write(dir + "schedstat", std::to_string(1000000 * (i + 1)) + " " + std::to_string(1000 * i) + " 7\n");
  }
}

void SyntheticHost::write_counters(std::uint64_t generation) {
  const int cpus = shape_cpus(shape_);
  const std::vector<int> isolated = isolated_cpus(shape_);
  std::vector<bool> is_isolated(static_cast<std::size_t>(cpus), false);
  for (int cpu : isolated) is_isolated[static_cast<std::size_t>(cpu)] = true;
  const int last_irq = irq_number(shape_.device_irqs - 1);
  const int prec = std::max(3, static_cast<int>(std::to_string(last_irq).size()));

  std::string interrupts = cpu_header(cpus, prec + 8);
  interrupts.reserve(static_cast<std::size_t>(shape_.device_irqs + 20) * static_cast<std::size_t>(cpus * 11 + 80));
  char lead[32];
  for (int index = 0; index < shape_.device_irqs; ++index) {
    const IrqSpec spec = irq_spec(shape_, index);
    interrupts.append(lead,
                      static_cast<std::size_t>(std::snprintf(lead, sizeof lead, "%*d: ", prec, spec.number)));
    for (int cpu = 0; cpu < cpus; ++cpu)
      append_count(interrupts, cpu == spec.cpu ? spec.rate * (generation + 1) : 0, "%10llu ");
    interrupts += " " + spec.chip + " " + spec.trigger;
    if (!spec.name.empty()) interrupts += "      " + spec.name;
    interrupts += '\n';
  }
  for (const NamedRow& row : kNamedRows) {
    interrupts.append(lead, static_cast<std::size_t>(std::snprintf(lead, sizeof lead, "%*s: ", prec, row.code)));
    for (int cpu = 0; cpu < cpus; ++cpu)
      append_count(interrupts, row.count(is_isolated[static_cast<std::size_t>(cpu)], cpu, generation), "%10llu ");
    interrupts += std::string("  ") + row.description + "\n";
  }
  interrupts.append(lead,
                    static_cast<std::size_t>(std::snprintf(lead, sizeof lead, "%*s: %10u\n", prec, "ERR", 0)));
  interrupts.append(lead,
                    static_cast<std::size_t>(std::snprintf(lead, sizeof lead, "%*s: %10u\n", prec, "MIS", 0)));
  write("proc/interrupts", interrupts);

  std::string softirqs = cpu_header(cpus, 20);
  for (std::size_t s = 0; s < std::size(kSoftirqs); ++s) {
    softirqs.append(lead, static_cast<std::size_t>(std::snprintf(lead, sizeof lead, "%12s:", kSoftirqs[s])));
    for (int cpu = 0; cpu < cpus; ++cpu) {
      const bool iso = is_isolated[static_cast<std::size_t>(cpu)];
      const std::uint64_t per_generation = s == 1 || s == 9 ? (iso ? 1 : 900) : (iso ? 0 : 3 * s);
      append_count(softirqs, per_generation * (generation + 1), " %10llu");
    }
    softirqs += '\n';
  }
  write("proc/softirqs", softirqs);

  // /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice per CPU, in USER_HZ.
  std::string stat;
  const auto cpu_line = [&](const std::string& name, std::uint64_t busy, std::uint64_t idle) {
    stat += name + " " + std::to_string(busy) + " 0 " + std::to_string(busy / 4) + " " + std::to_string(idle) +
            " 3 0 " + std::to_string(busy / 50) + " 0 0 0\n";
  };
  const std::uint64_t g = generation + 1;
  cpu_line("cpu ", g * 100 * static_cast<std::uint64_t>(cpus), g * 100 * static_cast<std::uint64_t>(cpus));
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const bool iso = is_isolated[static_cast<std::size_t>(cpu)];
    // Isolated CPUs run their application flat out; housekeeping ones are a third busy.
    cpu_line("cpu" + std::to_string(cpu), g * (iso ? 100 : 33), g * (iso ? 0 : 67));
  }
  stat += "intr " + std::to_string(g * 1000000);
  for (int irq = 0; irq <= last_irq; ++irq) stat += " " + std::to_string(irq < 16 ? g : 0);
  stat += "\nctxt " + std::to_string(g * 5000000) + "\nbtime 1795000000\nprocesses " + std::to_string(g * 100) +
          "\nprocs_running 3\nprocs_blocked 0\nsoftirq " + std::to_string(g * 2000000) + "\n";
  write("proc/stat", stat);
}

std::uintmax_t SyntheticHost::interrupts_bytes() const {
  std::error_code ec;
  return std::filesystem::file_size(root_ / "proc" / "interrupts", ec);
}

}  // namespace jitterd::synthetic
