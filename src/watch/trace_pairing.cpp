// SPDX-License-Identifier: Apache-2.0
#include "watch/trace_pairing.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <utility>

#include "watch/bpf/watch_bpf.h"

namespace jitterd {
namespace {

constexpr int kRemoteShootdown = 1;  // enum tlb_flush_reason's TLB_REMOTE_SHOOTDOWN

// sched_switch's prev_state as the tracepoint reports it: the sleep states in the low byte, and
// TASK_REPORT_MAX above them for a preempted task ("R+"); a runnable task has no sleep bit.
bool was_runnable(std::int64_t prev_state) { return (prev_state & 0xff) == 0; }

// What may nest in what: a hard interrupt's handler (a vector's or a device IRQ's) runs with
// interrupts off, and a softirq never runs inside another, so a frame of the same kind on top
// (a softirq anywhere below) at an entry lost its exit. That happens when the recording starts
// between an entry and its exit: perf installs each event with an IPI to the CPU, and the entry
// of the IPI's own vector may be recorded before its exit is. (PREEMPT_RT threads device IRQ
// handlers, so a vector may nest in one there; that is kept.)
enum class FrameKind { vector, device, softirq };

FrameKind kind_of(std::size_t source) {
  if (source == JD_SRC_DEVICE_IRQ) return FrameKind::device;
  if (source >= JD_SRC_SOFTIRQ_FIRST && source <= JD_SRC_SOFTIRQ_LAST) return FrameKind::softirq;
  return FrameKind::vector;
}

std::size_t bucket_of(std::uint64_t ns) {
  const std::size_t log2 = ns == 0 ? 0 : static_cast<std::size_t>(std::bit_width(ns) - 1);
  return std::min(log2, kSourceBuckets - 1);
}

}  // namespace

InterruptionPairing::InterruptionPairing(std::vector<int> cpus, std::uint64_t outlier_threshold_ns,
                                         int jitterd_tgid)
    : threshold_ns_(outlier_threshold_ns), jitterd_tgid_(jitterd_tgid) {
  for (const int cpu : cpus) {
    CpuState& s = cpus_[cpu];
    s.figures.cpu = cpu;
    s.figures.sources.resize(JD_SOURCES);
  }
}

void InterruptionPairing::set_application(std::vector<int> tids) {
  std::sort(tids.begin(), tids.end());
  application_ = std::move(tids);
}

void InterruptionPairing::book(CpuState& s, std::size_t source, std::uint64_t ns) {
  SourceFigures& f = s.figures.sources[source];
  f.count += 1;
  f.ns += ns;
  f.max_ns = std::max(f.max_ns, ns);
  f.buckets[bucket_of(ns)] += 1;
}

void InterruptionPairing::record(CpuState& s, PairedOutlier o) {
  if (s.records.size() >= kMaxSampledEventsPerCpu) {
    s.records.pop_front();
    ++s.records_dropped;
  }
  s.records.push_back(std::move(o));
}

void InterruptionPairing::keep(CpuState& s, PairedOutlier o) {
  if (o.duration_ns >= s.records_threshold) record(s, o);
  if (o.duration_ns < threshold_ns_) return;
  if (outliers_.size() >= kMaxOutliersPerReading) {
    ++dropped_;
    return;
  }
  outliers_.push_back(std::move(o));
}

void InterruptionPairing::enter(CpuState& s, const TraceEvent& e, std::size_t source) {
  const FrameKind kind = kind_of(source);
  const auto stale = [&] {
    if (kind == FrameKind::softirq)
      return std::any_of(s.stack.begin(), s.stack.end(),
                         [](const Frame& f) { return kind_of(f.entry_source) == FrameKind::softirq; });
    return kind_of(s.stack.back().entry_source) == kind;
  };
  while (!s.stack.empty() && stale()) {
    s.stack.pop_back();
    ++s.figures.unmatched_exits;
  }
  if (s.stack.size() >= kMaxPairingDepth) {
    ++s.figures.too_deep;
    Frame placeholder;  // so that its exit pops it without booking
    placeholder.source = placeholder.entry_source = source;
    s.stack.push_back(std::move(placeholder));
    return;
  }
  Frame frame;
  frame.start = e.time_ns;
  frame.booked_at_entry = s.booked;
  frame.source = frame.entry_source = source;
  frame.id = e.number;
  if (source == JD_SRC_DEVICE_IRQ) frame.name = e.name;
  s.stack.push_back(std::move(frame));
}

void InterruptionPairing::leave(CpuState& s, const TraceEvent& e, std::size_t source) {
  if (s.stack.empty()) {
    ++s.figures.unmatched_exits;
    return;
  }
  const bool kept = s.stack.size() <= kMaxPairingDepth;
  Frame frame = std::move(s.stack.back());
  s.stack.pop_back();
  if (!kept) return;                   // a frame too deep to have been kept
  if (frame.entry_source != source) {  // an entry missed (the ring lost it): start afresh
    s.stack.clear();
    ++s.figures.unmatched_exits;
    return;
  }
  const std::uint64_t wall = e.time_ns > frame.start ? e.time_ns - frame.start : 0;
  const std::uint64_t nested = s.booked - frame.booked_at_entry;
  const std::uint64_t own = wall > nested ? wall - nested : 0;
  s.booked += own;
  book(s, frame.source, own);
  if (source == JD_SRC_DEVICE_IRQ) {
    DeviceIrqFigures& irq = s.figures.device_irqs[frame.id];
    irq.count += 1;
    irq.ns += own;
    irq.max_ns = std::max(irq.max_ns, own);
  }
  if (own < lowest_threshold(s)) return;
  PairedOutlier o;
  o.start_ns = frame.start;
  o.end_ns = e.time_ns;
  o.duration_ns = own;
  o.cpu = s.figures.cpu;
  o.source = frame.source;
  o.id = static_cast<std::uint32_t>(frame.id);
  o.name = frame.name.substr(0, 15);  // as the kernel's 16-byte copy keeps it
  keep(s, std::move(o));
}

void InterruptionPairing::switched(CpuState& s, const TraceEvent& e,
                                   const std::function<PreempterFacts(int tid)>& facts) {
  // No task switch happens inside an interrupt or a softirq: a frame still open lost its exit.
  if (!s.stack.empty()) {
    ++s.figures.unmatched_exits;
    s.stack.clear();
  }
  if (s.off_since != 0 && e.number == s.off_tid) {
    const std::uint64_t wall = e.time_ns > s.off_since ? e.time_ns - s.off_since : 0;
    const std::uint64_t nested = s.booked - s.off_booked;
    const std::uint64_t own = wall > nested ? wall - nested : 0;
    // pid 0 is the CPU's idle task (swapper/N, in no /proc): a per-CPU kernel thread, as the BPF
    // program finds it (the sampler's real-time throttling switches to it).
    const PreempterFacts who = s.preempter == 0 ? PreempterFacts{0, true, true} : facts(s.preempter);
    const bool application = std::binary_search(application_.begin(), application_.end(), s.preempter);
    std::size_t source = JD_SRC_PREEMPT_STRAY;
    if (who.tgid == jitterd_tgid_ && jitterd_tgid_ != 0)
      source = JD_SRC_PREEMPT_JITTERD;
    else if (who.kernel_thread && who.per_cpu)
      source = JD_SRC_PREEMPT_KERNEL_PERCPU;
    else if (application)
      source = JD_SRC_PREEMPT_APPLICATION;
    book(s, source, own);
    if (own >= lowest_threshold(s)) {
      PairedOutlier o;
      o.start_ns = s.off_since;
      o.end_ns = e.time_ns;
      o.duration_ns = own;
      o.cpu = s.figures.cpu;
      o.source = source;
      o.id = static_cast<std::uint32_t>(s.preempter);
      o.tgid = static_cast<std::uint32_t>(who.tgid);
      o.kernel_thread = who.kernel_thread;
      o.per_cpu = who.per_cpu;
      o.application = application;
      o.name = s.preempter_comm;
      keep(s, std::move(o));
    }
    s.off_since = 0;
  }
  if (!was_runnable(e.value) || !std::binary_search(application_.begin(), application_.end(), e.prev_tid)) return;
  s.off_since = std::max<std::uint64_t>(e.time_ns, 1);
  s.off_booked = s.booked;
  s.off_tid = e.prev_tid;
  s.preempter = e.number;
  s.preempter_comm = e.name;
}

void InterruptionPairing::add(const TraceEvent& event, const PairingTracepoint& role,
                              const std::function<PreempterFacts(int tid)>& facts) {
  const auto found = cpus_.find(event.cpu);
  if (found == cpus_.end()) return;
  CpuState& s = found->second;
  switch (role.role) {
    case PairingRole::entry:
    case PairingRole::exit: {
      std::size_t source = role.source;
      if (source == JD_SRC_SOFTIRQ_FIRST) {
        if (event.number < 0 || event.number > JD_SRC_SOFTIRQ_LAST - JD_SRC_SOFTIRQ_FIRST) return;
        source += static_cast<std::size_t>(event.number);
      }
      if (role.role == PairingRole::entry)
        enter(s, event, source);
      else
        leave(s, event, source);
      return;
    }
    case PairingRole::nmi:
      if (event.value > 0) {
        s.booked += static_cast<std::uint64_t>(event.value);
        book(s, JD_SRC_NMI, static_cast<std::uint64_t>(event.value));
      }
      return;
    case PairingRole::tlb_flush:
      if (event.number == kRemoteShootdown && !s.stack.empty() && s.stack.size() <= kMaxPairingDepth) {
        Frame& top = s.stack.back();
        if (top.source == JD_SRC_CALL_FUNCTION || top.source == JD_SRC_CALL_FUNCTION_SINGLE)
          top.source = JD_SRC_TLB;
      }
      return;
    case PairingRole::tick_stop:
      if (event.number == 0) {
        const auto mask = static_cast<std::uint64_t>(event.value);
        const std::size_t bit =
            mask == 0 ? JD_TICK_DEPENDENCIES : static_cast<std::size_t>(std::bit_width(mask) - 1);
        if (bit < JD_TICK_DEPENDENCIES)
          s.figures.tick_stop_failures[bit] += 1;
        else
          s.figures.tick_stop_failures_unknown += 1;
      }
      return;
    case PairingRole::sched_switch:
      switched(s, event, facts);
      return;
    case PairingRole::mark:
      if (s.records_threshold != UINT64_MAX) {
        PairedOutlier o;
        o.start_ns = o.end_ns = event.time_ns;
        o.cpu = s.figures.cpu;
        o.source = role.source;
        o.id = static_cast<std::uint32_t>(event.number);
        record(s, std::move(o));
      }
      return;
    case PairingRole::ignore:
      return;
  }
}

void InterruptionPairing::lost(int cpu, std::uint64_t records) {
  const auto found = cpus_.find(cpu);
  if (found == cpus_.end() || records == 0) return;
  found->second.figures.outliers_lost += records;
  found->second.stack.clear();
  found->second.off_since = 0;
}

void InterruptionPairing::want_records(int cpu, std::uint64_t threshold_ns) {
  const auto s = cpus_.find(cpu);
  if (s != cpus_.end()) s->second.records_threshold = std::min(s->second.records_threshold, threshold_ns);
}

PairedRecords InterruptionPairing::take_records(int cpu) {
  PairedRecords out;
  const auto s = cpus_.find(cpu);
  if (s == cpus_.end()) return out;
  out.events.assign(std::make_move_iterator(s->second.records.begin()),
                    std::make_move_iterator(s->second.records.end()));
  s->second.records.clear();
  out.dropped = std::exchange(s->second.records_dropped, 0);
  return out;
}

PairedReading InterruptionPairing::take_reading() {
  PairedReading reading;
  for (const auto& [cpu, s] : cpus_) reading.cpus.push_back(s.figures);
  reading.outliers = std::move(outliers_);
  reading.outliers_dropped = dropped_;
  outliers_.clear();
  dropped_ = 0;
  return reading;
}

}  // namespace jitterd
