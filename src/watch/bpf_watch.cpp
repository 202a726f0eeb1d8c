// SPDX-License-Identifier: Apache-2.0
#include "watch/bpf_watch.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "host/cpu_list.h"
#include "watch/bpf_load_log.h"
#include "watch/bpf_map_reads.h"
#include "watch_bpf.h"
#include "watch_bpf.skel.h"
#include "watch_timers_shared.h"

namespace jitterd {
namespace {

using namespace bpf_maps;

static_assert(kSourceBuckets == JD_BUCKETS);
static_assert(sizeof(PairedCpuFigures::tick_stop_failures) / sizeof(std::uint64_t) == JD_TICK_DEPENDENCIES);

// The tracepoint behind each program; a required one missing means the engine cannot work.
struct ProgramTracepoint {
  std::string_view program, tracepoint;
  bool required;
};
constexpr ProgramTracepoint kTracepoints[] = {
    {"sched_switch", "sched:sched_switch", true},
    {"sched_wakeup", "sched:sched_wakeup", true},
    {"irq_entry", "irq:irq_handler_entry", true},
    {"irq_exit", "irq:irq_handler_exit", true},
    {"softirq_entry", "irq:softirq_entry", true},
    {"softirq_exit", "irq:softirq_exit", true},
    {"tlb_flush", "tlb:tlb_flush", false},
    {"nmi_handler", "nmi:nmi_handler", false},
    {"tick_stop", "timer:tick_stop", false},
    {"ipi_send_cpu", "ipi:ipi_send_cpu", false},
    {"ipi_send_cpumask", "ipi:ipi_send_cpumask", false},
    {"hrtimer_start", "timer:hrtimer_start", false},
    {"timer_start", "timer:timer_start", false},
};

std::string tracepoint_of(std::string_view program) {
  for (const ProgramTracepoint& t : kTracepoints)
    if (t.program == program) return std::string(t.tracepoint);
  return "irq_vectors:" + std::string(program);  // the x86 vectors' programs are named as their events
}

bool required(std::string_view program) {
  for (const ProgramTracepoint& t : kTracepoints)
    if (t.program == program) return t.required;
  return false;
}

PairedOutlier outlier_of(const jd_outlier& raw) {
  PairedOutlier o;
  o.start_ns = raw.start_ns;
  o.end_ns = raw.end_ns;
  o.duration_ns = raw.duration_ns;
  o.cpu = static_cast<int>(raw.cpu);
  o.source = raw.source < JD_SOURCES ? std::size_t{raw.source} : std::size_t{JD_SRC_DEVICE_IRQ};
  o.id = raw.id;
  o.tgid = raw.tgid;
  o.kernel_thread = (raw.task_flags & JD_TASK_KERNEL_THREAD) != 0;
  o.per_cpu = (raw.task_flags & JD_TASK_PER_CPU) != 0;
  o.application = (raw.task_flags & JD_TASK_APPLICATION) != 0;
  o.name.assign(raw.name, strnlen(raw.name, sizeof(raw.name)));
  return o;
}

// The kernel's pid_max: the program's thread map holds that many, so every thread fits.
std::uint32_t thread_map_entries() {
  std::uint64_t pid_max = 4u << 20;  // PID_MAX_LIMIT on 64-bit
  if (std::FILE* f = std::fopen("/proc/sys/kernel/pid_max", "r")) {
    unsigned long long read = 0;
    if (std::fscanf(f, "%llu", &read) == 1 && read > 0) pid_max = read;
    std::fclose(f);
  }
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(pid_max, 1024, 4u << 20));
}

}  // namespace

std::size_t bpf_ring_bytes(std::size_t watched, std::size_t sampled) {
  const std::size_t wanted = watched * (256u << 10) + sampled * (2u << 20);
  std::size_t bytes = 256u << 10;
  while (bytes < wanted && bytes < (64u << 20)) bytes *= 2;
  return bytes;
}

