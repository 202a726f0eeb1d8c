// SPDX-License-Identifier: Apache-2.0
// The loop tracker under hostile files (issue 35): files of users not accepted take no place under
// the cap and a full cap never drops an accepted loop; a loop lost otherwise than by its writer
// closing it stays, down; refusals count files, not changes, and their log lines are limited per
// reason with the rest counted; a hard-linked file is refused before a byte is read; a dead
// writer's loop is forgotten after forget_after, its file removed; a missing directory fails the scan.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fixture_tree.h"
#include "jitterd/loop_probe.h"
#include "loops/loop_reader.h"
#include "probes/loops_probe.h"

using namespace jitterd;
using jitterd::testing::ScratchTree;

namespace {

std::vector<uid_t> only_me() { return {::geteuid()}; }

std::string stat_line(int pid, unsigned long long start) {
  std::string line = std::to_string(pid) + " (app) R";
  for (int field = 4; field <= 52; ++field) line += " " + std::string(field == 22 ? std::to_string(start) : "0");
  return line + "\n";
}

// A live loop NAME in `dir`, its writer (this process) alive in the tree's /proc.
jitterd_loop_probe* live_loop(ScratchTree& tree, const std::filesystem::path& dir, const char* name) {
  jitterd_loop_options options{};
  options.directory = dir.c_str();
  options.counter = JITTERD_LOOP_COUNTER_CALLER;
  options.hertz = 1'000'000'000;
  options.ring_capacity = 16;
  options.slot_count = 16;
  jitterd_loop_probe* probe = jitterd_loop_open(name, 0, nullptr, &options);
  REQUIRE(probe != nullptr);
  std::uint64_t now = 1000;
  for (int i = 0; i <= 5000; ++i) jitterd_loop_record_at(probe, now += 100);
  jitterd_loop_flush(probe);
  tree.write("proc/" + std::to_string(::getpid()) + "/stat", stat_line(::getpid(), probe->segment->start_time));
  return probe;
}

void junk(const std::filesystem::path& path, std::size_t bytes = 1000) {
  std::ofstream(path) << std::string(bytes, 'x');
}

std::size_t lines_with(const std::vector<std::string>& lines, const std::string& text) {
  std::size_t n = 0;
  for (const std::string& line : lines) n += line.find(text) != std::string::npos ? 1 : 0;
  return n;
}

std::uint64_t count_of(const std::map<LoopRefusal, std::uint64_t>& counts, LoopRefusal reason) {
  const auto found = counts.find(reason);
  return found == counts.end() ? 0 : found->second;
}

}  // namespace

