// SPDX-License-Identifier: Apache-2.0
// The loop probe's segment as hostile input: the parser on literal bytes (a valid segment built
// field by field at the documented offsets, then broken one way per test), the reader on files
// (symlink, FIFO, another user's, truncated), the tracker over time (counts going down or
// jumping, a dead writer, a reused pid, a file replaced, a loop that stopped), and the library
// itself writing a segment that the parser reads back with the sampler's bucket layout.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "fixture_tree.h"
#include "host/text.h"
#include "jitterd/loop_probe_layout.h"
#include "loops/loop_reader.h"
#include "loops/loop_segment.h"
#include "measure/histogram.h"

using namespace jitterd;

namespace {

constexpr std::uint64_t kSegHertz = 1'000'000'000;
constexpr std::uint32_t kSegSlots = 8, kSegRing = 4;

// A valid segment, as the library lays it out: 3000 gaps of 100 ticks, 2 interruptions.
struct SegmentBytes {
  std::vector<std::byte> bytes = std::vector<std::byte>(jitterd_loop_segment_bytes(kSegSlots, kSegRing));

  template <typename T>
  void put(std::size_t offset, T value) {
    std::memcpy(bytes.data() + offset, &value, sizeof value);
  }
  void put_text(std::size_t offset, const char* text) {
    std::memcpy(bytes.data() + offset, text, std::strlen(text) + 1);
  }
  std::uint64_t get(std::size_t offset) const {
    std::uint64_t value;
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
  }
  std::size_t bucket(std::size_t i) const { return JITTERD_LOOP_HEADER_BYTES + 8 * i; }
  std::size_t slot(std::size_t i) const { return bucket(JITTERD_LOOP_BUCKETS) + 16 * i; }
  std::size_t entry(std::size_t i) const { return slot(kSegSlots) + 16 * i; }

