// SPDX-License-Identifier: Apache-2.0
// The loop probe's segment parser (watch/loop_segment.h) on any bytes: the input as one copy read
// twice, and its two halves as a first and a second copy. Never a read outside the copies, and a
// segment it accepts holds what the layout allows: at most a ring's worth of entries, slots that
// fit the slot count, a histogram at least as full as its published samples, and a window max
// that never exceeds the maximum gap.
#include <span>

#include "fuzz_input.h"
#include "watch/loop_segment.h"

namespace {

void check(const jitterd::LoopParse& parsed, bool one_copy) {
  using jitterd::fuzz::require;
  if (!parsed.reading) {
    require(!parsed.message.empty());
    return;
  }
  const jitterd::LoopSegmentReading& r = *parsed.reading;
  require(r.ring.size() <= r.header.ring_capacity);
  require(r.slots.size() <= r.header.slot_count);
  require(r.counts.gaps.total() >= r.samples);
  // With one copy read twice, the maximum gap is the very value the slots were checked against.
  if (one_copy) require(r.max_between(0, ~std::uint64_t{0}) <= r.max_gap);
  require(!r.header.name.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  static_cast<void>(jitterd::parse_loop_header(bytes));
  check(jitterd::parse_loop_segment(bytes, bytes), true);
  check(jitterd::parse_loop_segment(bytes.first(size / 2), bytes.subspan(size / 2, size / 2)), false);
  return 0;
}
