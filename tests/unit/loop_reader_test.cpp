// SPDX-License-Identifier: Apache-2.0
// The loop segments' reader on real files and the tracker over time: the library writes a segment
// in a scratch directory, the reader finds it and reads back exactly what the loop recorded, in
// the sampler's buckets; a symlink, a FIFO, another user's file, a truncated file, a dead writer,
// a reused pid, a replaced file and a stopped loop each give their refusal or state.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fixture_tree.h"
#include "jitterd/loop_probe.h"
#include "loops/loop_reader.h"
#include "measure/histogram.h"

using namespace jitterd;
using jitterd::testing::ScratchTree;

namespace {

// A /proc/PID/stat line with start time `start` (field 22).
std::string loop_stat_line(int pid, unsigned long long start) {
  std::string line = std::to_string(pid) + " (app) R";
  for (int field = 4; field <= 52; ++field) line += " " + std::string(field == 22 ? std::to_string(start) : "0");
  return line + "\n";
}

jitterd_loop_probe* open_in(const std::filesystem::path& dir, const char* name, const char* labels = nullptr) {
  jitterd_loop_options options{};
  options.directory = dir.c_str();
  options.counter = JITTERD_LOOP_COUNTER_CALLER;
  options.hertz = 1'000'000'000;
  options.ring_capacity = 16;
  options.slot_count = 16;
  return jitterd_loop_open(name, 0, labels, &options);
}

// Scripted gaps: 5000, of 100 ticks but one interruption of 50,000 after the warm-up.
void record_script(jitterd_loop_probe* probe, std::uint64_t start) {
  std::uint64_t now = start;
  for (int i = 0; i <= 5000; ++i) {
    now += i == 4500 ? 50'000 : 100;
    jitterd_loop_record_at(probe, now);
  }
  jitterd_loop_flush(probe);
}

std::vector<uid_t> me() { return {::geteuid()}; }

// The loop rx0 in `dir` (made), with one script recorded.
jitterd_loop_probe* open_recorded(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  jitterd_loop_probe* probe = open_in(dir, "rx0");
  REQUIRE(probe != nullptr);
  record_script(probe, 1000);
  return probe;
}

}  // namespace