TEST_CASE("loop tracker: other users' files take no place; a full cap never drops an accepted loop", "[loop]") {
  if (::geteuid() != 0) {
    WARN("skipped: making files of another user needs root");
    return;
  }
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  // An unprivileged user's files that sort first, more than the cap.
  for (int i = 0; i < 12; ++i) {
    const auto path = dir / ("jitterd-loop.aaa" + std::to_string(i));
    junk(path);
    REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
  }
  jitterd_loop_probe* probe = live_loop(tree, dir, "zzz");
  LoopTracker tracker({.directory = dir, .allowed_users = only_me(), .max_loops = 4});
  tracker.scan(tree.reader(), 100.0);
  REQUIRE(tracker.loops().count("jitterd-loop.zzz") == 1);
  CHECK(tracker.loops().at("jitterd-loop.zzz").up);
  CHECK(tracker.loops().size() == 1);  // the other user's files are not tracked
  CHECK(count_of(tracker.refusals(), LoopRefusal::owner) == 12);
  CHECK(count_of(tracker.refusals(), LoopRefusal::too_many) == 0);
  // Accepted users' new files beyond the cap: refused (too_many), the accepted loop keeps its place.
  for (int i = 0; i < 5; ++i) junk(dir / ("jitterd-loop.b" + std::to_string(i)));
  for (double now = 101; now < 104; ++now) {
    jitterd_loop_record_at(probe, static_cast<std::uint64_t>(now) * 1'000'000'000ULL);
    jitterd_loop_flush(probe);
    tracker.scan(tree.reader(), now);
    CHECK(tracker.loops().at("jitterd-loop.zzz").up);
    CHECK(tracker.loops().size() == 4);
  }
  CHECK(count_of(tracker.refusals(), LoopRefusal::too_many) == 2);  // each file once, not once a scan
  CHECK(count_of(tracker.refusals(), LoopRefusal::owner) == 12);
  CHECK(count_of(tracker.refusals(), LoopRefusal::magic) == 3);
  jitterd_loop_close(probe);
}

TEST_CASE("loop tracker: a loop lost otherwise than by its writer closing it stays, down", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  jitterd_loop_probe* probe = live_loop(tree, dir, "rx0");
  LoopSettings settings;
  settings.enabled = true;
  settings.directory = dir.string();
  LoopsProbe loops(settings);
  ProbeContext context;
  context.host = tree.reader();
  loops.run(context);
  // The segment turns unreadable as a segment (its magic wiped): refused, but the loop's series
  // stay with up 0, so JitterdLoopDown fires.
  probe->segment->magic = 0;
  const ProbeResult result = loops.run(context);
  bool down = false;
  for (const ProbeMetric& m : result.metrics)
    if (m.name == "jitterd_loop_up") down = m.value == 0 && m.labels.at(0).second == "rx0";
  CHECK(down);
  REQUIRE(result.loops.has_value());
  REQUIRE(result.loops->loops.size() == 1);
  CHECK_FALSE(result.loops->loops[0].up);
  CHECK_THAT(result.loops->loops[0].why, Catch::Contains("magic"));
  // Its writer closes it: the file goes, and the loop's series with it.
  jitterd_loop_close(probe);
  const ProbeResult closed = loops.run(context);
  for (const ProbeMetric& m : closed.metrics) CHECK(m.name != "jitterd_loop_up");
}

TEST_CASE("loop tracker: refusals count files, not changes; log lines are limited per reason", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  LoopTracker tracker({.directory = dir, .allowed_users = only_me()});
  // One file whose reason changes at every scan: one refusal.
  const auto flip = dir / "jitterd-loop.flip";
  for (int scan = 0; scan < 6; ++scan) {
    junk(flip, scan % 2 == 0 ? 1000 : 100);  // magic, then truncated, then magic ...
    tracker.scan(tree.reader(), 100.0 + scan);
  }
  CHECK(count_of(tracker.refusals(), LoopRefusal::magic) == 1);
  CHECK(count_of(tracker.refusals(), LoopRefusal::truncated) == 0);
  tracker.take_events();
  // 30 new files in one scan: 30 refusals, 10 log lines, 20 counted as left out of the log.
  for (int i = 0; i < 30; ++i) junk(dir / ("jitterd-loop.j" + std::to_string(i)));
  tracker.scan(tree.reader(), 200.0);
  const auto lines = tracker.take_events();
  CHECK(count_of(tracker.refusals(), LoopRefusal::magic) == 31);
  CHECK(lines_with(lines, "refused (magic)") <= kLoopLogLinesPerMinute);
  CHECK(count_of(tracker.log_lines_suppressed(), LoopRefusal::magic) >= 20);
  // The minute over: one line sums up what was left out.
  tracker.scan(tree.reader(), 261.0);
  CHECK(lines_with(tracker.take_events(), "more loop files refused (magic) in the last minute were not logged") ==
        1);
  // Removed and made again: a new file, counted again.
  std::filesystem::remove(dir / "jitterd-loop.j0");
  tracker.scan(tree.reader(), 262.0);
  junk(dir / "jitterd-loop.j0");
  tracker.scan(tree.reader(), 263.0);
  CHECK(count_of(tracker.refusals(), LoopRefusal::magic) == 32);
  // One removed and another made at once under a new name (the inode may well be reused): a new file.
  std::filesystem::remove(dir / "jitterd-loop.j1");
  junk(dir / "jitterd-loop.other");
  tracker.scan(tree.reader(), 264.0);
  CHECK(count_of(tracker.refusals(), LoopRefusal::magic) == 33);
}

TEST_CASE("loop reader: a hard-linked file is refused before any of its bytes is read", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  const auto outside = tree.root() / "secret";
  std::ofstream(outside) << "SECRET!!" << std::string(100'000, 's');
  std::filesystem::create_hard_link(outside, dir / "jitterd-loop.secret");
  const LoopFileRead read = read_loop_file(dir / "jitterd-loop.secret", only_me());
  CHECK(read.reason == LoopRefusal::links);
  CHECK_THAT(read.message, Catch::Contains("2 hard links"));
  CHECK_THAT(read.message, !Catch::Contains("SECRET") && !Catch::Contains("0x") && !Catch::Contains("100008"));
}

TEST_CASE("loop tracker: a dead writer's loop is down, then forgotten and its file removed", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  jitterd_loop_probe* probe = live_loop(tree, dir, "rx0");
  LoopTracker tracker({.directory = dir, .allowed_users = only_me(), .forget_after = std::chrono::minutes(2)});
  tracker.scan(tree.reader(), 100.0);
  CHECK(tracker.loops().at("jitterd-loop.rx0").up);
  std::filesystem::remove(tree.root() / "proc" / std::to_string(::getpid()) / "stat");  // the writer dies
  tracker.scan(tree.reader(), 101.0);
  CHECK_FALSE(tracker.loops().at("jitterd-loop.rx0").up);
  tracker.scan(tree.reader(), 220.0);  // 119 s later: still down, still there
  REQUIRE(tracker.loops().count("jitterd-loop.rx0") == 1);
  tracker.take_events();
  tracker.scan(tree.reader(), 222.0);  // past forget_after
  CHECK(tracker.loops().empty());
  CHECK(tracker.forgotten() == 1);
  CHECK(lines_with(tracker.take_events(),
                   "loop rx0 forgotten: its writer has been gone for 121 s "
                   "(loops.forget_after); its file removed") == 1);
  CHECK_FALSE(std::filesystem::exists(dir / "jitterd-loop.rx0"));
  munmap(probe->segment, probe->mapped_bytes);
  free(probe);
}

TEST_CASE("loop tracker: a live writer's stopped loop is down and never forgotten", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  jitterd_loop_probe* probe = live_loop(tree, dir, "rx0");
  LoopTracker tracker({.directory = dir, .allowed_users = only_me(), .forget_after = std::chrono::minutes(1)});
  tracker.scan(tree.reader(), 100.0);
  tracker.scan(tree.reader(), 1000.0);
  REQUIRE(tracker.loops().count("jitterd-loop.rx0") == 1);
  CHECK_FALSE(tracker.loops().at("jitterd-loop.rx0").up);
  CHECK(std::filesystem::exists(dir / "jitterd-loop.rx0"));
  jitterd_loop_close(probe);
}

TEST_CASE("loop tracker: a directory that is not there fails the scan, naming it", "[loop]") {
  ScratchTree tree;
  LoopTracker tracker({.directory = tree.root() / "missing", .allowed_users = only_me()});
  CHECK_THROWS_WITH(tracker.scan(tree.reader(), 1.0),
                    Catch::Contains("loops.directory") && Catch::Contains("missing"));
}

TEST_CASE("loop tracker: with owner prefixes a loop's name must begin with its owner's user name", "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  jitterd_loop_probe* other = live_loop(tree, dir, "trader.rx0");  // not this user's name
  jitterd_loop_probe* own = live_loop(tree, dir, "me.rx0");
  LoopTracker tracker({.directory = dir,
                       .allowed_users = only_me(),
                       .owner_names = std::map<uid_t, std::string>{{::geteuid(), "me"}}});
  tracker.scan(tree.reader(), 100.0);
  CHECK(tracker.loops().at("jitterd-loop.me.rx0").up);
  const LoopState& squatted = tracker.loops().at("jitterd-loop.trader.rx0");
  CHECK(squatted.refused);
  CHECK(squatted.reason == LoopRefusal::name);
  CHECK_THAT(squatted.message, Catch::Contains("does not begin with its owner's user name 'me.'"));
  jitterd_loop_close(other);
  jitterd_loop_close(own);
}

TEST_CASE("loop reader: a reading copies the ring entries and slots since the last one, within its bytes",
          "[loop]") {
  ScratchTree tree;
  const auto dir = tree.root() / "loops";
  std::filesystem::create_directories(dir);
  jitterd_loop_options options{};
  options.directory = dir.c_str();
  options.counter = JITTERD_LOOP_COUNTER_CALLER;
  options.hertz = 1'000'000'000;
  options.ring_capacity = 65536;
  options.slot_count = 4096;  // 1024 s of slots: a large segment
  jitterd_loop_probe* probe = jitterd_loop_open("big", 0, nullptr, &options);
  REQUIRE(probe != nullptr);
  const std::uint64_t total = probe->segment->total_bytes;
  std::uint64_t now = 1000;
  // Warm-up (floor 100 ticks, threshold 2000), then 500 interruptions of 50 us.
  const auto record = [&](int gaps, int interruptions) {
    for (int i = 0; i < gaps; ++i) jitterd_loop_record_at(probe, now += 100);
    for (int i = 0; i < interruptions; ++i) jitterd_loop_record_at(probe, now += 50'000);
    jitterd_loop_flush(probe);
  };
  record(5000, 500);
  tree.write("proc/" + std::to_string(::getpid()) + "/stat", stat_line(::getpid(), probe->segment->start_time));
  LoopTracker tracker({.directory = dir, .allowed_users = only_me(), .window = std::chrono::seconds(60)});
  tracker.scan(tree.reader(), 100.0);
  const LoopState& state = tracker.loops().at("jitterd-loop.big");
  REQUIRE(state.up);
  CHECK(state.reading.ring.empty());  // the first reading: attribution starts from the head
  const std::uint64_t first_bytes = tracker.bytes_read();
  INFO("segment " << total << " bytes; first reading " << first_bytes);
  CHECK(first_bytes < 512 + 2 * (kLoopHeadBytes + 16 * 300));  // the window's slots at most, no ring
  const std::uint64_t window_max = state.reading.max_between(0, state.reading.heartbeat_tick);
  CHECK(window_max == 50'000);
  record(2000, 3);
  tracker.scan(tree.reader(), 101.0);
  CHECK(state.up);
  CHECK(state.reading.ring.size() == 3);  // only the new entries
  CHECK(state.reading.ring_pushed == 503);
  CHECK(tracker.bytes_read() < 512 + 2 * (kLoopHeadBytes + 16 * 8));
  CHECK(state.reading.max_between(0, state.reading.heartbeat_tick) == 50'000);  // the older slot kept
  // A plan's bytes bound the entries copied: the newest that fit.
  record(10, 100);
  const LoopFileRead few = read_loop_file(dir / "jitterd-loop.big", only_me(), {0, 16 * 10, 0, 0});
  REQUIRE(few.reading);
  CHECK(few.reading->ring.size() == 10);
  CHECK(few.reading->ring_pushed == 603);
  jitterd_loop_close(probe);
}