struct BpfWatch::Loaded {
  watch_bpf* skeleton = nullptr;
  std::vector<bpf_link*> links;
  ring_buffer* ring = nullptr;
  int possible_cpus = 0;
  std::vector<std::uint32_t> role;  // by CPU, JD_ROLE_*
  // Drained from the ring, waiting for read() (watched CPUs) or take_records().
  std::vector<PairedOutlier> watched_pending;
  std::uint64_t watched_dropped = 0;
  std::map<int, std::deque<PairedOutlier>> records;  // by CPU: every sampled CPU, the watched ones asked for
  std::map<int, std::uint64_t> records_dropped;
  std::vector<std::uint64_t> watch_threshold;  // by CPU: the watch's own outlier threshold (watched CPUs)
  std::map<int, bool> records_wanted;          // watched CPUs whose records take_records gives
  BpfMsrCounters
      msr;  // the watched CPUs' SMI, APERF and MPERF counters, closed after ~Loaded destroyed the program
  LiveKernelSymbols symbols;  // the timers' functions' names

  // Every CPU's slot of the per-CPU roles array. A CPU both watched and sampled (the sampling plan
  // allows neither) would be sampled.
  bool write_roles(const Options& options, std::string& why_not) {
    static_assert(sizeof(jd_cpu_role) % 8 == 0);
    std::vector<jd_cpu_role> roles(static_cast<std::size_t>(possible_cpus), jd_cpu_role{});
    for (int cpu : options.cpus)
      if (cpu >= 0 && cpu < possible_cpus)
        roles[static_cast<std::size_t>(cpu)] = {options.outlier_threshold_ns, JD_ROLE_WATCHED, 0};
    for (const SampledCpu& c : options.sampled)
      if (c.cpu >= 0 && c.cpu < possible_cpus)
        roles[static_cast<std::size_t>(c.cpu)] = {c.outlier_threshold_ns, JD_ROLE_SAMPLED, 0};
    role.assign(roles.size(), JD_ROLE_NONE);
    watch_threshold.assign(roles.size(), 0);
    for (std::size_t cpu = 0; cpu < roles.size(); ++cpu) {
      role[cpu] = roles[cpu].role;
      if (roles[cpu].role == JD_ROLE_WATCHED) watch_threshold[cpu] = roles[cpu].outlier_threshold_ns;
    }
    const std::uint32_t zero = 0;
    if (bpf_map_update_elem(bpf_map__fd(skeleton->maps.roles), &zero, roles.data(), BPF_ANY) != 0) {
      why_not = "could not write the BPF program's CPU roles: " + std::string(std::strerror(errno));
      return false;
    }
    // The program's cost counts from here: the runs before (the attaches' own IPIs reach every
    // CPU, counted there as a CPU without a role, untimed) would be read as the role's.
    const std::vector<jd_program_cost> none(roles.size(), jd_program_cost{});
    for (std::uint32_t program = 0; program < JD_PROGRAMS; ++program) {
      if (bpf_map_update_elem(bpf_map__fd(skeleton->maps.costs), &program, none.data(), BPF_ANY) != 0) {
        why_not = "could not clear the BPF program's cost counters: " + std::string(std::strerror(errno));
        return false;
      }
    }
    return true;
  }

  // The msr counters' perf event arrays hold one slot per possible CPU; their reader runs only where
  // there is a watched CPU to count on. The timer map: JD_TIMER_FUNCTIONS functions, more with
  // more watched CPUs (256 each), up to what a reading walks.
  bool size_cpu_maps(const Options& options) {
    const std::size_t timers =
        std::clamp<std::size_t>(256 * options.cpus.size(), JD_TIMER_FUNCTIONS, kHashEntries);
    if (bpf_map__set_max_entries(skeleton->maps.timer_starts, static_cast<std::uint32_t>(timers)) != 0)
      return false;
    skeleton->rodata->smi_enabled = options.msr_pmu.smi && !options.cpus.empty() ? 1 : 0;
    skeleton->rodata->frequency_enabled = options.msr_pmu.has_frequency() && !options.cpus.empty() ? 1 : 0;
    const auto slots = static_cast<std::uint32_t>(possible_cpus);
    return bpf_map__set_max_entries(skeleton->maps.smi_events, slots) == 0 &&
           bpf_map__set_max_entries(skeleton->maps.aperf_events, slots) == 0 &&
           bpf_map__set_max_entries(skeleton->maps.mperf_events, slots) == 0;
  }

  // The watched CPUs' SMI, APERF and MPERF counters into the program's perf event arrays, from the
  // first reading on (a counter the kernel refuses is left out and said by smi_why_not() or
  // frequency_why_not()).
  void open_smi(const Options& options) {
    msr.open(options.msr_pmu, options.cpus,
             {bpf_map__fd(skeleton->maps.smi_events), bpf_map__fd(skeleton->maps.aperf_events),
              bpf_map__fd(skeleton->maps.mperf_events)});
  }

