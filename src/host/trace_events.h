// SPDX-License-Identifier: Apache-2.0
// Names the kernel event behind each interruption, where attribution.h can only share a window's
// interruptions among interrupt counts. Per CPU, perf_event_open(2) records the irq, softirq and
// sched_switch tracepoints (and on x86 the APIC vector ones: the local timer and the IPIs are not
// irq_handler_entry events there) into one ring buffer, timestamped with CLOCK_MONOTONIC_RAW;
// match_interruptions() then pairs each interruption with the events that overlapped it. The
// parsers, the record decoder, the ring walk and the matching are pure functions over plain
// values, tested on literal data and safe from any thread. TraceEventReader is the thin shell over
// the kernel: one owner thread, on a housekeeping CPU, never a sampler. Tracing is not free: the
// kernel spends a little time on the traced CPU writing each record, and one irq_work interrupt
// per ring's worth of records written.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"
#include "host/trace_format.h"

namespace jitterd {

struct TraceAvailability {
  bool available = false;
  // Why not, naming the path: "no tracefs: /sys/kernel/tracing/events and ... are missing".
  std::string reason;
  std::filesystem::path events_dir;     // the tracefs events directory found
  std::vector<Tracepoint> tracepoints;  // those found, in traced_tracepoints order
  std::vector<std::string> missing;     // optional tracepoints not found ("irq_vectors/...")
};

class TraceEventReader {
 public:
  // Looks for tracefs at <sysfs>/kernel/tracing/events, then <sysfs>/kernel/debug/tracing/events,
  // and reads the ID and format of each of traced_tracepoints. Available when the required ones
  // are all readable; otherwise `reason` names the path and tells "not mounted" from "not root"
  // (tracefs is mode 0700). Reads only: never mounts tracefs.
  static TraceAvailability probe(const HostReader& host);

  // Opens, for each CPU, one perf event per available tracepoint, all writing into one ring of
  // `ring_pages` pages (a power of two). Recording starts at once. Throws std::runtime_error
  // naming the tracepoint, the CPU and the error (with the capability needed on EACCES/EPERM).
  TraceEventReader(const HostReader& host, const std::vector<int>& cpus, std::size_t ring_pages = 64);
  ~TraceEventReader();
  TraceEventReader(const TraceEventReader&) = delete;
  TraceEventReader& operator=(const TraceEventReader&) = delete;

  // Every complete record written since the last drain, decoded and sorted by time. Rings that
  // filled up between drains dropped records: counted by lost().
  std::vector<TraceEvent> drain();

  std::uint64_t lost() const { return lost_; }
  // Samples that decode_sample() rejected, which should stay 0.
  std::uint64_t undecoded() const { return undecoded_; }
  const std::vector<Tracepoint>& tracepoints() const { return tracepoints_; }
  std::string method() const { return "tracepoints"; }

 private:
  struct CpuRing;
  std::vector<Tracepoint> tracepoints_;
  std::vector<std::unique_ptr<CpuRing>> rings_;
  std::vector<std::byte> scratch_;
  std::uint64_t lost_ = 0;
  std::uint64_t undecoded_ = 0;
};

}  // namespace jitterd
