#include "host/posture.h"

#include <algorithm>
#include <charconv>

#include "host/cpu_list.h"
#include "host/interrupt_counts.h"
#include "host/topology.h"
#include "host/text.h"

namespace jitterd {
namespace {

constexpr std::string_view cpu_root = "devices/system/cpu";

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Kernel parameter names treat '-' and '_' alike (parameq() in kernel/params.c).
std::string normalized_key(std::string_view key) {
  std::string out(key);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// One parameter from the front of `rest` (which starts at a non-blank), advancing past it. Same
// rules as next_arg() in lib/cmdline.c: a quote toggles quoting anywhere; a leading quote on the
// whole parameter or on its value is dropped with the final quote.
CmdlineParam next_param(std::string_view& rest) {
  const bool quoted = rest.front() == '"';
  if (quoted) rest.remove_prefix(1);
  bool in_quote = quoted;
  std::size_t i = 0, equals = std::string_view::npos;
  for (; i < rest.size(); ++i) {
    if (kBlanks.find(rest[i]) != std::string_view::npos && !in_quote) break;
    if (equals == std::string_view::npos && rest[i] == '=') equals = i;
    if (rest[i] == '"') in_quote = !in_quote;
  }
  const std::string_view word = rest.substr(0, i);
  rest.remove_prefix(i);
  const bool value_quoted = equals != std::string_view::npos && equals + 1 < word.size() &&
                            word[equals + 1] == '"';
  std::size_t end = word.size();
  if ((quoted || value_quoted) && end > 0 && word[end - 1] == '"') --end;
  if (equals == std::string_view::npos) return {std::string(word.substr(0, end)), std::nullopt};
  const std::size_t value_start = equals + 1 + (value_quoted ? 1 : 0);
  const std::size_t value_size = end > value_start ? end - value_start : 0;
  return {std::string(word.substr(0, equals)), std::string(word.substr(value_start, value_size))};
}

// isolcpus=[flag,]...cpu-list: leading alphabetic words ending in ',' are flags
// (housekeeping_isolcpus_setup() in kernel/sched/isolation.c); the rest is the cpu list.
void set_isolcpus(IsolationParams& out, std::string_view value) {
  out.isolcpus_flags.clear();
  for (std::size_t comma; !value.empty() && is_alpha(value.front()) &&
                          (comma = value.find(',')) != std::string_view::npos;) {
    out.isolcpus_flags.emplace_back(value.substr(0, comma));
    value.remove_prefix(comma + 1);
  }
  out.isolcpus = std::string(value);
}

}  // namespace

std::vector<CmdlineParam> parse_kernel_cmdline(std::string_view text) {
  std::vector<CmdlineParam> params;
  for (;;) {
    text.remove_prefix(std::min(text.find_first_not_of(kBlanks), text.size()));
    if (text.empty()) break;
    CmdlineParam param = next_param(text);
    if (param.key == "--" && !param.value) break;  // what follows is init's
    params.push_back(std::move(param));
  }
  return params;
}

IsolationParams parse_isolation_params(const std::vector<CmdlineParam>& params) {
  IsolationParams out;
  for (const CmdlineParam& param : params) {
    const std::string key = normalized_key(param.key);
    const std::string value = param.value.value_or("");
    if (key == "isolcpus") set_isolcpus(out, value);
    else if (key == "nohz_full") out.nohz_full = value;
    else if (key == "rcu_nocbs") out.rcu_nocbs = value;
    else if (key == "irqaffinity") out.irqaffinity = value;
    else if (key == "rcu_nocb_poll") out.rcu_nocb_poll = true;
    else if (key == "skew_tick") out.skew_tick = value;
    else if (key == "intel_idle.max_cstate") out.intel_idle_max_cstate = value;
    else if (key == "processor.max_cstate") out.processor_max_cstate = value;
    else if (key == "idle") out.idle = value;
    else if (key == "mitigations") out.mitigations = value;
  }
  return out;
}

std::optional<std::vector<int>> param_cpus(const std::optional<std::string>& value,
                                           std::string* error) {
  if (!value) return std::nullopt;
  return parse_cpu_list(*value, error);
}

// "  45:   0   1234 ...  IR-PCI-MSI 1572868-edge      mlx5_comp3@pci:0000:3b:00.0": the counts
// (one per online CPU), the chip, the hwirq with its trigger ("27 Level" on arm's GIC, "-edge"
// appended on x86), then the action names, which may hold ", ".
std::map<int, CpuTimes> parse_proc_stat(std::string_view text) {
  std::map<int, CpuTimes> out;
  for (std::string_view line : lines(text)) {
    if (line.substr(0, 3) != "cpu" || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;  // not "cpu " (the sum)
    std::vector<std::uint64_t> fields;
    std::string_view rest = line.substr(3);
    const std::size_t end_of_cpu = std::min(rest.find_first_of(kBlanks), rest.size());
    const std::optional<long long> cpu = parse_integer(rest.substr(0, end_of_cpu));
    rest.remove_prefix(end_of_cpu);
    while (!(rest = trim(rest)).empty()) {
      const std::size_t end = std::min(rest.find_first_of(kBlanks), rest.size());
      const std::optional<long long> value = parse_integer(rest.substr(0, end));
      if (!value || *value < 0) break;
      fields.push_back(static_cast<std::uint64_t>(*value));
      rest.remove_prefix(end);
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice, already in user and nice]
    if (!cpu || fields.size() < 4) continue;
    fields.resize(std::min<std::size_t>(fields.size(), 8));
    CpuTimes times;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      times.total += fields[i];
      if (i != 3 && i != 4) times.busy += fields[i];
    }
    out[static_cast<int>(*cpu)] = times;
  }
  return out;
}

std::map<int, double> busy_shares(const std::map<int, CpuTimes>& before, const std::map<int, CpuTimes>& after) {
  std::map<int, double> out;
  for (const auto& [cpu, now] : after) {
    const auto then = before.find(cpu);
    if (then == before.end() || now.total <= then->second.total || now.busy < then->second.busy) continue;
    out[cpu] = static_cast<double>(now.busy - then->second.busy) / static_cast<double>(now.total - then->second.total);
  }
  return out;
}

std::optional<std::string> parse_bracketed_choice(std::string_view text) {
  const std::size_t open = text.find('[');
  const std::size_t close = text.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
  const std::string_view choice = trim(text.substr(open + 1, close - open - 1));
  if (choice.empty()) return std::nullopt;
  return std::string(choice);
}

std::optional<long long> parse_integer(std::string_view text) {
  text = trim(text);
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::string> cpuinfo_field(std::string_view cpuinfo_text, std::string_view key) {
  for (std::string_view line : lines(cpuinfo_text)) {
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == key)
      return std::string(trim(line.substr(colon + 1)));
  }
  return std::nullopt;
}

namespace {

// Reads files and records one problem line per missing or unparsable one, naming its path.
class Reading {
 public:
  Reading(const HostReader& reader, std::vector<std::string>* problems)
      : host(reader), problems_(problems) {}

