// SPDX-License-Identifier: Apache-2.0
#include "loops/loop_segment.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <iterator>
#include <limits>
#include <sstream>
#include <variant>

#include "host/text.h"
#include "jitterd/loop_probe_layout.h"

namespace jitterd {

// The library's layout is jitterd's: the same buckets as the sampler's histogram.
static_assert(JITTERD_LOOP_SUB_BITS == kHistogramSubBits);
static_assert(JITTERD_LOOP_BUCKETS == kHistogramBuckets);
static_assert(JITTERD_LOOP_CHECK_EVERY == 1024);
static_assert(kLoopHeadBytes == JITTERD_LOOP_HEADER_BYTES + 8 * JITTERD_LOOP_BUCKETS);

namespace {

constexpr std::uint64_t kPublishLag = JITTERD_LOOP_CHECK_EVERY - 1;  // gaps a publication may trail by

template <typename T>
T field(std::span<const std::byte> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

std::uint64_t u64(std::span<const std::byte> bytes, std::size_t offset) {
  return field<std::uint64_t>(bytes, offset);
}
std::uint32_t u32(std::span<const std::byte> bytes, std::size_t offset) {
  return field<std::uint32_t>(bytes, offset);
}

LoopParse refuse(LoopRefusal reason, std::string message) { return {std::nullopt, reason, std::move(message)}; }

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

// A NUL-terminated string inside [offset, offset + size), or nullopt when it is not terminated.
std::optional<std::string> c_string(std::span<const std::byte> bytes, std::size_t offset, std::size_t size) {
  const char* begin = reinterpret_cast<const char*>(bytes.data() + offset);
  const char* end = static_cast<const char*>(std::memchr(begin, '\0', size));
  if (end == nullptr) return std::nullopt;
  return std::string(begin, end);
}

std::optional<LoopParse> check_identity(std::span<const std::byte> bytes, LoopSegmentHeader& h) {
  const auto name = c_string(bytes, JITTERD_LOOP_OFF_NAME, JITTERD_LOOP_NAME_BYTES);
  if (!name || name->empty() || (*name)[0] == '.' || !std::all_of(name->begin(), name->end(), name_char))
    return refuse(LoopRefusal::name,
                  "the loop's name is empty, unterminated or holds a character other than "
                  "letters, digits, '_', '-' and '.'");
  h.name = *name;
  const auto labels_text = c_string(bytes, JITTERD_LOOP_OFF_LABELS, JITTERD_LOOP_LABELS_BYTES);
  if (!labels_text) return refuse(LoopRefusal::name, "loop " + h.name + ": the labels are not NUL-terminated");
  auto labels = parse_loop_labels(*labels_text);
  if (const std::string* problem = std::get_if<std::string>(&labels))
    return refuse(LoopRefusal::name, "loop " + h.name + ": labels: " + *problem);
  h.labels = std::move(std::get<0>(labels));
  if (h.pid <= 0 || h.cpu < 0 || h.cpu > 65535)
    return refuse(LoopRefusal::layout, "loop " + h.name + ": pid " + std::to_string(h.pid) + " or cpu " +
                                           std::to_string(h.cpu) + " out of range");
  return std::nullopt;
}

std::optional<LoopParse> check_counter(const LoopSegmentHeader& h) {
  if (h.counter < JITTERD_LOOP_COUNTER_LFENCE_RDTSC || h.counter > JITTERD_LOOP_COUNTER_CALLER)
    return refuse(LoopRefusal::frequency,
                  "counter method " + std::to_string(h.counter) + " is none jitterd knows");
  if (h.hertz < kLoopMinHertz || h.hertz > kLoopMaxHertz)
    return refuse(LoopRefusal::frequency,
                  "counter frequency " + std::to_string(h.hertz) + " Hz is outside 1 MHz to 10 GHz");
  const std::uint64_t quarter = h.hertz / 4;  // the 250 ms slot, within 1%
  if (h.slot_ticks + quarter / 100 < quarter || h.slot_ticks > quarter + quarter / 100)
    return refuse(LoopRefusal::layout, "window slot of " + std::to_string(h.slot_ticks) +
                                           " ticks is not 250 ms at " + std::to_string(h.hertz) + " Hz");
  return std::nullopt;
}

std::optional<LoopParse> check_layout(std::span<const std::byte> bytes, const LoopSegmentHeader& h) {
  const bool sizes_ok = u32(bytes, JITTERD_LOOP_OFF_HEADER_BYTES) == JITTERD_LOOP_HEADER_BYTES &&
                        u32(bytes, JITTERD_LOOP_OFF_SUB_BITS) == JITTERD_LOOP_SUB_BITS &&
                        u32(bytes, JITTERD_LOOP_OFF_BUCKETS) == JITTERD_LOOP_BUCKETS;
  if (!sizes_ok)
    return refuse(LoopRefusal::layout, "header size, sub-bucket bits or bucket count (" +
                                           std::to_string(u32(bytes, JITTERD_LOOP_OFF_SUB_BITS)) + ", " +
                                           std::to_string(u32(bytes, JITTERD_LOOP_OFF_BUCKETS)) +
                                           ") is not jitterd's (4, 976)");
  if (h.ring_capacity == 0 || h.ring_capacity > JITTERD_LOOP_MAX_RING || h.slot_count == 0 ||
      h.slot_count > JITTERD_LOOP_MAX_SLOTS)
    return refuse(LoopRefusal::layout, "ring of " + std::to_string(h.ring_capacity) + " entries or " +
                                           std::to_string(h.slot_count) + " window slots is out of range");
  const std::uint64_t histogram = JITTERD_LOOP_HEADER_BYTES;
  const std::uint64_t slots = histogram + 8 * std::uint64_t{JITTERD_LOOP_BUCKETS};
  const std::uint64_t ring = slots + 16 * std::uint64_t{h.slot_count};
  if (u64(bytes, JITTERD_LOOP_OFF_HISTOGRAM) != histogram || u64(bytes, JITTERD_LOOP_OFF_SLOTS) != slots ||
      u64(bytes, JITTERD_LOOP_OFF_RING) != ring)
    return refuse(LoopRefusal::layout, "section offsets are not where the layout puts them");
  if (h.total_bytes != jitterd_loop_segment_bytes(h.slot_count, h.ring_capacity))
    return refuse(LoopRefusal::size,
                  "the header says " + std::to_string(h.total_bytes) + " bytes, its sizes " +
                      std::to_string(jitterd_loop_segment_bytes(h.slot_count, h.ring_capacity)));
  return std::nullopt;
}

}  // namespace

std::string_view loop_refusal_name(LoopRefusal reason) {
  // In the enum's order (kLoopRefusals): the label values of the refusal series.
  static constexpr std::string_view names[] = {"not_regular", "owner",  "size",       "truncated", "magic",
                                               "version",     "layout", "name",       "frequency", "inconsistent",
                                               "went_down",   "jumped", "unreadable", "links",     "too_many"};
  static_assert(std::size(names) == std::size(kLoopRefusals));
  static_assert([] {
    for (std::size_t i = 0; i < std::size(kLoopRefusals); ++i)
      if (static_cast<std::size_t>(kLoopRefusals[i]) != i) return false;
    return true;
  }());
  const auto i = static_cast<std::size_t>(reason);
  return i < std::size(names) ? names[i] : "unreadable";
}

std::optional<TickMethod> loop_counter_method(std::uint32_t counter) {
  switch (counter) {
    case JITTERD_LOOP_COUNTER_LFENCE_RDTSC:
      return TickMethod::lfence_rdtsc;
    case JITTERD_LOOP_COUNTER_RDTSC:
      return TickMethod::rdtsc;
    case JITTERD_LOOP_COUNTER_RDTSCP:
      return TickMethod::rdtscp;
    case JITTERD_LOOP_COUNTER_CNTVCT:
      return TickMethod::cntvct;
    case JITTERD_LOOP_COUNTER_STEADY_NS:
      return TickMethod::steady_clock;
    default:
      return std::nullopt;
  }
}

std::string_view loop_counter_name(std::uint32_t counter) {
  if (counter == JITTERD_LOOP_COUNTER_CALLER) return "caller";
  const std::optional<TickMethod> method = loop_counter_method(counter);
  return method ? to_string(*method) : "unknown";
}

std::uint64_t loop_segment_max_bytes() {
  return jitterd_loop_segment_bytes(JITTERD_LOOP_MAX_SLOTS, JITTERD_LOOP_MAX_RING);
}

LoopParse parse_loop_header(std::span<const std::byte> bytes) {
  if (bytes.size() < JITTERD_LOOP_HEADER_BYTES)
    return refuse(LoopRefusal::truncated, std::to_string(bytes.size()) + " bytes, less than the " +
                                              std::to_string(JITTERD_LOOP_HEADER_BYTES) + "-byte header");
  const std::uint64_t magic = u64(bytes, JITTERD_LOOP_OFF_MAGIC);
  if (magic != JITTERD_LOOP_MAGIC)
    return refuse(LoopRefusal::magic, magic == 0 ? "magic 0: not a finished loop segment"
                                                 : "magic " + hex(magic) + " is not a loop segment's (" +
                                                       hex(JITTERD_LOOP_MAGIC) + ")");
  LoopSegmentHeader h;
  h.version = u32(bytes, JITTERD_LOOP_OFF_VERSION);
  if (h.version > JITTERD_LOOP_LAYOUT_VERSION || h.version == 0)
    return refuse(LoopRefusal::version,
                  "layout version " + std::to_string(h.version) +
                      (h.version == 0 ? " does not exist" : " is newer than the ") +
                      (h.version == 0 ? "" : std::to_string(JITTERD_LOOP_LAYOUT_VERSION) + " this jitterd reads"));
  h.total_bytes = u64(bytes, JITTERD_LOOP_OFF_TOTAL_BYTES);
  h.pid = field<std::int32_t>(bytes, JITTERD_LOOP_OFF_PID);
  h.cpu = field<std::int32_t>(bytes, JITTERD_LOOP_OFF_CPU);
  h.start_time = u64(bytes, JITTERD_LOOP_OFF_START_TIME);
  h.counter = u32(bytes, JITTERD_LOOP_OFF_COUNTER);
  h.hertz = u64(bytes, JITTERD_LOOP_OFF_HERTZ);
  h.ring_capacity = u32(bytes, JITTERD_LOOP_OFF_RING_CAPACITY);
  h.slot_count = u32(bytes, JITTERD_LOOP_OFF_SLOT_COUNT);
  h.slot_ticks = u64(bytes, JITTERD_LOOP_OFF_SLOT_TICKS);
  if (auto problem = check_layout(bytes, h)) return std::move(*problem);
  if (auto problem = check_identity(bytes, h)) return std::move(*problem);
  if (auto problem = check_counter(h)) return std::move(*problem);
  LoopSegmentReading reading;
  reading.header = std::move(h);
  return {std::move(reading), LoopRefusal::unreadable, ""};
}

namespace {

// The live counters of one copy, in the order the copy reads them (by offset).
struct LiveCounters {
  std::uint64_t samples, sampled, interruptions, stolen, min_gap, max_gap, heartbeat, first_tick, ring_head,
      ring_writing;
};

LiveCounters live_counters(std::span<const std::byte> b) {
  return {u64(b, JITTERD_LOOP_OFF_SAMPLES),       u64(b, JITTERD_LOOP_OFF_SAMPLED_TICKS),
          u64(b, JITTERD_LOOP_OFF_INTERRUPTIONS), u64(b, JITTERD_LOOP_OFF_STOLEN_TICKS),
          u64(b, JITTERD_LOOP_OFF_MIN_GAP),       u64(b, JITTERD_LOOP_OFF_MAX_GAP),
          u64(b, JITTERD_LOOP_OFF_HEARTBEAT),     u64(b, JITTERD_LOOP_OFF_FIRST_TICK),
          u64(b, JITTERD_LOOP_OFF_RING_HEAD),     u64(b, JITTERD_LOOP_OFF_RING_WRITING)};
}

// A count of the second copy below the first's: the copy was torn or the writer lies.
std::optional<LoopParse> check_copies_agree(std::span<const std::byte> first, std::span<const std::byte> second,
                                            const LiveCounters& a, const LiveCounters& b) {
  // Everything but the live fields is written once, before the magic.
  if (std::memcmp(first.data(), second.data(), JITTERD_LOOP_OFF_THRESHOLD) != 0 ||
      std::memcmp(first.data() + JITTERD_LOOP_OFF_HISTOGRAM, second.data() + JITTERD_LOOP_OFF_HISTOGRAM,
                  JITTERD_LOOP_OFF_SAMPLES - JITTERD_LOOP_OFF_HISTOGRAM) != 0)
    return refuse(LoopRefusal::inconsistent, "the header changed between two copies");
  const std::pair<const char*, bool> down[] = {{"samples", b.samples < a.samples},
                                               {"sampled ticks", b.sampled < a.sampled},
                                               {"interruptions", b.interruptions < a.interruptions},
                                               {"stolen ticks", b.stolen < a.stolen},
                                               {"max gap", b.max_gap < a.max_gap},
                                               {"heartbeat", b.heartbeat < a.heartbeat},
                                               {"ring head", b.ring_head < a.ring_head},
                                               {"min gap", b.min_gap > a.min_gap}};
  for (const auto& [what, wrong] : down)
    if (wrong) return refuse(LoopRefusal::went_down, std::string(what) + " went back between two copies");
  for (std::size_t i = 0; i < JITTERD_LOOP_BUCKETS; ++i) {
    const std::size_t at = JITTERD_LOOP_HEADER_BYTES + 8 * i;
    if (u64(second, at) < u64(first, at))
      return refuse(LoopRefusal::went_down,
                    "histogram bucket " + std::to_string(i) + " went back between two copies");
  }
  return std::nullopt;
}

// What one reading's counters must satisfy, given the order the writer publishes them in
// (docs/loops.md): the first copy's histogram holds at least its published samples and at most the
// second copy's plus one publication; sampled ticks never pass the heartbeat; and so on.
std::optional<LoopParse> check_counts(const LiveCounters& a, const LiveCounters& b,
                                      std::uint64_t histogram_total) {
  std::string problem;
  if (histogram_total < a.samples || histogram_total > b.samples + kPublishLag)
    problem = "the histogram holds " + std::to_string(histogram_total) + " gaps against " +
              std::to_string(a.samples) + " published";
  else if (a.first_tick > a.heartbeat || a.sampled > a.heartbeat - a.first_tick)
    problem = "sampled ticks " + std::to_string(a.sampled) + " pass the heartbeat";
  else if (a.interruptions > b.samples + kPublishLag || a.interruptions > a.ring_head ||
           a.ring_head > b.interruptions + 1)
    problem = "interruptions " + std::to_string(a.interruptions) + " disagree with samples or ring pushes";
  else if (a.samples > 0 && a.min_gap > a.max_gap)
    problem = "min gap " + std::to_string(a.min_gap) + " above max gap " + std::to_string(a.max_gap);
  if (problem.empty()) return std::nullopt;
  return refuse(LoopRefusal::inconsistent, problem);
}

// Where entry `index` of a circular array of `size` lies in `region` (nullptr when not copied).
const std::byte* region_entry(const LoopRegion& region, std::uint64_t index, std::uint64_t size) {
  const std::uint64_t position = (index + size - region.first) % size;
  return position < region.count ? region.bytes.data() + 16 * position : nullptr;
}

bool region_fits(const LoopRegion& region, std::uint64_t size) {
  return region.first < size && region.count <= size && region.bytes.size() == 16 * std::size_t{region.count};
}

// The window max slots whose id held in both copies (WindowMax::max_between's rule, over copies).
std::optional<LoopParse> read_slots(const LoopRegion& first, const LoopRegion& second, std::uint64_t max_gap,
                                    LoopSegmentReading& out) {
  const std::uint32_t count = out.header.slot_count;
  for (std::uint32_t position = 0; position < first.count; ++position) {
    const std::uint64_t i = (std::uint64_t{first.first} + position) % count;
    const std::uint64_t id = u64(first.bytes, 16 * position), max = u64(first.bytes, 16 * position + 8);
    if (id == 0 || id != u64(second.bytes, 16 * position)) continue;
    if (id % count != i || max > max_gap)
      return refuse(LoopRefusal::inconsistent, "window slot " + std::to_string(i) + " holds id " +
                                                   std::to_string(id) + " and max " + std::to_string(max) +
                                                   " (max gap " + std::to_string(max_gap) + ")");
    out.slots.emplace_back(id, max);
  }
  std::sort(out.slots.begin(), out.slots.end());
  return std::nullopt;
}

// The ring entries the writer had not begun to overwrite by the second copy (InterruptionRing's
// copy_since rule: the head from the first copy, the push in progress from the second), of those
// the copy holds: the newest, up to the head, without a gap.
std::optional<LoopParse> read_ring(const LoopRegion& ring, const LiveCounters& a, const LiveCounters& b,
                                   LoopSegmentReading& out) {
  const std::uint64_t capacity = out.header.ring_capacity;
  const std::uint64_t head = a.ring_head;
  std::uint64_t from = head > capacity ? head - capacity : 0;
  const std::uint64_t overwritten_below = b.ring_writing > capacity ? b.ring_writing - capacity : 0;
  from = std::max(from, overwritten_below);
  std::uint64_t lowest = head;
  while (lowest > from && region_entry(ring, (lowest - 1) % capacity, capacity) != nullptr &&
         head - lowest < ring.count)
    --lowest;
  std::uint64_t total = 0;
  for (std::uint64_t seq = lowest; seq < head; ++seq) {
    const std::byte* at = region_entry(ring, seq % capacity, capacity);
    Interruption entry;
    std::memcpy(&entry.start_tick, at, 8);
    std::memcpy(&entry.duration_ticks, at + 8, 8);
    total += entry.duration_ticks;
    if (entry.duration_ticks == 0 || total > b.stolen || total < entry.duration_ticks)
      return refuse(LoopRefusal::inconsistent, "interruption ring entry " + std::to_string(seq) + " of " +
                                                   std::to_string(entry.duration_ticks) +
                                                   " ticks disagrees with the stolen ticks");
    out.ring.push_back(entry);
  }
  out.ring_pushed = head;
  return std::nullopt;
}

}  // namespace

LoopParse parse_loop_copies(const LoopCopy& first, const LoopCopy& second) {
  LoopParse parsed = parse_loop_header(first.head);
  if (!parsed.reading) return parsed;
  LoopSegmentReading& out = *parsed.reading;
  if (first.head.size() != kLoopHeadBytes || second.head.size() != kLoopHeadBytes)
    return refuse(LoopRefusal::truncated,
                  "copied " + std::to_string(std::min(first.head.size(), second.head.size())) + " bytes of the " +
                      std::to_string(kLoopHeadBytes) + "-byte header and histogram");
  const std::uint64_t slots = out.header.slot_count, capacity = out.header.ring_capacity;
  const auto same = [](const LoopRegion& x, const LoopRegion& y) {
    return x.first == y.first && x.count == y.count;
  };
  if (!region_fits(first.slots, slots) || !region_fits(second.slots, slots) || !same(first.slots, second.slots) ||
      !region_fits(first.ring, capacity) || !region_fits(second.ring, capacity) || !same(first.ring, second.ring))
    return refuse(LoopRefusal::truncated, "the copied slots or ring entries do not fit the header's sizes");
  const LiveCounters a = live_counters(first.head), b = live_counters(second.head);
  if (auto problem = check_copies_agree(first.head, second.head, a, b)) return std::move(*problem);
  std::uint64_t histogram_total = 0;
  for (std::size_t i = 0; i < JITTERD_LOOP_BUCKETS; ++i) {
    const std::uint64_t count = u64(first.head, JITTERD_LOOP_HEADER_BYTES + 8 * i);
    out.counts.gaps.counts[i] = count;
    if (__builtin_add_overflow(histogram_total, count, &histogram_total))
      return refuse(LoopRefusal::inconsistent, "the histogram's counts overflow 64 bits");
  }
  if (auto problem = check_counts(a, b, histogram_total)) return std::move(*problem);
  out.samples = a.samples;
  out.counts.sampled_ticks = a.sampled;
  out.counts.interruptions = a.interruptions;
  out.counts.interrupted_ticks = a.stolen;
  out.threshold_ticks = u64(first.head, JITTERD_LOOP_OFF_THRESHOLD);
  out.floor_ticks = u64(first.head, JITTERD_LOOP_OFF_FLOOR);
  out.min_gap = a.min_gap;
  out.max_gap = a.max_gap;
  out.heartbeat_tick = a.heartbeat;
  out.first_tick = a.first_tick;
  if (auto problem = read_slots(first.slots, second.slots, b.max_gap, out)) return std::move(*problem);
  if (auto problem = read_ring(first.ring, a, b, out)) return std::move(*problem);
  return parsed;
}

LoopParse parse_loop_segment(std::span<const std::byte> first, std::span<const std::byte> second) {
  LoopParse parsed = parse_loop_header(first);
  if (!parsed.reading) return parsed;
  const LoopSegmentHeader& h = parsed.reading->header;
  const std::uint64_t total = h.total_bytes;
  if (first.size() != total || second.size() != total)
    return refuse(LoopRefusal::truncated, "copied " + std::to_string(std::min(first.size(), second.size())) +
                                              " bytes of the " + std::to_string(total) + " its header says");
  const std::size_t slots_at = kLoopHeadBytes, ring_at = slots_at + 16 * std::size_t{h.slot_count};
  const auto whole = [&](std::span<const std::byte> bytes) {
    return LoopCopy{bytes.first(kLoopHeadBytes),
                    {0, h.slot_count, bytes.subspan(slots_at, 16 * std::size_t{h.slot_count})},
                    {0, h.ring_capacity, bytes.subspan(ring_at, 16 * std::size_t{h.ring_capacity})}};
  };
  return parse_loop_copies(whole(first), whole(second));
}

std::uint64_t LoopSegmentReading::max_between(std::uint64_t from_tick, std::uint64_t to_tick) const {
  const std::uint64_t ticks = header.slot_ticks == 0 ? 1 : header.slot_ticks;
  const std::uint64_t first = from_tick / ticks + 1, last = to_tick / ticks + 1;
  std::uint64_t result = 0;
  for (const auto& [id, max] : slots)
    if (id >= first && id <= last) result = std::max(result, max);
  return result;
}

std::optional<std::pair<LoopRefusal, std::string>> loop_reading_progress_problem(
    const LoopSegmentReading& previous, const LoopSegmentReading& now, double elapsed_seconds) {
  const std::pair<const char*, bool> down[] = {
      {"samples", now.samples < previous.samples},
      {"sampled ticks", now.counts.sampled_ticks < previous.counts.sampled_ticks},
      {"interruptions", now.counts.interruptions < previous.counts.interruptions},
      {"stolen ticks", now.counts.interrupted_ticks < previous.counts.interrupted_ticks},
      {"heartbeat", now.heartbeat_tick < previous.heartbeat_tick},
      {"ring pushes", now.ring_pushed < previous.ring_pushed}};
  for (const auto& [what, wrong] : down)
    if (wrong) return std::pair{LoopRefusal::went_down, std::string(what) + " went down since the last reading"};
  for (std::size_t i = 0; i < kHistogramBuckets; ++i)
    if (now.counts.gaps.counts[i] < previous.counts.gaps.counts[i])
      return std::pair{LoopRefusal::went_down,
                       "histogram bucket " + std::to_string(i) + " went down since the last reading"};
  // No loop iteration takes under a nanosecond (a counter read alone takes several); a reading may
  // trail the loop by one publication, and the one before it too.
  const double allowed = std::max(0.0, elapsed_seconds) * 1e9 + 2.0 * JITTERD_LOOP_CHECK_EVERY;
  const std::uint64_t added = now.samples - previous.samples;
  if (static_cast<double>(added) > allowed)
    return std::pair{LoopRefusal::jumped, "samples rose by " + std::to_string(added) + " in " +
                                              std::to_string(elapsed_seconds) +
                                              " s, more than one per nanosecond"};
  return std::nullopt;
}

}  // namespace jitterd