  static int arrived(void* context, void* data, std::size_t size) {
    Loaded& l = *static_cast<Loaded*>(context);
    if (size < sizeof(jd_outlier)) return 0;
    jd_outlier raw;
    std::memcpy(&raw, data, sizeof(raw));
    const std::uint32_t role = raw.cpu < l.role.size() ? l.role[raw.cpu] : JD_ROLE_NONE;
    const int cpu = static_cast<int>(raw.cpu);
    if (role == JD_ROLE_SAMPLED || (role == JD_ROLE_WATCHED && l.records_wanted.count(cpu) != 0)) {
      std::deque<PairedOutlier>& pending = l.records[cpu];
      if (pending.size() >= kMaxSampledEventsPerCpu) {
        pending.pop_front();
        l.records_dropped[cpu] += 1;
      }
      pending.push_back(outlier_of(raw));
    }
    if (role == JD_ROLE_WATCHED && raw.duration_ns >= l.watch_threshold[raw.cpu]) {
      if (l.watched_pending.size() >= kMaxOutliersPerReading)
        l.watched_dropped += 1;
      else
        l.watched_pending.push_back(outlier_of(raw));
    }
    return 0;
  }

  ~Loaded() {
    if (ring) ring_buffer__free(ring);
    for (bpf_link* link : links) bpf_link__destroy(link);
    if (skeleton) watch_bpf__destroy(skeleton);
  }
};

BpfWatch::BpfWatch(Options options) : loaded_(std::make_unique<Loaded>()), options_(std::move(options)) {}
BpfWatch::~BpfWatch() = default;

std::unique_ptr<BpfWatch> BpfWatch::open(const Options& options, std::string& why_not) {
  std::error_code ignored;
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux", ignored)) {
    why_not = "the kernel has no BTF (/sys/kernel/btf/vmlinux is missing), which the BPF program needs";
    return nullptr;
  }
  capture_libbpf_log();
  std::unique_ptr<BpfWatch> watch(new BpfWatch(options));
  Loaded& l = *watch->loaded_;
  l.possible_cpus = libbpf_num_possible_cpus();
  if (l.possible_cpus <= 0) {
    why_not = "libbpf could not count the possible CPUs";
    return nullptr;
  }
  l.skeleton = watch_bpf__open();
  if (!l.skeleton) {
    why_not = load_failure(errno);
    return nullptr;
  }
  l.skeleton->rodata->jitterd_tgid = static_cast<std::uint32_t>(options.jitterd_tgid);
  l.skeleton->rodata->watched_count =
      static_cast<std::uint32_t>(std::min<std::size_t>(options.cpus.size(), JD_MAX_WATCHED));
  for (std::uint32_t i = 0; i < l.skeleton->rodata->watched_count; ++i) {
    const auto cpu = static_cast<std::uint32_t>(options.cpus[i]);
    if (cpu >= JD_MAX_WATCHED) continue;  // beyond the mask the program reads
    l.skeleton->rodata->watched_bits[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
    l.skeleton->rodata->watched_words = std::max(l.skeleton->rodata->watched_words, cpu / 64 + 1);
  }
  const auto ring_bytes = static_cast<std::uint32_t>(bpf_ring_bytes(options.cpus.size(), options.sampled.size()));
  int error = bpf_map__set_max_entries(l.skeleton->maps.outliers, ring_bytes);
  if (error == 0) error = bpf_map__set_max_entries(l.skeleton->maps.application, thread_map_entries());
  if (error == 0) error = l.size_cpu_maps(options) ? watch_bpf__load(l.skeleton) : -EINVAL;
  if (error != 0) {
    why_not = load_failure(-error);
    return nullptr;
  }
  // The watched CPUs as a list too, for an IPI sent to one from another CPU.
  for (std::uint32_t i = 0; i < l.skeleton->rodata->watched_count; ++i) {
    const auto cpu = static_cast<std::uint32_t>(options.cpus[i]);
    if (bpf_map_update_elem(bpf_map__fd(l.skeleton->maps.watched_list), &i, &cpu, BPF_ANY) != 0) {
      why_not = "could not write the BPF program's list of watched CPUs: " + std::string(std::strerror(errno));
      return nullptr;
    }
  }
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, l.skeleton->obj) {
    const std::string_view name = bpf_program__name(program);
    bpf_link* link = bpf_program__attach(program);
    if (link) {
      l.links.push_back(link);
      continue;
    }
    const int error = errno;
    if (required(name)) {
      why_not = "could not attach to the tracepoint " + tracepoint_of(name) + ": " + std::strerror(error);
      return nullptr;
    }
    watch->missing_.push_back(tracepoint_of(name));
  }
  // Each CPU's role, written once every program is attached, so no interruption is seen entering
  // with its exit program not yet there.
  if (!l.write_roles(options, why_not)) return nullptr;
  l.open_smi(options);
  l.ring = ring_buffer__new(bpf_map__fd(l.skeleton->maps.outliers), &Loaded::arrived, &l, nullptr);
  if (!l.ring) {
    why_not = "could not open the BPF outlier ring: " + std::string(std::strerror(errno));
    return nullptr;
  }
  return watch;
}