TEST_CASE("loop reader: reads back what the library recorded, in the sampler's buckets", "[loop]") {
  ScratchTree tree;
  jitterd_loop_probe* probe = open_in(tree.root(), "rx0", "nic=eth0");
  REQUIRE(probe != nullptr);
  record_script(probe, 1'000'000);
  const LoopFileRead read = read_loop_file(tree.root() / "jitterd-loop.rx0", me());
  jitterd_loop_close(probe);
  INFO(read.message);
  REQUIRE(read.reading);
  const LoopSegmentReading& r = *read.reading;
  CHECK(r.header.name == "rx0");
  CHECK(r.header.pid == ::getpid());
  CHECK(r.samples == 5000);
  CHECK(r.counts.gaps.counts[histogram_bucket_index(100)] == 4999);
  CHECK(r.counts.gaps.counts[histogram_bucket_index(50'000)] == 1);
  CHECK(r.floor_ticks == 100);
  CHECK(r.threshold_ticks == 2000);  // 20 times the floor
  CHECK(r.counts.interruptions == 1);
  CHECK(r.counts.interrupted_ticks == 50'000);
  REQUIRE(r.ring.size() == 1);
  CHECK(r.ring[0].duration_ticks == 50'000);
  CHECK(r.max_gap == 50'000);
  CHECK(r.max_between(r.first_tick, r.heartbeat_tick) == 50'000);
  CHECK_FALSE(std::filesystem::exists(tree.root() / "jitterd-loop.rx0"));  // close removes it
}

TEST_CASE("loop reader: a symlink, a FIFO, another user's file and a short file are refused", "[loop]") {
  ScratchTree tree;
  jitterd_loop_probe* probe = open_in(tree.root(), "real");
  REQUIRE(probe != nullptr);
  record_script(probe, 1000);
  const auto real = tree.root() / "jitterd-loop.real";
  std::filesystem::create_symlink(real, tree.root() / "jitterd-loop.link");
  CHECK(read_loop_file(tree.root() / "jitterd-loop.link", me()).reason == LoopRefusal::not_regular);
  REQUIRE(::mkfifo((tree.root() / "jitterd-loop.fifo").c_str(), 0600) == 0);
  CHECK(read_loop_file(tree.root() / "jitterd-loop.fifo", me()).reason == LoopRefusal::not_regular);
  const LoopFileRead foreign = read_loop_file(real, {::geteuid() + 1});
  CHECK(foreign.reason == LoopRefusal::owner);
  CHECK_THAT(foreign.message, Catch::Contains("uid " + std::to_string(::geteuid())));
  std::filesystem::copy_file(real, tree.root() / "jitterd-loop.short");
  std::filesystem::resize_file(tree.root() / "jitterd-loop.short", 4096);
  CHECK(read_loop_file(tree.root() / "jitterd-loop.short", me()).reason == LoopRefusal::truncated);
  std::filesystem::resize_file(tree.root() / "jitterd-loop.short", 100);
  CHECK(read_loop_file(tree.root() / "jitterd-loop.short", me()).reason == LoopRefusal::truncated);
  // A file removed since the directory was listed is gone, not refused; any other failure to
  // open it is.
  CHECK(read_loop_file(tree.root() / "jitterd-loop.removed", me()).gone);
  CHECK_FALSE(read_loop_file(tree.root() / "jitterd-loop.link", me()).gone);
  CHECK_FALSE(read_loop_file(tree.root() / "jitterd-loop.short", me()).gone);
  jitterd_loop_close(probe);
}

TEST_CASE("loop tracker: up while its writer lives and progresses, down when it stops or dies", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  jitterd_loop_probe* probe = open_recorded(dir);
  tree.write("proc/" + std::to_string(::getpid()) + "/stat",
             loop_stat_line(::getpid(), probe->segment->start_time));
  LoopTracker tracker({.directory = dir, .allowed_users = me(), .stale_after = std::chrono::seconds(5)});
  tracker.scan(tree.reader(), 100.0);
  REQUIRE(tracker.loops().size() == 1);
  const LoopState& state = tracker.loops().begin()->second;
  INFO(state.message);
  CHECK(state.up);
  CHECK_THAT(tracker.take_events().at(0), Catch::Contains("up"));
  tracker.scan(tree.reader(), 110.0);  // no progress for 10 s: stale
  CHECK_FALSE(state.up);
  CHECK_THAT(state.message, Catch::Contains("no progress"));
  record_script(probe, 10'000'000);
  tracker.scan(tree.reader(), 111.0);
  CHECK(state.up);
  // The pid now belongs to a process that started later: the writer is gone.
  tree.write("proc/" + std::to_string(::getpid()) + "/stat",
             loop_stat_line(::getpid(), probe->segment->start_time + 5));
  record_script(probe, 20'000'000);
  tracker.scan(tree.reader(), 112.0);
  CHECK_FALSE(state.up);
  CHECK_THAT(state.message, Catch::Contains("another process"));
  std::filesystem::remove(tree.root() / "proc" / std::to_string(::getpid()) / "stat");
  tracker.scan(tree.reader(), 113.0);
  CHECK_THAT(state.message, Catch::Contains("is gone"));
  jitterd_loop_close(probe);
  tracker.scan(tree.reader(), 114.0);
  CHECK(tracker.loops().empty());
}

TEST_CASE("loop tracker: a replaced file starts again; counts going down are refused once", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  jitterd_loop_probe* probe = open_recorded(dir);
  record_script(probe, 10'000'000);
  LoopTracker tracker({.directory = dir, .allowed_users = me(), .stale_after = std::chrono::seconds(5)});
  tracker.scan(tree.reader(), 100.0);
  const auto saved = dir / "saved";
  std::filesystem::copy_file(dir / "jitterd-loop.rx0", saved);
  // The same file (same inode) rewritten with the earlier, smaller counts: went_down.
  jitterd_loop_probe* other = open_in(tree.root(), "rx0");
  REQUIRE(other != nullptr);
  record_script(other, 1000);
  std::filesystem::path other_path = tree.root() / "jitterd-loop.rx0";
  {
    std::ifstream in(other_path, std::ios::binary);
    std::vector<char> smaller((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::memcpy(static_cast<void*>(probe->segment), smaller.data(),
                smaller.size());  // the writer's mapping: same inode
  }
  tracker.scan(tree.reader(), 101.0);
  const LoopState& state = tracker.loops().begin()->second;
  CHECK(state.refused);
  CHECK(state.reason == LoopRefusal::went_down);
  tracker.scan(tree.reader(), 102.0);
  CHECK(tracker.refusals().at(LoopRefusal::went_down) == 1);  // once, not once per scan
  // A new file under the name: counts start again, accepted.
  std::filesystem::rename(saved, dir / "jitterd-loop.rx0");
  tracker.take_events();
  tracker.scan(tree.reader(), 103.0);
  CHECK_FALSE(state.refused);
  const auto events = tracker.take_events();
  REQUIRE_FALSE(events.empty());
  jitterd_loop_close(other);
  munmap(probe->segment, probe->mapped_bytes);
  free(probe);
}

TEST_CASE("loop library: a second open of a live writer's name is refused; a dead writer's file is replaced",
          "[loop]") {
  ScratchTree tree;
  jitterd_loop_probe* first = open_in(tree.root(), "rx0");
  REQUIRE(first != nullptr);
  errno = 0;
  CHECK(open_in(tree.root(), "rx0") == nullptr);  // this process writes it: alive
  CHECK(errno == EEXIST);
  CHECK_THAT(jitterd_loop_strerror(errno), Catch::Contains("name:"));
  // The first writer's pid as a process that has exited (a child reaped here): dead, replaced.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  first->segment->pid = child;
  jitterd_loop_probe* second = open_in(tree.root(), "rx0");
  REQUIRE(second != nullptr);
  record_script(second, 1000);
  jitterd_loop_close(first);  // the older writer goes: the file under the name is the second's
  const LoopFileRead read = read_loop_file(tree.root() / "jitterd-loop.rx0", me());
  INFO(read.message);
  REQUIRE(read.reading);
  CHECK(read.reading->samples == 5000);
  jitterd_loop_close(second);
  CHECK_FALSE(std::filesystem::exists(tree.root() / "jitterd-loop.rx0"));
  std::size_t left = 0;  // no temporary file left behind either
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(tree.root())) ++left;
  CHECK(left == 0);
}

// The record path keeps each gap's bucket from the call that takes the gap to the next call, which
// counts it (docs/benchmarks.md, "The loop probe in an application's loop"): every gap must still
// land once, in the sampler's bucket, whatever calls come between: flushes (once or twice in a
// row) and record_at again after them.
TEST_CASE("loop library: every gap in its bucket once, across flushes, in the sampler's buckets", "[loop]") {
  ScratchTree tree;
  jitterd_loop_probe* probe = open_in(tree.root(), "rx0");
  REQUIRE(probe != nullptr);
  std::vector<std::uint64_t> gaps(JITTERD_LOOP_WARMUP_GAPS, 100);  // the threshold: 2000 after these
  for (std::uint64_t gap = 0; gap <= 40; ++gap) gaps.push_back(gap);
  for (unsigned bit = 4; bit <= 40; ++bit)
    for (const std::uint64_t gap : {(1ULL << bit) - 1, 1ULL << bit, (1ULL << bit) + 1, 3ULL << (bit - 1)})
      gaps.push_back(gap);
  HistogramSnapshot expected;
  std::uint64_t now = 1'000'000, sum = 0, interruptions = 0, stolen = 0, max_gap = 0;
  jitterd_loop_record_at(probe, now);  // the first call: no gap yet
  for (std::size_t i = 0; i < gaps.size(); ++i) {
    jitterd_loop_record_at(probe, now += gaps[i]);
    ++expected.counts[histogram_bucket_index(gaps[i])];
    sum += gaps[i];
    max_gap = std::max(max_gap, gaps[i]);
    if (i >= JITTERD_LOOP_WARMUP_GAPS && gaps[i] >= 2000) ++interruptions, stolen += gaps[i];
    if (i % 37 == 0) jitterd_loop_flush(probe);
    if (i % 111 == 0) jitterd_loop_flush(probe);
  }
  jitterd_loop_flush(probe);
  const LoopFileRead read = read_loop_file(tree.root() / "jitterd-loop.rx0", me());
  jitterd_loop_close(probe);
  INFO(read.message);
  REQUIRE(read.reading);
  const LoopSegmentReading& r = *read.reading;
  CHECK(r.samples == gaps.size());
  for (std::size_t bucket = 0; bucket < kHistogramBuckets; ++bucket) {
    INFO("bucket " << bucket);
    CHECK(r.counts.gaps.counts[bucket] == expected.counts[bucket]);
  }
  CHECK(r.counts.sampled_ticks == sum);
  CHECK(r.counts.interruptions == interruptions);
  CHECK(r.counts.interrupted_ticks == stolen);
  CHECK(r.min_gap == 0);
  CHECK(r.max_gap == max_gap);
  CHECK(r.heartbeat_tick == now);
}

// jitterd_loop_record (its own read) and record_at (the caller's) on one probe, with flushes: the
// gap each leaves is counted by the other, once.
TEST_CASE("loop library: record and record_at on one probe count every gap once", "[loop]") {
  ScratchTree tree;
  jitterd_loop_options options{};
  options.directory = tree.root().c_str();
  options.ring_capacity = 16;
  options.slot_count = 16;
  jitterd_loop_probe* probe = jitterd_loop_open("rx0", 0, nullptr, &options);  // the native counter
  REQUIRE(probe != nullptr);
  const int calls = 3001;
  for (int i = 0; i < calls; ++i) {
    if (i % 3 == 0) {
      jitterd_loop_record(probe);
    } else {
      jitterd_loop_record_at(probe, jitterd_loop_read_counter());
    }
    if (i % 5 == 4) jitterd_loop_flush(probe);
  }
  jitterd_loop_flush(probe);
  const LoopFileRead read = read_loop_file(tree.root() / "jitterd-loop.rx0", me());
  const std::uint64_t last = probe->prev;
  jitterd_loop_close(probe);
  INFO(read.message);
  REQUIRE(read.reading);
  const LoopSegmentReading& r = *read.reading;
  CHECK(r.samples == calls - 1);
  CHECK(r.counts.gaps.total() == calls - 1);
  CHECK(r.counts.sampled_ticks == last - r.first_tick);
  CHECK(r.heartbeat_tick == last);
}

// The record path computes a gap's bucket its own way (from the highest set bit, as few
// instructions as it can): the sampler's bucket for every gap below 65536 and around every power
// of two up to the largest gap.
TEST_CASE("loop library: a gap's bucket is the sampler's, around every power of two", "[loop]") {
  ScratchTree tree;
  jitterd_loop_probe* probe = open_in(tree.root(), "rx0");
  REQUIRE(probe != nullptr);
  const auto bucket = [&](std::uint64_t gap) {
    return static_cast<std::size_t>(jitterd_loop_bucket_(probe, gap) - probe->counts);
  };
  for (std::uint64_t gap = 0; gap < 65536; ++gap) REQUIRE(bucket(gap) == histogram_bucket_index(gap));
  for (unsigned bit = 16; bit < 64; ++bit)
    for (std::int64_t step = -40; step <= 40; ++step) {
      const std::uint64_t gap = (1ULL << bit) + static_cast<std::uint64_t>(step);
      INFO("gap " << gap);
      REQUIRE(bucket(gap) == histogram_bucket_index(gap));
    }
  CHECK(bucket(UINT64_MAX) == histogram_bucket_index(UINT64_MAX));
  CHECK(bucket(UINT64_MAX) == JITTERD_LOOP_BUCKETS - 1);
  jitterd_loop_close(probe);
}