  SegmentBytes() {
    put<std::uint64_t>(JITTERD_LOOP_OFF_MAGIC, JITTERD_LOOP_MAGIC);
    put<std::uint32_t>(JITTERD_LOOP_OFF_VERSION, 1);
    put<std::uint32_t>(JITTERD_LOOP_OFF_HEADER_BYTES, JITTERD_LOOP_HEADER_BYTES);
    put<std::uint64_t>(JITTERD_LOOP_OFF_TOTAL_BYTES, bytes.size());
    put<std::int32_t>(JITTERD_LOOP_OFF_PID, 4242);
    put<std::int32_t>(JITTERD_LOOP_OFF_CPU, 3);
    put<std::uint64_t>(JITTERD_LOOP_OFF_START_TIME, 777);
    put<std::uint32_t>(JITTERD_LOOP_OFF_COUNTER, JITTERD_LOOP_COUNTER_LFENCE_RDTSC);
    put<std::uint32_t>(JITTERD_LOOP_OFF_SUB_BITS, 4);
    put<std::uint64_t>(JITTERD_LOOP_OFF_HERTZ, kSegHertz);
    put<std::uint32_t>(JITTERD_LOOP_OFF_BUCKETS, 976);
    put<std::uint32_t>(JITTERD_LOOP_OFF_RING_CAPACITY, kSegRing);
    put<std::uint32_t>(JITTERD_LOOP_OFF_SLOT_COUNT, kSegSlots);
    put<std::uint64_t>(JITTERD_LOOP_OFF_SLOT_TICKS, kSegHertz / 4);
    put<std::uint64_t>(JITTERD_LOOP_OFF_THRESHOLD, 2000);
    put<std::uint64_t>(JITTERD_LOOP_OFF_FLOOR, 100);
    put<std::uint64_t>(JITTERD_LOOP_OFF_HISTOGRAM, bucket(0));
    put<std::uint64_t>(JITTERD_LOOP_OFF_SLOTS, slot(0));
    put<std::uint64_t>(JITTERD_LOOP_OFF_RING, entry(0));
    put_text(JITTERD_LOOP_OFF_NAME, "rx0");
    put_text(JITTERD_LOOP_OFF_LABELS, "nic=eth0,queue=3");
    // 3070 gaps: 3068 of 100 ticks, one of 5000 and one of 8000 (the interruptions)
    put<std::uint64_t>(bucket(histogram_bucket_index(100)), 3068);
    put<std::uint64_t>(bucket(histogram_bucket_index(5000)), 1);
    put<std::uint64_t>(bucket(histogram_bucket_index(8000)), 1);
    put<std::uint64_t>(JITTERD_LOOP_OFF_SAMPLES, 3072 - 1024);  // published at 2048; 1022 since
    put<std::uint64_t>(JITTERD_LOOP_OFF_SAMPLED_TICKS, 217'600);
    put<std::uint64_t>(JITTERD_LOOP_OFF_INTERRUPTIONS, 2);
    put<std::uint64_t>(JITTERD_LOOP_OFF_STOLEN_TICKS, 13'000);
    put<std::uint64_t>(JITTERD_LOOP_OFF_MIN_GAP, 100);
    put<std::uint64_t>(JITTERD_LOOP_OFF_MAX_GAP, 8000);
    put<std::uint64_t>(JITTERD_LOOP_OFF_FIRST_TICK, 1'000'000);
    put<std::uint64_t>(JITTERD_LOOP_OFF_HEARTBEAT, 1'217'600);
    put<std::uint64_t>(JITTERD_LOOP_OFF_RING_HEAD, 2);
    put<std::uint64_t>(JITTERD_LOOP_OFF_RING_WRITING, 2);
    put<std::uint64_t>(entry(0), 1'100'000);
    put<std::uint64_t>(entry(0) + 8, 5000);
    put<std::uint64_t>(entry(1), 1'150'000);
    put<std::uint64_t>(entry(1) + 8, 8000);
    put<std::uint64_t>(slot(1), 1);  // slot id 1: ticks [0, 250 ms)
    put<std::uint64_t>(slot(1) + 8, 8000);
  }
  LoopParse parse() const { return parse_loop_segment(bytes, bytes); }
};

LoopRefusal refusal_of(const SegmentBytes& segment) {
  const LoopParse parsed = segment.parse();
  REQUIRE_FALSE(parsed.reading);
  REQUIRE_FALSE(parsed.message.empty());
  return parsed.reason;
}

}  // namespace

TEST_CASE("loop segment: a valid segment parses to what its bytes hold", "[loop]") {
  const LoopParse parsed = SegmentBytes().parse();
  INFO(parsed.message);
  REQUIRE(parsed.reading);
  const LoopSegmentReading& r = *parsed.reading;
  CHECK(r.header.name == "rx0");
  CHECK(r.header.cpu == 3);
  CHECK(r.header.pid == 4242);
  CHECK(r.header.labels == std::vector<std::pair<std::string, std::string>>{{"nic", "eth0"}, {"queue", "3"}});
  CHECK(r.counts.gaps.total() == 3070);
  CHECK(r.counts.interruptions == 2);
  CHECK(r.counts.interrupted_ticks == 13'000);
  CHECK(r.samples == 2048);
  CHECK(r.ring.size() == 2);
  CHECK(r.ring[1].duration_ticks == 8000);
  CHECK(r.max_between(0, 1000) == 8000);
  CHECK(r.max_between(kSegHertz, 2 * kSegHertz) == 0);
  CHECK(loop_counter_name(r.header.counter) == "lfence_rdtsc");
}

TEST_CASE("loop segment: a wrong magic, a newer layout and an unfinished segment are refused", "[loop]") {
  SegmentBytes segment;
  segment.put<std::uint64_t>(JITTERD_LOOP_OFF_MAGIC, 0x1234);
  CHECK(refusal_of(segment) == LoopRefusal::magic);
  segment.put<std::uint64_t>(JITTERD_LOOP_OFF_MAGIC, 0);
  CHECK(refusal_of(segment) == LoopRefusal::magic);
  segment = SegmentBytes();
  segment.put<std::uint32_t>(JITTERD_LOOP_OFF_VERSION, 2);
  CHECK(refusal_of(segment) == LoopRefusal::version);
  CHECK_THAT(segment.parse().message, Catch::Contains("newer"));
}

TEST_CASE("loop segment: short copies and sizes that disagree with the header are refused", "[loop]") {
  const SegmentBytes segment;
  const std::span<const std::byte> all(segment.bytes);
  CHECK(parse_loop_segment(all.first(100), all.first(100)).reason == LoopRefusal::truncated);
  CHECK(parse_loop_segment(all, all.first(all.size() - 8)).reason == LoopRefusal::truncated);
  SegmentBytes bigger;
  bigger.put<std::uint64_t>(JITTERD_LOOP_OFF_TOTAL_BYTES, bigger.bytes.size() + 16);
  CHECK(refusal_of(bigger) == LoopRefusal::size);
}

TEST_CASE("loop segment: a foreign bucket layout, sizes or offsets are refused", "[loop]") {
  const std::pair<std::size_t, std::uint32_t> changes[] = {{JITTERD_LOOP_OFF_SUB_BITS, 5},
                                                           {JITTERD_LOOP_OFF_BUCKETS, 1000},
                                                           {JITTERD_LOOP_OFF_RING_CAPACITY, 0},
                                                           {JITTERD_LOOP_OFF_SLOT_COUNT, 70000},
                                                           {JITTERD_LOOP_OFF_HEADER_BYTES, 256}};
  for (const auto& [offset, value] : changes) {
    SegmentBytes segment;
    segment.put<std::uint32_t>(offset, value);
    INFO("offset " << offset);
    CHECK(refusal_of(segment) == LoopRefusal::layout);
  }
  SegmentBytes moved;
  moved.put<std::uint64_t>(JITTERD_LOOP_OFF_RING, 8);
  CHECK(refusal_of(moved) == LoopRefusal::layout);
}

TEST_CASE("loop segment: absurd frequencies and unknown counters are refused", "[loop]") {
  for (const std::uint64_t hertz : {std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{100'000'000'000}}) {
    SegmentBytes segment;
    segment.put<std::uint64_t>(JITTERD_LOOP_OFF_HERTZ, hertz);
    segment.put<std::uint64_t>(JITTERD_LOOP_OFF_SLOT_TICKS, hertz / 4);
    CHECK(refusal_of(segment) == LoopRefusal::frequency);
  }
  SegmentBytes counter;
  counter.put<std::uint32_t>(JITTERD_LOOP_OFF_COUNTER, 99);
  CHECK(refusal_of(counter) == LoopRefusal::frequency);
  SegmentBytes slot;
  slot.put<std::uint64_t>(JITTERD_LOOP_OFF_SLOT_TICKS, kSegHertz);
  CHECK(refusal_of(slot) == LoopRefusal::layout);
}

TEST_CASE("loop segment: bad names and labels are refused", "[loop]") {
  for (const char* name : {"", ".hidden", "a/b", "sp ace", "quote\""}) {
    SegmentBytes segment;
    segment.put_text(JITTERD_LOOP_OFF_NAME, name);
    INFO(name);
    CHECK(refusal_of(segment) == LoopRefusal::name);
  }
  SegmentBytes unterminated;
  std::memset(unterminated.bytes.data() + JITTERD_LOOP_OFF_NAME, 'a', JITTERD_LOOP_NAME_BYTES);
  CHECK(refusal_of(unterminated) == LoopRefusal::name);
  for (const char* labels :
       {"novalue", "cpu=1", "loop=x", "le=0.5", "quantile=1", "a=1,a=2", "__x=1", "1a=2", "a=\"q\"", "a=1,"}) {
    SegmentBytes segment;
    segment.put_text(JITTERD_LOOP_OFF_LABELS, labels);
    INFO(labels);
    CHECK(refusal_of(segment) == LoopRefusal::name);
  }
}

TEST_CASE("loop segment: reserved and clashing label names are refused, naming the label", "[loop]") {
  // Every label jitterd or Prometheus puts on a loop's series: a second `le` or `quantile` in one
  // series makes Prometheus refuse the whole scrape.
  for (std::string_view reserved : kLoopReservedLabels) {
    SegmentBytes segment;
    const std::string labels = "app=x," + std::string(reserved) + "=1";
    segment.put_text(JITTERD_LOOP_OFF_LABELS, labels.c_str());
    const LoopParse parsed = parse_loop_segment(segment.bytes, segment.bytes);
    INFO(labels);
    CHECK(parsed.reason == LoopRefusal::name);
    CHECK(parsed.message.find("label name '" + std::string(reserved) + "' is reserved") != std::string::npos);
  }
  for (const char* name : {"le", "quantile", "loop", "cpu", "cause", "instance", "job"})
    CHECK_FALSE(loop_label_problem(name, "1").empty());
  CHECK(loop_label_problem("Le", "1").empty());        // label names are case-sensitive: not a clash
  CHECK(loop_label_problem("nic", "a\\b c").empty());  // a backslash is escaped by the exposition
  for (std::string_view value :
       {std::string_view("a\nb", 3), std::string_view("\x7f"), std::string_view("\xc3\xa9"),
        std::string_view("\xff"), std::string_view("q\"")}) {
    INFO(printable(value));
    CHECK(loop_label_problem("nic", value).find("printable ASCII") != std::string::npos);
  }
}

TEST_CASE("loop segment: counters that contradict each other are refused", "[loop]") {
  SegmentBytes more_published;  // samples published beyond what the histogram holds
  more_published.put<std::uint64_t>(JITTERD_LOOP_OFF_SAMPLES, 5000);
  CHECK(refusal_of(more_published) == LoopRefusal::inconsistent);
  SegmentBytes past_heartbeat;
  past_heartbeat.put<std::uint64_t>(JITTERD_LOOP_OFF_SAMPLED_TICKS, 300'000);
  CHECK(refusal_of(past_heartbeat) == LoopRefusal::inconsistent);
  SegmentBytes slot_over_max;
  slot_over_max.put<std::uint64_t>(slot_over_max.slot(1) + 8, 9000);
  CHECK(refusal_of(slot_over_max) == LoopRefusal::inconsistent);
  SegmentBytes slot_misplaced;
  slot_misplaced.put<std::uint64_t>(slot_misplaced.slot(1), 3);
  CHECK(refusal_of(slot_misplaced) == LoopRefusal::inconsistent);
  SegmentBytes ring_over_stolen;
  ring_over_stolen.put<std::uint64_t>(ring_over_stolen.entry(1) + 8, 80'000);
  CHECK(refusal_of(ring_over_stolen) == LoopRefusal::inconsistent);
  SegmentBytes overflow;
  overflow.put<std::uint64_t>(overflow.bucket(0), ~std::uint64_t{0});
  CHECK(refusal_of(overflow) == LoopRefusal::inconsistent);
}

TEST_CASE("loop segment: two copies that disagree keep only what both support", "[loop]") {
  const SegmentBytes first;
  SegmentBytes second = first;
  second.put<std::uint64_t>(second.bucket(histogram_bucket_index(100)), 3000);
  CHECK(parse_loop_segment(first.bytes, second.bytes).reason == LoopRefusal::went_down);
  // A slot rewritten between the copies is left out; ring entries the writer began to overwrite too.
  second = first;
  second.put<std::uint64_t>(second.slot(1), 0);
  second.put<std::uint64_t>(JITTERD_LOOP_OFF_RING_WRITING, 5);
  const LoopParse parsed = parse_loop_segment(first.bytes, second.bytes);
  REQUIRE(parsed.reading);
  CHECK(parsed.reading->slots.empty());
  CHECK(parsed.reading->ring.size() == 1);
  CHECK(parsed.reading->ring[0].duration_ticks == 8000);
  second = first;
  second.put_text(JITTERD_LOOP_OFF_NAME, "tx0");
  CHECK(parse_loop_segment(first.bytes, second.bytes).reason == LoopRefusal::inconsistent);
}

TEST_CASE("loop segment: counts going down or rising faster than time allows are refused", "[loop]") {
  const LoopParse earlier = SegmentBytes().parse();
  REQUIRE(earlier.reading);
  SegmentBytes later_bytes;
  later_bytes.put<std::uint64_t>(JITTERD_LOOP_OFF_INTERRUPTIONS, 1);
  later_bytes.put<std::uint64_t>(JITTERD_LOOP_OFF_RING_HEAD, 1);
  later_bytes.put<std::uint64_t>(JITTERD_LOOP_OFF_RING_WRITING, 1);
  const LoopParse fewer = later_bytes.parse();
  REQUIRE(fewer.reading);
  const auto down = loop_reading_progress_problem(*earlier.reading, *fewer.reading, 1.0);
  REQUIRE(down);
  CHECK(down->first == LoopRefusal::went_down);
  LoopSegmentReading jumped = *earlier.reading;
  jumped.samples += 2'000'000'000;
  const auto fast = loop_reading_progress_problem(*earlier.reading, jumped, 1.0);
  REQUIRE(fast);
  CHECK(fast->first == LoopRefusal::jumped);
  LoopSegmentReading steady = *earlier.reading;
  steady.samples += 900'000'000;
  CHECK_FALSE(loop_reading_progress_problem(*earlier.reading, steady, 1.0));
}
