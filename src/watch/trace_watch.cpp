// SPDX-License-Identifier: Apache-2.0
#include "watch/trace_watch.h"

#include <algorithm>
#include <stdexcept>

#include <unistd.h>

#include "host/tasks.h"
#include "host/text.h"
#include "host/x86_vectors.h"
#include "watch/bpf/watch_bpf.h"

namespace jitterd {
namespace {

WatchTracepoint entry(std::string_view path, TraceEventKind kind, bool required, std::size_t source) {
  return {{path, kind, required}, {PairingRole::entry, source}};
}
WatchTracepoint exit_of(std::string_view path, TraceEventKind kind, bool required, std::size_t source) {
  return {{path, kind, required}, {PairingRole::exit, source}};
}

// The x86 APIC vectors' tracepoints, from the one table the BPF program's handlers come from too
// (host/x86_vectors.h JD_X86_VECTORS).
struct Vector {
  std::string_view entry, exit;
  std::size_t source;
};
#define JD_TRACE_VECTOR(event, stem, source, cause) \
  {"irq_vectors/" #event "_entry", "irq_vectors/" #event "_exit", source},
constexpr Vector kVectors[] = {JD_X86_VECTORS(JD_TRACE_VECTOR)};
#undef JD_TRACE_VECTOR

// "irq_vectors/thermal_apic_entry" as the bpf method names it: "irq_vectors:thermal_apic_entry".
std::string event_name(std::string path) {
  std::replace(path.begin(), path.end(), '/', ':');
  return path;
}

// Who preempted the application, from procfs: its process, whether it is a kernel thread and
// whether it may run on one CPU only. A task gone by now is a stray of unknown process.
PreempterFacts facts_from_proc(const HostReader& host, int tid) {
  PreempterFacts facts;
  const std::string dir = std::to_string(tid);
  const auto stat = host.read_proc(dir + "/stat");
  const auto status = host.read_proc(dir + "/status");
  if (!stat || !status) return facts;
  if (const auto parsed = parse_task_stat(*stat)) facts.kernel_thread = is_kernel_thread(*parsed);
  if (const auto tgid = status_field(*status, "Tgid"); tgid) facts.tgid = parse_number<int>(*tgid).value_or(0);
  if (const auto allowed = parse_cpus_allowed_list(*status)) facts.per_cpu = allowed->size() == 1;
  return facts;
}

}  // namespace

const std::vector<WatchTracepoint>& watch_tracepoints() {
  static const std::vector<WatchTracepoint> all = [] {
    std::vector<WatchTracepoint> out = {
        entry("irq/irq_handler_entry", TraceEventKind::irq, true, JD_SRC_DEVICE_IRQ),
        exit_of("irq/irq_handler_exit", TraceEventKind::irq_exit, true, JD_SRC_DEVICE_IRQ),
        entry("irq/softirq_entry", TraceEventKind::softirq, true, JD_SRC_SOFTIRQ_FIRST),
        exit_of("irq/softirq_exit", TraceEventKind::softirq_exit, true, JD_SRC_SOFTIRQ_FIRST),
        {{"sched/sched_switch", TraceEventKind::sched_switch, true}, {PairingRole::sched_switch, 0}},
        {{"nmi/nmi_handler", TraceEventKind::nmi, false}, {PairingRole::nmi, JD_SRC_NMI}},
        {{"tlb/tlb_flush", TraceEventKind::tlb_flush, false}, {PairingRole::tlb_flush, 0}},
        {{"timer/tick_stop", TraceEventKind::tick_stop, false}, {PairingRole::tick_stop, 0}},
    };
    for (const Vector& v : kVectors) {
      out.push_back(entry(v.entry, TraceEventKind::vector_entry, false, v.source));
      out.push_back(exit_of(v.exit, TraceEventKind::vector_exit, false, v.source));
    }
    return out;
  }();
  return all;
}

std::span<const TracepointSpec> watch_tracepoint_specs() {
  static const std::vector<TracepointSpec> specs = [] {
    std::vector<TracepointSpec> out;
    for (const WatchTracepoint& t : watch_tracepoints()) out.push_back(t.spec);
    return out;
  }();
  return specs;
}

std::unique_ptr<TraceWatch> TraceWatch::open(const HostReader& host, const Options& options,
                                             std::string& why_not) {
  try {
    return std::unique_ptr<TraceWatch>(new TraceWatch(host, options));
  } catch (const std::exception& e) {
    why_not = e.what();
    return nullptr;
  }
}

TraceWatch::TraceWatch(const HostReader& host, Options options)
    : host_(host),
      options_(std::move(options)),
      reader_(host, options_.cpus, options_.ring_bytes / static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)),
              watch_tracepoint_specs(), CLOCK_MONOTONIC),
      pairing_(options_.cpus, options_.outlier_threshold_ns, options_.jitterd_tgid) {
  const auto opened = [&](std::string_view path) {
    return std::any_of(reader_.tracepoints().begin(), reader_.tracepoints().end(),
                       [&](const Tracepoint& t) { return t.path == path; });
  };
  for (const Tracepoint& t : reader_.tracepoints()) {
    PairingTracepoint role;
    for (const WatchTracepoint& w : watch_tracepoints())
      if (w.spec.path == t.path) role = w.pairing;
    // A vector whose exit is missing cannot be paired: its entry is a mark (irq_work, whose exit
    // perf refuses: no length, so the watch's figures leave it out, its count still in the counts'
    // other_irq; a record of length 0 where records are wanted, so a gap it alone made is named).
    for (const Vector& v : kVectors)
      if (t.path == v.entry && !opened(v.exit))
        role.role = PairingRole::mark;
      else if (t.path == v.exit && !opened(v.entry))
        role.role = PairingRole::ignore;
    roles_.push_back(role);
  }
  for (const std::string& path : reader_.missing()) missing_.push_back(event_name(path));
  lost_seen_.assign(options_.cpus.size(), 0);
}