  void problem(std::string line) const {
    if (problems_ != nullptr) problems_->push_back(std::move(line));
  }
  std::string sys_path(std::string_view relative) const {
    return host.sys_path(relative).string();
  }
  std::string proc_path(std::string_view relative) const {
    return host.proc_path(relative).string();
  }
  // The trimmed text, or std::nullopt with "<path>: missing; <consequence>".
  std::optional<std::string> sys(std::string_view relative, std::string_view consequence) const {
    return checked(host.read_sys(relative), sys_path(relative), consequence);
  }
  std::optional<std::string> proc(std::string_view relative, std::string_view consequence) const {
    return checked(host.read_proc(relative), proc_path(relative), consequence);
  }
  std::optional<long long> sys_integer(std::string_view relative) const {
    const std::optional<std::string> text = sys(relative, "");
    if (!text) return std::nullopt;
    const std::optional<long long> value = parse_integer(*text);
    if (!value) problem(sys_path(relative) + ": not an integer: \"" + *text + "\"");
    return value;
  }

  const HostReader& host;

 private:
  std::optional<std::string> checked(std::optional<std::string> text, const std::string& path,
                                     std::string_view consequence) const {
    if (!text) {
      problem(path + ": missing" + (consequence.empty() ? "" : "; ") + std::string(consequence));
      return std::nullopt;
    }
    return std::string(trim(*text));
  }

