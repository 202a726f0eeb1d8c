// SPDX-License-Identifier: Apache-2.0
// The segment a loop probe writes (include/jitterd/loop_probe_layout.h; docs/loops.md), parsed
// from copied bytes as hostile input: every field is checked before it is used, nothing is read
// outside the copy, and the counters are checked against each other. Pure functions of their
// arguments; safe from any thread.
//
// The reader (loops/loop_reader.h) copies each segment twice, `first` then `second`, and the
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
#include <variant>
#include <vector>

#include "measure/gap_counts.h"
#include "measure/interruption_ring.h"
#include "measure/tick.h"

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
  links,         // more than one hard link: a file linked into the directory from elsewhere
  too_many,      // beyond the kMaxLoopSegments files of accepted users jitterd reads
};
inline constexpr LoopRefusal kLoopRefusals[] = {
    LoopRefusal::not_regular, LoopRefusal::owner,        LoopRefusal::size,      LoopRefusal::truncated,
    LoopRefusal::magic,       LoopRefusal::version,      LoopRefusal::layout,    LoopRefusal::name,
    LoopRefusal::frequency,   LoopRefusal::inconsistent, LoopRefusal::went_down, LoopRefusal::jumped,
    LoopRefusal::unreadable,  LoopRefusal::links,        LoopRefusal::too_many};
std::string_view loop_refusal_name(LoopRefusal reason);

// The tick method a segment's counter (the header's JITTERD_LOOP_COUNTER_*) is read with; none for
// the application's own reads (JITTERD_LOOP_COUNTER_CALLER) and unknown values.
std::optional<TickMethod> loop_counter_method(std::uint32_t counter);
// Its name, as jitterd's tick methods are named ("lfence_rdtsc", ...), "caller" for the
// application's own reads.
std::string_view loop_counter_name(std::uint32_t counter);

// Frequencies a counter may run at: 1 MHz (slowest arch timers are tens of MHz) to 10 GHz.
inline constexpr std::uint64_t kLoopMinHertz = 1'000'000;
inline constexpr std::uint64_t kLoopMaxHertz = 10'000'000'000;

// The labels jitterd itself puts on a loop's series, and the names a loop's own labels may
// therefore never take (a second `le` or `quantile` in one series makes Prometheus refuse the whole
// scrape, and with it every series of the host): the loop and its CPU (every loop series), the
// cause (the attribution families), the histogram's bucket bound and the summary's quantile, and
// the target labels Prometheus adds to every series it scrapes. The one list the parser checks;
// the loops probe builds its labels from the same names.
inline constexpr std::string_view kLoopLabelLoop = "loop";
inline constexpr std::string_view kLoopLabelCpu = "cpu";
inline constexpr std::string_view kLoopLabelCause = "cause";
inline constexpr std::string_view kLoopReservedLabels[] = {
    kLoopLabelLoop, kLoopLabelCpu, kLoopLabelCause, "le", "quantile", "instance", "job"};

// Why `key=value` cannot be one of a loop's labels, "" when it can: a Prometheus label name
// ([a-zA-Z_][a-zA-Z0-9_]*, at most 63, not starting with "__") that is not reserved, and a value
// of printable ASCII without a comma or a quote (the exposition escapes a backslash; a newline,
// any other control byte and any byte above 0x7e, which includes every non-UTF-8 sequence, are
// refused here).
std::string loop_label_problem(std::string_view key, std::string_view value);

// A segment's labels text, "key=value,key=value" (at most 8, keys unique, each as
// loop_label_problem allows): the labels, or the problem with the first that is not, naming it.
std::variant<std::vector<std::pair<std::string, std::string>>, std::string> parse_loop_labels(
    const std::string& text);

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

// The header and the histogram: what every reading copies whole.
inline constexpr std::size_t kLoopHeadBytes = 512 + 8 * 976;

// Entries [first, first + count) of one of the segment's circular arrays of 16-byte entries (the
// window max slots, the ring), indexes taken mod the array's size, as the reader copied them, in
// that order (a region that wraps is copied in two reads).
struct LoopRegion {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::span<const std::byte> bytes;
};

// One copy of a segment as the reader takes it: the header and histogram whole, and only the
// regions of the slots and the ring it chose (the window's slots it has not read yet, the ring
// entries since its last reading).
struct LoopCopy {
  std::span<const std::byte> head;  // kLoopHeadBytes
  LoopRegion slots, ring;
};

// The segment from two copies of the same regions taken one after the other. The reading holds
// the slots of the regions whose id held in both copies and the newest ring entries the region
// holds without a gap, up to the head (ring_pushed).
LoopParse parse_loop_copies(const LoopCopy& first, const LoopCopy& second);

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