void TraceWatch::set_application(const std::vector<int>& tids) { pairing_.set_application(tids); }

PairedReading TraceWatch::read() {
  drain();
  return pairing_.take_reading();
}

PairedRecords TraceWatch::take_records(int cpu) {
  drain();
  PairedRecords out = pairing_.take_records(cpu);
  const auto at = std::find(options_.cpus.begin(), options_.cpus.end(), cpu);
  if (at != options_.cpus.end()) out.lost = lost_seen_[static_cast<std::size_t>(at - options_.cpus.begin())];
  return out;
}

void TraceWatch::drain() {
  const std::vector<TraceEvent> events = reader_.drain();
  const std::vector<std::uint64_t>& lost = reader_.lost_by_ring();
  for (std::size_t i = 0; i < lost.size() && i < options_.cpus.size(); ++i) {
    pairing_.lost(options_.cpus[i], lost[i] - lost_seen_[i]);
    lost_seen_[i] = lost[i];
  }
  std::map<int, PreempterFacts> known;  // this drain's lookups: a task preempting often is read once
  const auto facts = [&](int tid) {
    const auto found = known.find(tid);
    if (found != known.end()) return found->second;
    return known[tid] = facts_from_proc(host_, tid);
  };
  for (const TraceEvent& e : events)
    if (e.tracepoint < roles_.size()) pairing_.add(e, roles_[e.tracepoint], facts);
}

std::map<int, std::uint64_t> TraceWatch::tracer_wakeups() const {
  std::map<int, std::uint64_t> out;
  const std::vector<std::uint64_t> written = reader_.bytes_written();
  // The kernel wakes the reader each time the data written passes another watermark's worth.
  for (std::size_t i = 0; i < written.size() && i < options_.cpus.size(); ++i)
    out[options_.cpus[i]] = written[i] / reader_.ring_bytes();
  return out;
}

}  // namespace jitterd
