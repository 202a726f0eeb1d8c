// SPDX-License-Identifier: Apache-2.0
// Reads kernel tracepoints through perf: per CPU, perf_event_open(2) records the tracepoints asked
// for (the tracepoints engine's list, watch/trace_watch.h: interrupt entries and exits, on x86 the
// APIC vectors, since the local timer and the IPIs are not irq_handler_entry events there,
// softirqs, sched_switch, ...) into one ring buffer, timestamped with the clock asked for. The
// parsers, the record decoder and the ring walk (host/trace_format.h) are pure functions over
// plain values, tested on literal data and safe from any thread. TraceEventReader is the thin
// shell over the kernel: one owner thread, on a housekeeping CPU, never a sampler. Tracing is not
// free: the kernel spends a little time on the traced CPU writing each record, and one irq_work
// interrupt per ring's worth of records written.
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

#include <time.h>

#include "host/host_reader.h"
#include "host/trace_format.h"

namespace jitterd {

struct TraceAvailability {
  bool available = false;
  // Why not, naming the path: "no tracefs: /sys/kernel/tracing/events and ... are missing".
  std::string reason;
  std::vector<Tracepoint> tracepoints;  // those found, in the order of the specs asked for
  std::vector<std::string> missing;     // optional tracepoints not found ("irq_vectors/...")
};

class TraceEventReader {
 public:
  // Looks for tracefs at <sysfs>/kernel/tracing/events, then <sysfs>/kernel/debug/tracing/events,
  // and reads the ID and format of each of `specs`. Available when the required ones are all
  // readable; otherwise `reason` names the path and tells "not mounted" from "not root" (tracefs is
  // mode 0700). Reads only: never mounts tracefs.
  static TraceAvailability probe(const HostReader& host, std::span<const TracepointSpec> specs);

  // Opens, for each CPU, one perf event per available tracepoint of `specs`, all writing into one
  // ring of `ring_pages` pages (a power of two), timestamped with `clock`. Recording starts at
  // once. Throws std::runtime_error naming the tracepoint, the CPU and the error (with the
  // capability needed on EACCES/EPERM).
  TraceEventReader(const HostReader& host, const std::vector<int>& cpus, std::size_t ring_pages,
                   std::span<const TracepointSpec> specs, clockid_t clock = CLOCK_MONOTONIC);
  ~TraceEventReader();
  TraceEventReader(const TraceEventReader&) = delete;
  TraceEventReader& operator=(const TraceEventReader&) = delete;

  // Every complete record written since the last drain, decoded and sorted by time. Rings that
  // filled up between drains dropped records: counted by lost_by_ring().
  std::vector<TraceEvent> drain();

  // The records each ring dropped, in the order of `cpus`.
  const std::vector<std::uint64_t>& lost_by_ring() const { return lost_by_ring_; }
  // Samples that decode_sample() rejected, which should stay 0.
  std::uint64_t undecoded() const { return undecoded_; }
  const std::vector<Tracepoint>& tracepoints() const { return tracepoints_; }
  // The optional tracepoints of `specs` this kernel lacks or refuses to sample
  // ("irq_vectors/thermal_apic_entry").
  const std::vector<std::string>& missing() const { return missing_; }
  // Bytes the kernel has written into each CPU's ring since it opened (its data_head), in the
  // order of `cpus`: the kernel wakes the ring's reader with an irq_work on that CPU once per
  // ring's worth (the watermark is the whole ring), so this over the ring's size counts them.
  std::vector<std::uint64_t> bytes_written() const;
  std::size_t ring_bytes() const { return ring_bytes_; }

 private:
  struct CpuRing;
  std::vector<Tracepoint> tracepoints_;
  std::vector<std::string> missing_;
  std::size_t ring_bytes_ = 0;
  std::vector<std::unique_ptr<CpuRing>> rings_;
  std::vector<std::byte> scratch_;
  std::vector<std::uint64_t> lost_by_ring_;
  std::uint64_t undecoded_ = 0;
};

}  // namespace jitterd
