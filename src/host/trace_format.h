// SPDX-License-Identifier: Apache-2.0
// The pure half of trace_events.h: tracepoint format files, perf sample decoding, the ring walk,
// and interruptions placed on a clock's time line for matching with records. Plain functions over
// plain values, tested on literal data; safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "measure/counter_calibration.h"
#include "measure/interruption_ring.h"

namespace jitterd {

// One "field:" line of a tracepoint's format file, e.g.
// "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;".
struct TraceField {
  std::string name;  // bare: "prev_comm" for "char prev_comm[16]"
  std::size_t offset = 0;
  std::size_t size = 0;
  bool is_signed = false;
  // "__data_loc char[] name": the field holds a u32 whose low 16 bits are the string's offset
  // from the start of the raw record and whose high 16 bits are its length.
  bool data_loc = false;

  bool operator==(const TraceField&) const = default;
};

struct TracepointFormat {
  int id = -1;  // from "ID: 225"; -1 when the text has none
  std::vector<TraceField> fields;

  const TraceField* find(std::string_view name) const;  // nullptr when absent
};

// Parses <tracefs>/events/<group>/<name>/format. Lines other than "ID:" and "field:" are
// ignored, as is a field line without a name, offset or size.
TracepointFormat parse_tracepoint_format(std::string_view format_text);

enum class TraceEventKind {
  irq,           // irq:irq_handler_entry, a device (or legacy timer) IRQ
  softirq,       // irq:softirq_entry
  sched_switch,  // sched:sched_switch, another task took the CPU
  // Any x86 irq_vectors:*_entry (the local timer and the IPIs are not irq_handler_entry events
  // there), told apart by its tracepoint (number: the vector; name: the table's event name,
  // host/x86_vectors.h)
  vector_entry,
  // The tracepoints engine (watch/trace_watch.h) pairs entries with exits:
  vector_exit,   // any x86 irq_vectors:*_exit
  irq_exit,      // irq:irq_handler_exit (number: the IRQ)
  softirq_exit,  // irq:softirq_exit (number: vec)
  nmi,           // nmi:nmi_handler, written when the handler returns (value: its delta_ns)
  tlb_flush,     // tlb:tlb_flush (number: reason, 1 = TLB_REMOTE_SHOOTDOWN)
  tick_stop,     // timer:tick_stop (number: success; value: the dependency mask); the last kind
};

struct TracepointSpec {
  std::string_view path;  // under <tracefs>/events
  TraceEventKind kind;
  bool required;  // the irq_vectors group exists on x86 only
};

// A tracepoint found on this machine, with its parsed format.
struct Tracepoint {
  std::string path;  // "irq/irq_handler_entry"
  TraceEventKind kind;
  TracepointFormat format;
};

struct TraceEvent {
  int cpu = -1;
  int tid = -1;               // the task that was running when the event hit (PERF_SAMPLE_TID)
  std::uint64_t time_ns = 0;  // of the clock the reader opened with (CLOCK_MONOTONIC)
  TraceEventKind kind = TraceEventKind::irq;
  // irq: the IRQ number; softirq: vec; sched_switch: next_pid; x86 vectors: the vector.
  int number = -1;
  // irq: the action name ("virtio0-input.0"); softirq: "NET_RX"; sched_switch: next_comm; x86
  // vectors: the event's name in host/x86_vectors.h ("local_timer").
  std::string name;
  // For people: "irq 24 virtio0-input.0", "NET_RX", "switch to kworker/0:1", "local timer".
  std::string detail;
  // sched_switch: prev_pid and prev_state (0: it was runnable, preempted); nmi: delta_ns;
  // tick_stop: the dependency mask.
  int prev_tid = -1;
  std::int64_t value = 0;
  // The tracepoint's index in the list decode_sample() was given (TraceEventReader::tracepoints()).
  std::size_t tracepoint = 0;

  bool operator==(const TraceEvent&) const = default;
};

// Decodes one PERF_RECORD_SAMPLE written for sample_type PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
// PERF_SAMPLE_CPU | PERF_SAMPLE_RAW without sample_id_all. The kernel writes the fields in the
// order of enum perf_event_sample_format (perf_output_sample()), so the record is:
//
//   offset  0  u32 type (PERF_RECORD_SAMPLE = 9), u16 misc, u16 size   perf_event_header
//   offset  8  u32 pid, u32 tid                                         PERF_SAMPLE_TID
//   offset 16  u64 time, ns of attr.clockid                             PERF_SAMPLE_TIME
//   offset 24  u32 cpu, u32 reserved                                    PERF_SAMPLE_CPU
//   offset 32  u32 raw_size                                             PERF_SAMPLE_RAW
//   offset 36  raw_size bytes: the tracepoint's entry as its format file lays it out, starting
//              with u16 common_type (the tracepoint's ID), padded so the record ends on 8 bytes
//
// all in host byte order. `record` starts at the header. std::nullopt for another record type,
// a truncated record, a common_type not in `tracepoints`, or a field missing from its format.
std::optional<TraceEvent> decode_sample(std::span<const std::byte> record,
                                        const std::vector<Tracepoint>& tracepoints);

// The count of a PERF_RECORD_LOST (header, u64 id, u64 lost); std::nullopt for another record.
std::optional<std::uint64_t> decode_lost(std::span<const std::byte> record);

// Walks the complete records of a perf ring's data area between the positions `tail` and `head`
// (free-running byte counts, taken modulo ring.size(), a power of two), calling `visit` with
// each. A record that straddles the end of the area is copied whole into `scratch` first. Stops
// early at a header that is malformed (size under 8) or runs past `head`. Returns the position
// after the last record visited: the new data_tail.
std::uint64_t read_ring(std::span<const std::byte> ring, std::uint64_t tail, std::uint64_t head,
                        std::vector<std::byte>& scratch,
                        const std::function<void(std::span<const std::byte>)>& visit);

// One interruption on a clock's time line (the engines' CLOCK_MONOTONIC; the caller converts from ticks).
struct TimedInterval {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// Interruptions (in counter ticks) as intervals of the clock `to_clock` maps to, in their order;
// without `to_clock`, ticks that are that clock's nanoseconds already.
std::vector<TimedInterval> timed_intervals(std::span<const Interruption> interruptions,
                                           const std::optional<TickToClock>& to_clock);

// The fields decode_sample() reads for a tracepoint of `kind`; probe() checks that each format
// has them, so decoding cannot fail later.
std::vector<std::string_view> trace_fields_needed(TraceEventKind kind);

// The cause of an interruption a task took (it preempted the sampler or the loop): not in
// attribution.h's cause_names, which counts interrupts only and cannot see preemption.
inline constexpr std::string_view preempted_cause = "preempted";

}  // namespace jitterd
