// SPDX-License-Identifier: Apache-2.0
// The loop probe's segment parser (loops/loop_segment.h) on any bytes: the input as one copy read
// twice, and its two halves as a first and a second copy. Never a read outside the copies, and a
// segment it accepts holds what the layout allows: at most a ring's worth of entries, slots that
// fit the slot count, a histogram at least as full as its published samples, and a window max
// that never exceeds the maximum gap; and labels that cannot break the exposition: each a
// Prometheus label name that is none of the names jitterd or Prometheus puts on a loop's series
// (le, quantile, loop, cpu, cause, instance, job), unique, with a value of printable ASCII
// without a quote (loops/loop_segment.h kLoopReservedLabels, docs/loops.md#labels).
#include <algorithm>
#include <span>
#include <string_view>

#include "fuzz_input.h"
#include "loops/loop_segment.h"

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
  require(r.header.labels.size() <= 8);
  for (std::size_t i = 0; i < r.header.labels.size(); ++i) {
    const auto& [key, value] = r.header.labels[i];
    require(jitterd::loop_label_problem(key, value).empty());
    require(!key.empty() && key.substr(0, 2) != "__");
    for (std::string_view reserved : jitterd::kLoopReservedLabels) require(key != reserved);
    for (char c : key)
      require((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    for (char c : value) require(c >= 0x20 && c < 0x7f && c != '"');
    for (std::size_t j = 0; j < i; ++j) require(r.header.labels[j].first != key);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  static_cast<void>(jitterd::parse_loop_header(bytes));
  check(jitterd::parse_loop_segment(bytes, bytes), true);
  check(jitterd::parse_loop_segment(bytes.first(size / 2), bytes.subspan(size / 2, size / 2)), false);
  // As the reader copies: the header and histogram, then regions of the slots and the ring (any
  // first entry and count the input's last bytes say, the bytes after the head standing in).
  if (size >= jitterd::kLoopHeadBytes + 4) {
    const auto head = bytes.first(jitterd::kLoopHeadBytes);
    const auto rest = bytes.subspan(jitterd::kLoopHeadBytes);
    const std::uint8_t* tail = data + size - 4;
    const std::uint32_t slot_count = std::min<std::size_t>(tail[1], rest.size() / 16);
    const std::uint32_t ring_count = std::min<std::size_t>(tail[3], (rest.size() - 16 * slot_count) / 16);
    const jitterd::LoopCopy copy{
        head,
        {tail[0], slot_count, rest.first(16 * std::size_t{slot_count})},
        {tail[2], ring_count, rest.subspan(16 * std::size_t{slot_count}, 16 * std::size_t{ring_count})}};
    const jitterd::LoopParse parsed = jitterd::parse_loop_copies(copy, copy);
    check(parsed, true);
    if (parsed.reading) {
      jitterd::fuzz::require(parsed.reading->ring.size() <= ring_count);
      jitterd::fuzz::require(parsed.reading->slots.size() <= slot_count);
    }
  }
  return 0;
}