void BpfWatch::set_application(const std::vector<int>& tids) { track(tids, samplers_); }
void BpfWatch::set_sampler_threads(const std::vector<int>& tids) { track(application_, tids); }

// The program's map of tracked threads made the union of both lists, by difference.
void BpfWatch::track(std::vector<int> application, std::vector<int> samplers) {
  application = sorted_cpus(std::move(application));  // thread numbers, sorted as CPUs are
  samplers = sorted_cpus(std::move(samplers));
  std::vector<int> wanted;
  std::set_union(application.begin(), application.end(), samplers.begin(), samplers.end(),
                 std::back_inserter(wanted));
  const int fd = bpf_map__fd(loaded_->skeleton->maps.application);
  std::vector<int> gone, added;
  std::set_difference(tracked_.begin(), tracked_.end(), wanted.begin(), wanted.end(), std::back_inserter(gone));
  std::set_difference(wanted.begin(), wanted.end(), tracked_.begin(), tracked_.end(), std::back_inserter(added));
  for (int tid : gone) {
    const auto key = static_cast<std::uint32_t>(tid);
    bpf_map_delete_elem(fd, &key);
  }
  std::vector<int> kept;
  const std::uint8_t one = 1;
  for (int tid : added) {
    const auto key = static_cast<std::uint32_t>(tid);
    if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) == 0) kept.push_back(tid);  // else no memory for it
  }
  // The CPUs' remembered answers (is_application in the program) are asked again after a change.
  if (!gone.empty() || !kept.empty())
    __atomic_fetch_add(&loaded_->skeleton->bss->application_generation, 1, __ATOMIC_RELEASE);
  std::vector<int> now;
  std::set_difference(tracked_.begin(), tracked_.end(), gone.begin(), gone.end(), std::back_inserter(now));
  now.insert(now.end(), kept.begin(), kept.end());
  std::sort(now.begin(), now.end());
  tracked_ = std::move(now);
  application_untracked_ = 0;
  for (int tid : application)
    if (!std::binary_search(tracked_.begin(), tracked_.end(), tid)) application_untracked_ += 1;
  application_ = std::move(application);
  samplers_ = std::move(samplers);
}

void BpfWatch::drain() { ring_buffer__consume(loaded_->ring); }

// The IPI senders' map: each entry's rise goes to the totals, and the entries idle for a whole
// window are deleted, so the map holds about one window's senders and never stays full (an IPI
// counted in the instant between the program's lookup of an idle entry and its deletion is lost).
void BpfWatch::age_ipi_senders(PairedReading& reading) {
  const int fd = bpf_map__fd(loaded_->skeleton->maps.ipi_senders);
  std::vector<jd_ipi_sender_key> keys;
  std::vector<IpiSenderEntry> entries;
  walk_hash<jd_ipi_sender_key, std::uint64_t>(fd, [&](const jd_ipi_sender_key& key, std::uint64_t count) {
    keys.push_back(key);
    entries.push_back({key.cpu, std::string(key.comm, strnlen(key.comm, sizeof(key.comm))), count});
  });
  for (std::size_t idle : ipi_senders_.update(entries))
    if (bpf_map_delete_elem(fd, &keys[idle]) != 0) ipi_senders_.not_deleted(entries[idle]);
  for (PairedCpuFigures& c : reading.cpus) {
    c.ipi_senders = ipi_senders_.totals(c.cpu);
    c.ipi_senders_other = ipi_senders_.other(c.cpu);
  }
}

