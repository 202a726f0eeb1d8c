// SPDX-License-Identifier: Apache-2.0
// The segment a loop probe writes (include/jitterd/loop_probe.h; layout in docs/loops.md), parsed
// from copied bytes as hostile input: every field is checked before it is used, nothing is read
// outside the copy, and the counters are checked against each other. Pure functions of their
// arguments; safe from any thread.
//
// The reader (watch/loop_reader.h) copies each segment twice, `first` then `second`, and the
// parser takes what a single copy cannot give from the pair, as the sampler's readers do in
// memory: a window max slot counts only if its id is the same in both copies (the writer zeroes
// the id before it rewrites a slot, and ids only grow, so the max between two equal ids is that
// slot's), a ring entry only if the writer had not begun to overwrite it by the second copy, and a
// counter that went down from the first copy to the second is a torn copy or a lie (the reader
// copies again, then refuses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/gap_counts.h"
#include "measure/interruption_ring.h"

namespace jitterd {

// Why a segment was refused: the `reason` label of jitterd_loop_refused_total.
enum class LoopRefusal {
  not_regular,   // a symlink, a directory, a FIFO, a device
  owner,         // owned by a user the configuration does not accept
  size,          // smaller than a header, larger than any layout, or not what the header says
  truncated,     // shorter than its header says (or shrank while it was read)
  magic,         // not a loop segment, or not finished
  version,       // a layout newer than this jitterd reads
  layout,        // the header's sizes, offsets or bucket layout are not the one this jitterd knows
  name,          // the name or labels are empty, unterminated or hold other characters
  frequency,     // a counter method or frequency no counter has
  inconsistent,  // counters that contradict each other within one reading
  went_down,     // a count that went down since the last reading of the same segment
  jumped,        // a count that rose by more than the time since the last reading allows
  unreadable,    // open or read failed
};
inline constexpr LoopRefusal kLoopRefusals[] = {
    LoopRefusal::not_regular, LoopRefusal::owner,        LoopRefusal::size,      LoopRefusal::truncated,
    LoopRefusal::magic,       LoopRefusal::version,      LoopRefusal::layout,    LoopRefusal::name,
    LoopRefusal::frequency,   LoopRefusal::inconsistent, LoopRefusal::went_down, LoopRefusal::jumped,
    LoopRefusal::unreadable};
std::string_view loop_refusal_name(LoopRefusal reason);

// The counter methods a segment may name (the header's JITTERD_LOOP_COUNTER_*), as jitterd's tick
// methods are named ("lfence_rdtsc", ...), "caller" for the application's own reads.
std::string_view loop_counter_name(std::uint32_t counter);

// Frequencies a counter may run at: 1 MHz (slowest arch timers are tens of MHz) to 10 GHz.
inline constexpr std::uint64_t kLoopMinHertz = 1'000'000;
inline constexpr std::uint64_t kLoopMaxHertz = 10'000'000'000;

// The largest segment any valid header describes (the most slots and ring entries).
std::uint64_t loop_segment_max_bytes();

struct LoopSegmentHeader {
  std::uint32_t version = 0;
  std::uint64_t total_bytes = 0;
  std::int32_t pid = 0;
  std::int32_t cpu = 0;
  std::uint64_t start_time = 0;  // the writer's /proc/PID/stat starttime, clock ticks since boot
  std::uint32_t counter = 0;
  std::uint64_t hertz = 0;
  std::uint32_t ring_capacity = 0;
  std::uint32_t slot_count = 0;
  std::uint64_t slot_ticks = 0;
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
};

struct LoopSegmentReading {
  LoopSegmentHeader header;
  GapCountsTicks counts;  // the histogram, sampled ticks, interruptions and stolen ticks
  std::uint64_t samples = 0;
  std::uint64_t threshold_ticks = 0;  // 0 while the loop warms up
  std::uint64_t floor_ticks = 0;
  std::uint64_t min_gap = 0;  // UINT64_MAX before the first publication
  std::uint64_t max_gap = 0;
  std::uint64_t heartbeat_tick = 0;
  std::uint64_t first_tick = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slots;  // (slot id = tick / slot_ticks + 1, max gap)
  std::vector<Interruption> ring;                              // oldest first
  std::uint64_t ring_pushed = 0;                               // sequence number after the newest entry

  // The exact max gap over the slots of [from_tick, to_tick], as WindowMax::max_between.
  std::uint64_t max_between(std::uint64_t from_tick, std::uint64_t to_tick) const;
};

struct LoopParse {
  std::optional<LoopSegmentReading> reading;
  LoopRefusal reason = LoopRefusal::unreadable;
  std::string message;  // why, with the values seen: "magic 0x... is not a loop segment's"
};

// The header alone (the first JITTERD_LOOP_HEADER_BYTES): the reader learns from it how many bytes
// to copy. A reading with only the header filled, or the refusal.
LoopParse parse_loop_header(std::span<const std::byte> bytes);

// The whole segment from two copies taken one after the other (the same bytes twice where there
// is only one copy: the fuzz target, literal tests).
LoopParse parse_loop_segment(std::span<const std::byte> first, std::span<const std::byte> second);

// Checks a reading against the previous accepted reading of the same segment, taken
// `elapsed_seconds` earlier: no count went down, and no more gaps were recorded than one per
// nanosecond of that time allows (plus the two publications' worth a reading may lag). nullopt
// when it holds.
std::optional<std::pair<LoopRefusal, std::string>> loop_reading_progress_problem(
    const LoopSegmentReading& previous, const LoopSegmentReading& now, double elapsed_seconds);

}  // namespace jitterd
