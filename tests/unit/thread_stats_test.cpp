// SPDX-License-Identifier: Apache-2.0
// Context-switch counters from /proc/PID/task/TID/status: the parser on literal text, the reader
// on the smt8_isolated fixture's procfs.
#include "host/thread_stats.h"
#include "fixture_tree.h"

#include <catch2/catch.hpp>

using jitterd::HostReader;
using jitterd::parse_context_switches;
using jitterd::read_thread_context_switches;

namespace {

using jitterd::testing::fixtures;

}  // namespace

TEST_CASE("parse_context_switches reads both counters", "[thread_stats]") {
  const auto switches = parse_context_switches(
      "Name:\tjitterd\nThreads:\t2\nvoluntary_ctxt_switches:\t150\n"
      "nonvoluntary_ctxt_switches:\t7\n");
  REQUIRE(switches);
  CHECK(switches->voluntary == 150);
  CHECK(switches->involuntary == 7);
}

TEST_CASE("parse_context_switches does not mistake one counter for the other", "[thread_stats]") {
  // nonvoluntary first: a substring search for "voluntary_ctxt_switches" would find it.
  const auto switches = parse_context_switches("nonvoluntary_ctxt_switches:\t9\nvoluntary_ctxt_switches:\t3");
  REQUIRE(switches);
  CHECK(switches->voluntary == 3);
  CHECK(switches->involuntary == 9);
}

TEST_CASE("parse_context_switches reads counters beyond 32 bits", "[thread_stats]") {
  const auto switches = parse_context_switches(
      "voluntary_ctxt_switches: 18446744073709551615\nnonvoluntary_ctxt_switches: 4294967296\n");
  REQUIRE(switches);
  CHECK(switches->voluntary == UINT64_MAX);
  CHECK(switches->involuntary == 4294967296ULL);
}

TEST_CASE("parse_context_switches rejects missing or malformed counters", "[thread_stats]") {
  CHECK_FALSE(parse_context_switches(""));
  CHECK_FALSE(parse_context_switches("voluntary_ctxt_switches:\t1\n"));
  CHECK_FALSE(parse_context_switches("nonvoluntary_ctxt_switches:\t1\n"));
  CHECK_FALSE(parse_context_switches("voluntary_ctxt_switches:\tlots\nnonvoluntary_ctxt_switches:\t1\n"));
  CHECK_FALSE(parse_context_switches("voluntary_ctxt_switches:\t\nnonvoluntary_ctxt_switches:\t1\n"));
  CHECK_FALSE(parse_context_switches("voluntary_ctxt_switches:\t-1\nnonvoluntary_ctxt_switches:\t1\n"));
}

TEST_CASE("read_thread_context_switches reads a thread's status under the procfs root", "[thread_stats]") {
  const HostReader host(fixtures / "smt8_isolated/sys", fixtures / "smt8_isolated/proc");
  const auto main_thread = read_thread_context_switches(host, 1234, 1234);
  REQUIRE(main_thread);
  CHECK(main_thread->voluntary == 1520);
  CHECK(main_thread->involuntary == 37);
  const auto sampler = read_thread_context_switches(host, 1234, 1240);
  REQUIRE(sampler);
  CHECK(sampler->voluntary == 2);
  CHECK(sampler->involuntary == 4711);
}

TEST_CASE("read_thread_context_switches gives nothing for a thread that is gone", "[thread_stats]") {
  const HostReader host(fixtures / "smt8_isolated/sys", fixtures / "smt8_isolated/proc");
  CHECK_FALSE(read_thread_context_switches(host, 1234, 9999));
  CHECK_FALSE(read_thread_context_switches(host, 4321, 4321));
}

TEST_CASE("read_thread_context_switches from a process's task directory, opened once", "[thread_stats]") {
  const HostReader host(fixtures / "smt8_isolated/sys", fixtures / "smt8_isolated/proc");
  const jitterd::Directory tasks = host.proc_dir("1234/task");
  REQUIRE(tasks.open());
  jitterd::FileBuffer buffer;
  const auto sampler = read_thread_context_switches(tasks, 1240, buffer);
  REQUIRE(sampler);
  CHECK(sampler->voluntary == 2);
  CHECK(sampler->involuntary == 4711);
  CHECK(read_thread_context_switches(tasks, 1234, buffer)->voluntary == 1520);
  CHECK_FALSE(read_thread_context_switches(tasks, 9999, buffer));
  CHECK_FALSE(read_thread_context_switches(host.proc_dir("4321/task"), 4321, buffer));
}
