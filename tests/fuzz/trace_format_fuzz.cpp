// SPDX-License-Identifier: Apache-2.0
// The tracepoint format reader and the perf record decoders. The input is a tracefs format file
// and a byte string: the first two bytes give the format text's length, the rest after it is
// decoded as one record and walked as a ring buffer (of the largest power-of-two size it fills,
// with tail and head as the kernel could give them).
#include <bit>
#include <cstring>

#include "fuzz_input.h"
#include "host/trace_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  if (size < 3) return 0;
  const std::size_t format_size = std::min<std::size_t>(size - 3, (data[0] << 8) | data[1]);
  const std::uint8_t kind_byte = data[2];
  const std::string_view format_text = fuzz::as_text(data + 3, format_size);
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data + 3 + format_size),
                                        size - 3 - format_size);

  // Every kind the tracepoints engine decodes (the last is tick_stop).
  constexpr int kinds = static_cast<int>(TraceEventKind::tick_stop) + 1;
  const auto kind = static_cast<TraceEventKind>(kind_byte % kinds);
  const std::vector<Tracepoint> tracepoints = {Tracepoint{"fuzzed", kind, parse_tracepoint_format(format_text)}};
  if (const std::optional<TraceEvent> event = decode_sample(rest, tracepoints)) {
    if (event->kind != kind) __builtin_trap();  // decoded as the tracepoint its common_type names
  }
  static_cast<void>(decode_lost(rest));

  if (rest.size() >= 8) {
    const std::size_t ring_size = std::bit_floor(rest.size());
    std::uint64_t tail = 0;
    std::memcpy(&tail, rest.data(), sizeof(tail));
    const std::uint64_t head = tail + (kind_byte * 8u) % (ring_size + 1);  // at most a full ring
    std::vector<std::byte> scratch;
    std::size_t visited = 0;
    const std::uint64_t end =
        read_ring(rest.first(ring_size), tail, head, scratch, [&](std::span<const std::byte> record) {
          visited += record.size();
          static_cast<void>(decode_sample(record, tracepoints));
        });
    fuzz::require(end - tail == visited && end - tail <= head - tail);
  }
  return 0;
}
