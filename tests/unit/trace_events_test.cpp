// SPDX-License-Identifier: Apache-2.0
// Kernel tracepoint events: the format parser and the sample decoder on formats copied from a
// 6.x kernel and hand-built perf records, the ring walk across the wrap-around, probe() on scratch
// trees, and a real recording on CPU 0 that skips itself where tracefs or perf_event_open is not
// available.
#include "host/trace_events.h"

#include <linux/perf_event.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "fixture_tree.h"

using jitterd::decode_lost;
using jitterd::decode_sample;
using jitterd::parse_tracepoint_format;
using jitterd::read_ring;
using jitterd::TimedInterval;
using jitterd::TraceEvent;
using jitterd::TraceEventKind;
using jitterd::TraceEventReader;
using jitterd::TraceField;
using jitterd::Tracepoint;

namespace {

using jitterd::testing::ScratchTree;
using Bytes = std::vector<std::byte>;

// Formats from /sys/kernel/tracing/events on a 6.18 x86_64 kernel (print fmt lines shortened).
constexpr std::string_view irq_handler_entry_format =
    "name: irq_handler_entry\n"
    "ID: 225\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"
    "\n"
    "print fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n";

constexpr std::string_view softirq_entry_format =
    "name: softirq_entry\n"
    "ID: 223\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\n"
    "print fmt: \"vec=%u [action=%s]\", REC->vec, __print_symbolic(REC->vec, { 0, \"HI\" }, "
    "{ 1, \"TIMER\" }, { 2, \"NET_TX\" }, { 3, \"NET_RX\" }, { 4, \"BLOCK\" }, "
    "{ 5, \"IRQ_POLL\" }, { 6, \"TASKLET\" }, { 7, \"SCHED\" }, { 8, \"HRTIMER\" }, "
    "{ 9, \"RCU\" })\n";

constexpr std::string_view sched_switch_format =
    "name: sched_switch\n"
    "ID: 372\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
    "next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, ...\n";

constexpr std::string_view local_timer_entry_format =
    "name: local_timer_entry\n"
    "ID: 165\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:int vector;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"vector=%d\", REC->vector\n";

std::vector<Tracepoint> tracepoints() {
  return {
      {"irq/irq_handler_entry", TraceEventKind::irq, parse_tracepoint_format(irq_handler_entry_format)},
      {"irq/softirq_entry", TraceEventKind::softirq, parse_tracepoint_format(softirq_entry_format)},
      {"sched/sched_switch", TraceEventKind::sched_switch, parse_tracepoint_format(sched_switch_format)},
      {"irq_vectors/local_timer_entry", TraceEventKind::vector_entry,
       parse_tracepoint_format(local_timer_entry_format)},
  };
}

template <typename T>
void put(Bytes& bytes, std::size_t offset, T value) {
  if (bytes.size() < offset + sizeof value) bytes.resize(offset + sizeof value);
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

void put_text(Bytes& bytes, std::size_t offset, std::string_view text, std::size_t length) {
  if (bytes.size() < offset + length) bytes.resize(offset + length);
  std::memcpy(bytes.data() + offset, text.data(), std::min(text.size(), length));
}

// A raw tracepoint entry: common_type, flags, preempt count, common_pid, then the fields.
Bytes raw_entry(std::uint16_t type, std::size_t size) {
  Bytes raw(size);
  put<std::uint16_t>(raw, 0, type);
  put<std::int32_t>(raw, 4, 1234);
  return raw;
}

// A PERF_RECORD_SAMPLE laid out as decode_sample() documents, padded to 8 bytes.
Bytes sample_record(std::uint32_t tid, std::uint64_t time_ns, std::uint32_t cpu, const Bytes& raw) {
  const std::size_t size = (36 + raw.size() + 7) / 8 * 8;
  Bytes record(size);
  put<std::uint32_t>(record, 0, PERF_RECORD_SAMPLE);
  put<std::uint16_t>(record, 6, static_cast<std::uint16_t>(size));
  put<std::uint32_t>(record, 8, tid);
  put<std::uint32_t>(record, 12, tid);
  put<std::uint64_t>(record, 16, time_ns);
  put<std::uint32_t>(record, 24, cpu);
  put<std::uint32_t>(record, 32, static_cast<std::uint32_t>(size - 36));
  std::memcpy(record.data() + 36, raw.data(), raw.size());
  return record;
}

Bytes irq_raw(int irq, std::string_view name) {
  Bytes raw = raw_entry(225, 16);
  put<std::int32_t>(raw, 8, irq);
  // The kernel puts the string after the fixed fields; its length counts the NUL.
  put<std::uint32_t>(raw, 12, static_cast<std::uint32_t>((name.size() + 1) << 16 | 16));
  put_text(raw, 16, name, name.size() + 1);
  return raw;
}

Bytes softirq_raw(std::uint32_t vec) {
  Bytes raw = raw_entry(223, 12);
  put<std::uint32_t>(raw, 8, vec);
  return raw;
}

Bytes sched_switch_raw(std::string_view next_comm, std::int32_t next_pid) {
  Bytes raw = raw_entry(372, 64);
  put_text(raw, 8, "jitterd-cpu0", 16);
  put<std::int32_t>(raw, 24, 4321);
  put<std::int32_t>(raw, 28, 120);
  put<std::int64_t>(raw, 32, 0);
  put_text(raw, 40, next_comm, 16);
  put<std::int32_t>(raw, 56, next_pid);
  put<std::int32_t>(raw, 60, 120);
  return raw;
}

// Three required tracepoints and two x86 vectors, which other architectures lack.
constexpr std::array<jitterd::TracepointSpec, 5> specs = {{
    {"irq/irq_handler_entry", TraceEventKind::irq, true},
    {"irq/softirq_entry", TraceEventKind::softirq, true},
    {"sched/sched_switch", TraceEventKind::sched_switch, true},
    {"irq_vectors/local_timer_entry", TraceEventKind::vector_entry, false},
    {"irq_vectors/reschedule_entry", TraceEventKind::vector_entry, false},
}};

}  // namespace

namespace jitterd {
TEST_CASE("parse_tracepoint_format reads the ID and every field", "[trace_events]") {
  const auto format = parse_tracepoint_format(irq_handler_entry_format);
  CHECK(format.id == 225);
  REQUIRE(format.fields.size() == 6);
  CHECK(format.fields[0] == TraceField{"common_type", 0, 2, false, false});
  CHECK(format.fields[3] == TraceField{"common_pid", 4, 4, true, false});
  CHECK(format.fields[4] == TraceField{"irq", 8, 4, true, false});
  CHECK(format.fields[5] == TraceField{"name", 12, 4, false, true});
  CHECK(format.find("name") == &format.fields[5]);
  CHECK(format.find("vec") == nullptr);
}

TEST_CASE("parse_tracepoint_format keeps the bare name of array fields", "[trace_events]") {
  const auto format = parse_tracepoint_format(sched_switch_format);
  CHECK(format.id == 372);
  REQUIRE(format.fields.size() == 11);
  REQUIRE(format.find("prev_comm") != nullptr);
  CHECK(*format.find("prev_comm") == TraceField{"prev_comm", 8, 16, false, false});
  CHECK(*format.find("prev_state") == TraceField{"prev_state", 32, 8, true, false});
  CHECK(*format.find("next_comm") == TraceField{"next_comm", 40, 16, false, false});
  CHECK(*format.find("next_pid") == TraceField{"next_pid", 56, 4, true, false});
}

TEST_CASE("parse_tracepoint_format skips what it cannot read", "[trace_events]") {
  const auto format = parse_tracepoint_format(
      "name: broken\n"
      "format:\n"
      "\tfield:int good;\toffset:8;\tsize:4;\tsigned:1;\n"
      "\tfield:int no_offset;\tsize:4;\tsigned:1;\n"
      "\tfield:int bad_size;\toffset:12;\tsize:four;\tsigned:1;\n"
      "\tfield:u8 no_signed;\toffset:16;\tsize:1;\n"
      "\tfield:;\toffset:0;\tsize:0;\n");
  CHECK(format.id == -1);  // no "ID:" line
  REQUIRE(format.fields.size() == 2);
  CHECK(format.fields[0].name == "good");
  CHECK(format.fields[1] == TraceField{"no_signed", 16, 1, false, false});
  CHECK(parse_tracepoint_format("").fields.empty());
}

TEST_CASE("decode_sample decodes irq_handler_entry with its __data_loc name", "[trace_events]") {
  const auto event = decode_sample(sample_record(77, 123456789, 1, irq_raw(24, "virtio0-input.0")), tracepoints());
  REQUIRE(event);
  CHECK(event->cpu == 1);
  CHECK(event->tid == 77);
  CHECK(event->time_ns == 123456789);
  CHECK(event->kind == TraceEventKind::irq);
  CHECK(event->number == 24);
  CHECK(event->name == "virtio0-input.0");
  CHECK(event->detail == "irq 24 virtio0-input.0");
}

TEST_CASE("decode_sample names softirq vectors", "[trace_events]") {
  const auto net_rx = decode_sample(sample_record(0, 5, 0, softirq_raw(3)), tracepoints());
  REQUIRE(net_rx);
  CHECK(net_rx->kind == TraceEventKind::softirq);
  CHECK(net_rx->number == 3);
  CHECK(net_rx->detail == "NET_RX");
  const auto rcu = decode_sample(sample_record(0, 5, 0, softirq_raw(9)), tracepoints());
  REQUIRE(rcu);
  CHECK(rcu->detail == "RCU");
  const auto unknown = decode_sample(sample_record(0, 5, 0, softirq_raw(12)), tracepoints());
  REQUIRE(unknown);
  CHECK(unknown->detail == "softirq 12");
}

TEST_CASE("decode_sample decodes sched_switch to the next task", "[trace_events]") {
  const auto event = decode_sample(sample_record(4321, 99, 0, sched_switch_raw("kworker/0:1", 42)), tracepoints());
  REQUIRE(event);
  CHECK(event->kind == TraceEventKind::sched_switch);
  CHECK(event->number == 42);
  CHECK(event->name == "kworker/0:1");
  CHECK(event->detail == "switch to kworker/0:1");
  // A comm of the full 16 bytes has no NUL; the field's size bounds it.
  const auto full = decode_sample(sample_record(1, 1, 0, sched_switch_raw("abcdefghijklmnop", 7)), tracepoints());
  REQUIRE(full);
  CHECK(full->name == "abcdefghijklmnop");
}

TEST_CASE("decode_sample decodes x86 vector events", "[trace_events]") {
  Bytes raw = raw_entry(165, 12);
  put<std::int32_t>(raw, 8, 236);
  const auto event = decode_sample(sample_record(0, 1, 0, raw), tracepoints());
  REQUIRE(event);
  CHECK(event->kind == TraceEventKind::vector_entry);
  CHECK(event->number == 236);
  CHECK(event->name == "local_timer");  // the table's name (host/x86_vectors.h), which gives its cause
  CHECK(event->detail == "local timer");
}

// The watch's tracepoints method's own kinds, with formats from the same 6.18 kernel.
std::string_view common_fields() {
  return "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";
}

Tracepoint watch_tracepoint(std::string path, TraceEventKind kind, int id, std::string_view fields) {
  const std::string text =
      "ID: " + std::to_string(id) + "\nformat:\n" + std::string(common_fields()) + std::string(fields);
  return {std::move(path), kind, parse_tracepoint_format(text)};
}

TEST_CASE("decode_sample decodes the watch's exits, NMIs, TLB flushes, tick stops and a switch's previous task",
          "[trace_events]") {
  std::vector<Tracepoint> tps = tracepoints();
  tps.push_back(watch_tracepoint("irq/irq_handler_exit", TraceEventKind::irq_exit, 224,
                                 "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
                                 "\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n"));
  tps.push_back(watch_tracepoint("nmi/nmi_handler", TraceEventKind::nmi, 170,
                                 "\tfield:void * handler;\toffset:8;\tsize:8;\tsigned:0;\n"
                                 "\tfield:s64 delta_ns;\toffset:16;\tsize:8;\tsigned:1;\n"
                                 "\tfield:int handled;\toffset:24;\tsize:4;\tsigned:1;\n"));
  tps.push_back(watch_tracepoint("timer/tick_stop", TraceEventKind::tick_stop, 454,
                                 "\tfield:int success;\toffset:8;\tsize:4;\tsigned:1;\n"
                                 "\tfield:int dependency;\toffset:12;\tsize:4;\tsigned:1;\n"));
  tps.push_back(watch_tracepoint("tlb/tlb_flush", TraceEventKind::tlb_flush, 188,
                                 "\tfield:int reason;\toffset:8;\tsize:4;\tsigned:1;\n"
                                 "\tfield:unsigned long pages;\toffset:16;\tsize:8;\tsigned:0;\n"));
  Bytes exit = raw_entry(224, 16);
  put<std::int32_t>(exit, 8, 36);
  const auto irq_exit = decode_sample(sample_record(0, 10, 2, exit), tps);
  REQUIRE(irq_exit);
  CHECK(irq_exit->kind == TraceEventKind::irq_exit);
  CHECK(irq_exit->number == 36);
  CHECK(irq_exit->tracepoint == 4);  // its index in the list given
  Bytes nmi = raw_entry(170, 32);
  put<std::int64_t>(nmi, 16, 5321);
  const auto nmi_event = decode_sample(sample_record(0, 10, 2, nmi), tps);
  REQUIRE(nmi_event);
  CHECK(nmi_event->value == 5321);
  Bytes tick = raw_entry(454, 16);
  put<std::int32_t>(tick, 8, 0);
  put<std::int32_t>(tick, 12, 4);
  const auto tick_event = decode_sample(sample_record(0, 10, 2, tick), tps);
  REQUIRE(tick_event);
  CHECK(tick_event->number == 0);
  CHECK(tick_event->value == 4);
  Bytes flush = raw_entry(188, 24);
  put<std::int32_t>(flush, 8, 1);
  const auto flush_event = decode_sample(sample_record(0, 10, 2, flush), tps);
  REQUIRE(flush_event);
  CHECK(flush_event->number == 1);
  Bytes preempted = sched_switch_raw("noise_injector", 99);
  put<std::int64_t>(preempted, 32, 0x100);  // "R+": TASK_REPORT_MAX, preempted
  const auto switched = decode_sample(sample_record(4321, 10, 2, preempted), tps);
  REQUIRE(switched);
  CHECK(switched->prev_tid == 4321);
  CHECK(switched->value == 0x100);
  CHECK(switched->number == 99);
}

TEST_CASE("decode_sample rejects other records and malformed ones", "[trace_events]") {
  const auto tps = tracepoints();
  const Bytes good = sample_record(0, 1, 0, softirq_raw(1));
  REQUIRE(decode_sample(good, tps));

  SECTION("an unknown tracepoint id") {
    CHECK_FALSE(decode_sample(sample_record(0, 1, 0, raw_entry(999, 12)), tps));
  }
  SECTION("another record type") {
    Bytes record = good;
    put<std::uint32_t>(record, 0, PERF_RECORD_LOST);
    CHECK_FALSE(decode_sample(record, tps));
  }
  SECTION("a header size past the bytes given") {
    const Bytes record(good.begin(), good.end() - 8);
    CHECK_FALSE(decode_sample(record, tps));
  }
  SECTION("a raw size past the record") {
    Bytes record = good;
    put<std::uint32_t>(record, 32, 64);
    CHECK_FALSE(decode_sample(record, tps));
  }
  SECTION("a __data_loc string past the raw data") {
    Bytes raw = irq_raw(5, "eth0");
    put<std::uint32_t>(raw, 12, 200u << 16 | 16);
    CHECK_FALSE(decode_sample(sample_record(0, 1, 0, raw), tps));
  }
  SECTION("no tracepoints known") { CHECK_FALSE(decode_sample(good, {})); }
}

TEST_CASE("decode_lost reads PERF_RECORD_LOST", "[trace_events]") {
  Bytes record(24);
  put<std::uint32_t>(record, 0, PERF_RECORD_LOST);
  put<std::uint16_t>(record, 6, 24);
  put<std::uint64_t>(record, 8, 1);     // id
  put<std::uint64_t>(record, 16, 517);  // lost
  CHECK(decode_lost(record) == std::optional<std::uint64_t>(517));
  CHECK_FALSE(decode_lost(sample_record(0, 1, 0, softirq_raw(1))));
}

TEST_CASE("read_ring walks records, copying the one that wraps", "[trace_events]") {
  // A 128-byte ring holding three 24-byte records from position 112: the first straddles the
  // end (its last 8 bytes at 0..7), the next two follow at 8 and 32.
  Bytes ring(128);
  std::vector<Bytes> written;
  std::uint64_t position = 112;
  for (std::uint64_t k = 0; k < 3; ++k) {
    Bytes record(24);
    put<std::uint32_t>(record, 0, 100 + static_cast<std::uint32_t>(k));
    put<std::uint16_t>(record, 6, 24);
    put<std::uint64_t>(record, 8, 0x1111111111111111 * (k + 1));
    put<std::uint64_t>(record, 16, ~k);
    for (std::size_t i = 0; i < record.size(); ++i) ring[(position + i) % ring.size()] = record[i];
    written.push_back(record);
    position += 24;
  }
  std::vector<Bytes> seen;
  Bytes scratch;
  const auto visit = [&](std::span<const std::byte> r) { seen.emplace_back(r.begin(), r.end()); };

  CHECK(read_ring(ring, 112, 184, scratch, visit) == 184);
  CHECK(seen == written);

  seen.clear();
  CHECK(read_ring(ring, 112, 112, scratch, visit) == 112);  // empty
  CHECK(seen.empty());
  CHECK(read_ring(ring, 112, 152, scratch, visit) == 136);  // the second is not all there
  CHECK(seen == std::vector<Bytes>{written[0]});

  seen.clear();
  CHECK(read_ring(ring, 136, 184, scratch, visit) == 184);  // no wrap: no copy needed
  CHECK(seen == std::vector<Bytes>{written[1], written[2]});

  seen.clear();
  Bytes bad = ring;
  put<std::uint16_t>(bad, 118, 4);  // the first header's size, below a header's
  CHECK(read_ring(bad, 112, 184, scratch, visit) == 112);
  CHECK(seen.empty());
}

TEST_CASE("TraceEventReader::probe without tracefs names the paths it looked at", "[trace_events]") {
  const ScratchTree tree;
  const auto availability = TraceEventReader::probe(tree.reader(), specs);
  CHECK_FALSE(availability.available);
  CHECK(availability.tracepoints.empty());
  CHECK_THAT(availability.reason, Catch::Contains((tree.root() / "kernel/tracing/events").string()) &&
                                      Catch::Contains((tree.root() / "kernel/debug/tracing/events").string()));
}

TEST_CASE("TraceEventReader::probe reads the formats of a tracefs tree", "[trace_events]") {
  const ScratchTree tree;
  const std::string events = "kernel/debug/tracing/events/";
  tree.write(events + "irq/irq_handler_entry/format", std::string(irq_handler_entry_format));
  tree.write(events + "irq/softirq_entry/format", std::string(softirq_entry_format));

  SECTION("without x86 vectors (arm64)") {
    tree.write(events + "sched/sched_switch/format", std::string(sched_switch_format));
    const auto availability = TraceEventReader::probe(tree.reader(), specs);
    REQUIRE(availability.available);
    CHECK(availability.reason.empty());
    REQUIRE(availability.tracepoints.size() == 3);
    CHECK(availability.tracepoints[2].path == "sched/sched_switch");
    CHECK(availability.tracepoints[2].format.id == 372);
    CHECK(availability.missing ==
          std::vector<std::string>{"irq_vectors/local_timer_entry", "irq_vectors/reschedule_entry"});
  }
  SECTION("with a local timer vector") {
    tree.write(events + "sched/sched_switch/format", std::string(sched_switch_format));
    tree.write(events + "irq_vectors/local_timer_entry/format", std::string(local_timer_entry_format));
    const auto availability = TraceEventReader::probe(tree.reader(), specs);
    REQUIRE(availability.available);
    REQUIRE(availability.tracepoints.size() == 4);
    CHECK(availability.tracepoints[3].kind == TraceEventKind::vector_entry);
    CHECK(availability.missing == std::vector<std::string>{"irq_vectors/reschedule_entry"});
  }
  SECTION("a required tracepoint missing") {
    const auto availability = TraceEventReader::probe(tree.reader(), specs);
    CHECK_FALSE(availability.available);
    CHECK_THAT(availability.reason, Catch::Contains("sched/sched_switch/format"));
  }
  SECTION("a format without a field the decoder reads") {
    tree.write(events + "sched/sched_switch/format", "ID: 372\nformat:\n\tfield:int x;\toffset:8;\tsize:4;\n");
    const auto availability = TraceEventReader::probe(tree.reader(), specs);
    CHECK_FALSE(availability.available);
    CHECK_THAT(availability.reason, Catch::Contains("sched/sched_switch/format: no field"));
  }
}

namespace {

std::uint64_t monotonic_raw_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

TEST_CASE("TraceEventReader records this machine's events on CPU 0", "[trace_events]") {
  const jitterd::HostReader host;
  const auto availability = TraceEventReader::probe(host, specs);
  if (!availability.available) {
    WARN("skipped: " << availability.reason);
    return;
  }
  std::unique_ptr<TraceEventReader> reader;
  try {
    reader = std::make_unique<TraceEventReader>(host, std::vector<int>{0}, 64, specs, CLOCK_MONOTONIC_RAW);
  } catch (const std::runtime_error& e) {
    WARN("skipped: " << e.what());
    return;
  }
  cpu_set_t previous;
  REQUIRE(::sched_getaffinity(0, sizeof previous, &previous) == 0);
  cpu_set_t cpu0;
  CPU_ZERO(&cpu0);
  CPU_SET(0, &cpu0);
  if (::sched_setaffinity(0, sizeof cpu0, &cpu0) != 0) {
    WARN("skipped: cannot pin the test to CPU 0: " << std::strerror(errno));
    return;
  }
  // Each sleep switches CPU 0 to another task (idle at least) and back.
  std::vector<TimedInterval> sleeps;
  const std::uint64_t begin = monotonic_raw_ns();
  while (monotonic_raw_ns() - begin < 200'000'000) {
    const std::uint64_t before = monotonic_raw_ns();
    const timespec millisecond{0, 1'000'000};
    ::nanosleep(&millisecond, nullptr);
    static_cast<void>(::getppid());
    sleeps.push_back({before, monotonic_raw_ns()});
  }
  const std::uint64_t end = monotonic_raw_ns();
  ::sched_setaffinity(0, sizeof previous, &previous);

  const std::vector<TraceEvent> events = reader->drain();
  std::map<TraceEventKind, int> in_window;
  for (const TraceEvent& event : events) {
    CHECK(event.cpu == 0);
    if (event.time_ns >= begin && event.time_ns <= end) ++in_window[event.kind];
  }
  CHECK(std::is_sorted(events.begin(), events.end(),
                       [](const TraceEvent& a, const TraceEvent& b) { return a.time_ns < b.time_ns; }));
  INFO(events.size() << " events, " << in_window[TraceEventKind::sched_switch] << " switches, "
                     << in_window[TraceEventKind::irq] << " irqs, " << in_window[TraceEventKind::vector_entry]
                     << " vector entries in the window; " << reader->lost_by_ring()[0] << " lost");
  CHECK(reader->undecoded() == 0);
  CHECK(in_window[TraceEventKind::sched_switch] + in_window[TraceEventKind::irq] > 0);
  // The sleeps are interruptions of the test thread by construction: most must hold a switch.
  std::size_t switched = 0;
  for (const TimedInterval& sleep : sleeps) {
    const auto first = std::lower_bound(events.begin(), events.end(), sleep.start_ns,
                                        [](const TraceEvent& e, std::uint64_t t) { return e.time_ns < t; });
    auto it = first;
    while (it != events.end() && it->time_ns <= sleep.end_ns && it->kind != TraceEventKind::sched_switch) ++it;
    if (it != events.end() && it->time_ns <= sleep.end_ns) ++switched;
  }
  CHECK(switched * 2 > sleeps.size());
}

}  // namespace jitterd
