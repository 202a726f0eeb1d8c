// SPDX-License-Identifier: Apache-2.0
// The tracepoints method's engine: what watch.bpf.c does in the kernel, done over perf's records of
// the same tracepoints (host/trace_events.h) on the reader's CPU. Per watched CPU, in time order,
// it pairs each interruption's entry with its exit (hard IRQs, the x86 APIC vectors, softirqs;
// an entry of a kind that cannot nest in the frame on top ends that frame as an exit lost),
// takes NMIs at their own length, turns a call-function IPI that flushed the TLB for another CPU
// into `tlb`, and times each preemption of the application from the switch away (while it was
// runnable) to the switch back; nested time counts once, as the innermost's. It keeps the figures
// watch/bpf_watch.h's reading has (count, time, longest and log2 histogram per source, device IRQs,
// tick-stop failures, outliers), so the watch probe, the status page and the baselines take either
// method's reading alike. Pure: plain values in, plain values out; one thread at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "host/trace_format.h"
#include "watch/bpf_watch.h"

namespace jitterd {

// What one recorded tracepoint does to the pairing.
// mark: an entry whose exit the kernel does not record (irq_work_exit, which perf refuses): no
// length, so it books nothing, but where records are wanted it is one of length 0 at its entry, so
// a gap with nothing longer in it is still named.
enum class PairingRole { entry, exit, nmi, tlb_flush, tick_stop, sched_switch, mark, ignore };

struct PairingTracepoint {
  PairingRole role = PairingRole::entry;
  // entry, exit: the source it opens or closes (watch_bpf.h's enum jd_source; JD_SRC_DEVICE_IRQ and
  // JD_SRC_SOFTIRQ_FIRST stand for every IRQ and every softirq vector, told apart by number).
  std::size_t source = 0;
};

// What the reader learns of a task that preempted the application, from procfs when it drains.
struct PreempterFacts {
  int tgid = 0;  // 0: the task had gone
  bool kernel_thread = false;
  bool per_cpu = false;  // allowed on one CPU only
};

class InterruptionPairing {
 public:
  // `jitterd_tgid`: preemptions by this process's threads are jitterd's own.
  InterruptionPairing(std::vector<int> cpus, std::uint64_t outlier_threshold_ns, int jitterd_tgid);

  // The application's threads now: a switch away from one of these while runnable is a preemption.
  void set_application(std::vector<int> tids);

  // One event of a watched CPU (others are ignored), in time order per CPU. `facts` is asked about
  // each task that preempts the application.
  void add(const TraceEvent& event, const PairingTracepoint& role,
           const std::function<PreempterFacts(int tid)>& facts);

  // Records the kernel lost (its ring was full) on `cpu`: the open frames may have lost their
  // exits, so that CPU's pairing starts afresh, and they count as outliers_lost.
  void lost(int cpu, std::uint64_t records);

  // The figures so far (cumulative, as watch/bpf_watch.h's read()) and the outliers since the
  // previous call, oldest first (at most kMaxOutliersPerReading; the rest counted as dropped).
  PairedReading take_reading();

  // Keep `cpu`'s interruptions and preemptions down to `threshold_ns` (own time) as records too
  // (KernelWatch::want_records; the lowest threshold asked for holds, as the BPF engine's), at most kMaxSampledEventsPerCpu between two takes (then the
  // oldest go, counted as dropped); the outliers keep the pairing's own threshold.
  void want_records(int cpu, std::uint64_t threshold_ns);
  // `cpu`'s records since the last take, oldest first (none where none was wanted).
  PairedRecords take_records(int cpu);

 private:
  struct Frame {
    std::uint64_t start = 0, booked_at_entry = 0;
    std::size_t source = 0, entry_source = 0;
    int id = 0;
    std::string name;  // a device IRQ's handler, from its entry
  };
  struct CpuState {
    PairedCpuFigures figures;
    std::uint64_t booked = 0;
    std::vector<Frame> stack;
    std::uint64_t off_since = 0, off_booked = 0;  // off_since 0: the application is not off the CPU
    int off_tid = -1;
    int preempter = -1;
    std::string preempter_comm;
    std::uint64_t records_threshold = UINT64_MAX;  // none wanted
    std::deque<PairedOutlier> records;
    std::uint64_t records_dropped = 0;
  };

  void enter(CpuState& s, const TraceEvent& e, std::size_t source);
  void leave(CpuState& s, const TraceEvent& e, std::size_t source);
  void book(CpuState& s, std::size_t source, std::uint64_t ns);
  void switched(CpuState& s, const TraceEvent& e, const std::function<PreempterFacts(int tid)>& facts);
  // `o` as a record of its CPU and as an outlier, where its own time reaches either threshold.
  void keep(CpuState& s, PairedOutlier o);
  // `o` as a record of its CPU (the oldest going beyond the bound).
  static void record(CpuState& s, PairedOutlier o);
  std::uint64_t lowest_threshold(const CpuState& s) const { return std::min(threshold_ns_, s.records_threshold); }

  std::uint64_t threshold_ns_;
  int jitterd_tgid_;
  std::vector<int> application_;  // sorted
  std::map<int, CpuState> cpus_;
  std::vector<PairedOutlier> outliers_;
  std::uint64_t dropped_ = 0;
};

// The most frames one CPU keeps open, as the BPF program's stack (JD_MAX_DEPTH).
inline constexpr std::size_t kMaxPairingDepth = 8;

}  // namespace jitterd