  std::vector<std::string>* problems_;
};

std::string cpu_dir(int cpu) { return std::string(cpu_root) + "/cpu" + std::to_string(cpu); }

// The numbers of the entries named <prefix><number>, in numeric order ("state10" after "state9").
std::vector<int> numbered_entries(const std::vector<std::string>& names, std::string_view prefix) {
  std::vector<int> out;
  for (const std::string& name : names) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string_view digits = std::string_view(name).substr(prefix.size());
    if (all_digits(digits))
      out.push_back(static_cast<int>(parse_integer(digits).value_or(0)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The online CPUs that have cpuN/<sub>. A machine with none (a VM without a cpufreq or cpuidle
// driver) gets one problem line, not one per CPU.
std::vector<int> cpus_with_dir(const Reading& r, const std::vector<int>& online,
                               const std::string& sub, std::string_view consequence) {
  std::vector<int> with, without;
  for (int cpu : online)
    (r.host.sys_exists(cpu_dir(cpu) + "/" + sub) ? with : without).push_back(cpu);
  if (with.empty() && !online.empty()) {
    r.problem(r.sys_path(cpu_dir(online.front()) + "/" + sub) + ": missing on every online CPU; " +
              std::string(consequence));
    return with;
  }
  for (int cpu : without)
    r.problem(r.sys_path(cpu_dir(cpu) + "/" + sub) + ": missing; " + std::string(consequence) +
              " for cpu " + std::to_string(cpu));
  return with;
}

void read_cmdline(const Reading& r, Posture& posture) {
  posture.cmdline = posture.fingerprint.cmdline;
  posture.isolation = parse_isolation_params(parse_kernel_cmdline(posture.cmdline));
  const IsolationParams& iso = posture.isolation;
  const std::pair<const char*, const std::optional<std::string>*> lists[] = {
      {"isolcpus", &iso.isolcpus}, {"nohz_full", &iso.nohz_full},
      {"rcu_nocbs", &iso.rcu_nocbs}, {"irqaffinity", &iso.irqaffinity}};
  for (const auto& [key, value] : lists) {
    std::string error;
    if (*value && !param_cpus(*value, &error))
      r.problem(r.proc_path("cmdline") + ": " + key + ": " + error);
  }
}

// Online, offline, isolated, tickless and siblings come from read_topology, which has its own
// fallbacks and problem lines.
void read_cpus(const HostReader& host, Posture& posture) {
  Topology topology = read_topology(host);
  posture.online = topology.online;
  posture.offline = topology.offline;
  posture.isolated = topology.isolated;
  posture.nohz_full = topology.nohz_full;
  for (const CpuTopology& cpu : topology.cpus)
    posture.smt.thread_siblings[cpu.cpu] = cpu.thread_siblings;
  for (std::string& line : topology.problems) posture.problems.push_back(std::move(line));
}

void read_smt(const Reading& r, SmtState& smt) {
  const std::string dir = std::string(cpu_root) + "/smt";
  if (!r.host.sys_exists(dir)) {
    r.problem(r.sys_path(dir) +
              ": missing (no CONFIG_HOTPLUG_SMT, or not x86); SMT control unknown");
    return;
  }
  smt.control = r.sys(dir + "/control", "");
  if (const std::optional<long long> active = r.sys_integer(dir + "/active"))
    smt.active = *active != 0;
}

CpuFreq read_cpufreq(const Reading& r, int cpu) {
  const std::string dir = cpu_dir(cpu) + "/cpufreq/";
  return {cpu, r.sys(dir + "scaling_governor", ""), r.sys_integer(dir + "scaling_min_freq"),
          r.sys_integer(dir + "scaling_max_freq"), r.sys_integer(dir + "scaling_cur_freq")};
}

CpuIdle read_cpuidle(const Reading& r, int cpu) {
  const std::string dir = cpu_dir(cpu) + "/cpuidle";
  CpuIdle idle{cpu, {}};
  for (int index : numbered_entries(r.host.list_sys(dir), "state")) {
    const std::string state = dir + "/state" + std::to_string(index) + "/";
    IdleState entry{index, r.sys(state + "name", "").value_or(""),
                    r.sys_integer(state + "latency"), true};
    if (const std::optional<long long> disable = r.sys_integer(state + "disable"))
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
std::vector<IrqAffinity> read_irqs(const Reading& r) {
  const std::optional<std::string> interrupts = r.proc("interrupts", "IRQ names unknown");
  // The action names of the numbered rows; LOC, RES and the other named rows have no IRQ dir.
  std::map<int, std::string> names;
  for (const InterruptRow& row : parse_proc_interrupts(interrupts.value_or("")).rows) {
    if (all_digits(row.source)) names[static_cast<int>(parse_integer(row.source).value_or(-1))] = row.name;
  }
  std::vector<IrqAffinity> irqs;
  std::vector<int> fell_back;
  const std::vector<int> numbers = numbered_entries(r.host.list_proc("irq"), "");
  if (numbers.empty()) r.problem(r.proc_path("irq") + ": missing or empty; IRQ affinities unknown");
  for (int irq : numbers) {
    const std::string dir = "irq/" + std::to_string(irq) + "/";
    IrqAffinity entry{irq, names.count(irq) ? names.at(irq) : "", {}, true};
    std::optional<std::string> text = r.host.read_proc(dir + "effective_affinity_list");
    if (!text) {
      entry.effective = false;
      fell_back.push_back(irq);
      text = r.proc(dir + "smp_affinity_list", "IRQ " + std::to_string(irq) + " left out");
      if (!text) continue;
    }
    std::string error;
    const std::optional<std::vector<int>> cpus = parse_cpu_list(*text, &error);
    const std::string file = entry.effective ? "effective_affinity_list" : "smp_affinity_list";
    if (!cpus) {
      r.problem(r.proc_path(dir + file) + ": " + error + "; IRQ " + std::to_string(irq) +
                " left out");
      continue;
    }
    entry.cpus = *cpus;
    irqs.push_back(std::move(entry));
  }
  if (!fell_back.empty()) {
    const std::size_t others = fell_back.size() - 1;
    r.problem(r.proc_path("irq/" + std::to_string(fell_back.front()) + "/effective_affinity_list") +
              ": missing" + (others ? " (and for " + std::to_string(others) + " other IRQs)" : "") +
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
    if (std::optional<std::string> microcode = cpuinfo_field(*cpuinfo, "microcode"))
      return *microcode;
  }
  const std::string relative = cpu_dir(0) + "/microcode/version";
  if (std::optional<std::string> version = r.host.read_sys(relative))
    return std::string(trim(*version));
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
  return fp;
}

Posture read_posture(const HostReader& host) {
  Posture posture;
  const Reading r(host, &posture.problems);
  posture.fingerprint = read_fingerprint(host, &posture.problems);
  read_cmdline(r, posture);
  read_cpus(host, posture);
  read_smt(r, posture.smt);
  for (int cpu : cpus_with_dir(r, posture.online, "cpufreq", "governor and frequencies unknown"))
    posture.cpufreq.push_back(read_cpufreq(r, cpu));
  for (int cpu : cpus_with_dir(r, posture.online, "cpuidle", "idle states unknown"))
    posture.cpuidle.push_back(read_cpuidle(r, cpu));
  posture.clocksource = read_clocksource(host, &posture.problems);
  posture.thp = {read_choice(r, "kernel/mm/transparent_hugepage/enabled"),
                 read_choice(r, "kernel/mm/transparent_hugepage/defrag")};
  posture.sysctls = read_sysctls(r);
  posture.workqueue_cpus = read_workqueue_cpus(r);
  posture.irqs = read_irqs(r);
  return posture;
}

std::vector<IrqAffinity> irqs_on_cpu(const Posture& posture, int cpu) {
  std::vector<IrqAffinity> out;
  for (const IrqAffinity& irq : posture.irqs)
    if (std::binary_search(irq.cpus.begin(), irq.cpus.end(), cpu)) out.push_back(irq);
  return out;
}

std::vector<std::pair<std::string, std::string>> fingerprint_fields(const Fingerprint& fp) {
  return {{"kernel", fp.kernel},           {"cmdline", fp.cmdline},
          {"microcode", fp.microcode},     {"bios_vendor", fp.bios_vendor},
          {"bios_version", fp.bios_version}, {"bios_date", fp.bios_date},
          {"cpu_model", fp.cpu_model}};
}

std::vector<std::string> fingerprint_changes(const Fingerprint& before, const Fingerprint& after) {
  const auto old_fields = fingerprint_fields(before);
  const auto new_fields = fingerprint_fields(after);
  std::vector<std::string> changes;
  for (std::size_t i = 0; i < old_fields.size(); ++i) {
    if (old_fields[i].second == new_fields[i].second) continue;
    changes.push_back(old_fields[i].first + ": \"" + old_fields[i].second + "\" -> \"" +
                      new_fields[i].second + "\"");
  }
  return changes;
}

}  // namespace jitterd