PairedReading BpfWatch::read() {
  Loaded& l = *loaded_;
  PairedReading reading;
  for (int cpu : options_.cpus) {
    PairedCpuFigures figures;
    figures.cpu = cpu;
    figures.sources.resize(JD_SOURCES);
    reading.cpus.push_back(std::move(figures));
  }
  const auto cpus = static_cast<std::size_t>(l.possible_cpus);
  read_figures(bpf_map__fd(l.skeleton->maps.figures), cpus, reading);
  read_counters(bpf_map__fd(l.skeleton->maps.counters), cpus, reading);
  read_device_irqs(bpf_map__fd(l.skeleton->maps.irqs), reading);
  age_ipi_senders(reading);
  reading.programs = read_costs(bpf_map__fd(l.skeleton->maps.costs), l.role);
  drain();
  reading.outliers = std::move(l.watched_pending);
  reading.outliers_dropped = std::exchange(l.watched_dropped, 0);
  l.watched_pending.clear();
  return reading;
}

std::map<int, SmiReading> BpfWatch::read_smis() {
  Loaded& l = *loaded_;
  return l.msr.read_smis(bpf_map__fd(l.skeleton->maps.smi_states), static_cast<std::size_t>(l.possible_cpus));
}

std::map<int, CycleCounts> BpfWatch::read_cycles() {
  Loaded& l = *loaded_;
  return l.msr.read_cycles(bpf_map__fd(l.skeleton->maps.smi_states), static_cast<std::size_t>(l.possible_cpus));
}

TimerStartsReading BpfWatch::read_timer_starts() {
  Loaded& l = *loaded_;
  TimerStartsReading reading = jitterd::read_timer_starts(
      bpf_map__fd(l.skeleton->maps.timer_starts), bpf_map__fd(l.skeleton->maps.timer_counters),
      static_cast<std::size_t>(l.possible_cpus), l.symbols.get());
  l.symbols.saw_inexact(reading.inexact > 0);
  return reading;
}

std::string BpfWatch::smi_why_not() const {
  if (!options_.msr_pmu.smi) return "the msr PMU has no smi event";
  return loaded_->msr.any() ? "" : loaded_->msr.why_not();
}

std::string BpfWatch::frequency_why_not() const {
  if (!options_.msr_pmu.has_frequency())
    return options_.msr_pmu.aperf ? options_.msr_pmu.mperf_why : options_.msr_pmu.aperf_why;
  return loaded_->msr.frequency_why_not();
}

PairedRecords BpfWatch::take_records(int cpu) {
  Loaded& l = *loaded_;
  drain();
  PairedRecords out;
  if (const auto pending = l.records.find(cpu); pending != l.records.end()) {
    out.events.assign(std::make_move_iterator(pending->second.begin()),
                      std::make_move_iterator(pending->second.end()));
    l.records.erase(pending);
  }
  out.dropped = std::exchange(l.records_dropped[cpu], 0);
  const std::vector<jd_cpu_counters> counters =
      all_counters(bpf_map__fd(l.skeleton->maps.counters), static_cast<std::size_t>(l.possible_cpus));
  if (cpu >= 0 && static_cast<std::size_t>(cpu) < counters.size())
    out.lost = counters[static_cast<std::size_t>(cpu)].outliers_lost;
  return out;
}

void BpfWatch::want_records(int cpu, std::uint64_t threshold_ns) {
  Loaded& l = *loaded_;
  if (cpu < 0 || static_cast<std::size_t>(cpu) >= l.role.size() ||
      l.role[static_cast<std::size_t>(cpu)] != JD_ROLE_WATCHED)
    return;
  l.records_wanted[cpu] = true;
  // Lower that CPU's slot of the roles map: a per-CPU array's update writes every CPU's slot, so
  // read them all, change one, write them all (from this thread only; the program only reads it).
  const int fd = bpf_map__fd(l.skeleton->maps.roles);
  std::vector<jd_cpu_role> roles(static_cast<std::size_t>(l.possible_cpus));
  const std::uint32_t zero = 0;
  if (bpf_map_lookup_elem(fd, &zero, roles.data()) != 0) return;
  jd_cpu_role& role = roles[static_cast<std::size_t>(cpu)];
  if (threshold_ns >= role.outlier_threshold_ns) return;
  role.outlier_threshold_ns = threshold_ns;
  bpf_map_update_elem(fd, &zero, roles.data(), BPF_ANY);
}

}  // namespace jitterd
