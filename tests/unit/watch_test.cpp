// SPDX-License-Identifier: Apache-2.0
// The counts engine on scratch /proc trees whose counters the test moves between readings: the
// application's threads coming and going, a reused thread number, a CPU going offline, and the
// parsers of the scheduler's counters; the configuration and CPU selection of watched CPUs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "config/config.h"
#include "fixture_tree.h"
#include "host/cpu_selection.h"
#include "host/tasks.h"
#include "probe_result_lookup.h"
#include "probes/watch_probe.h"
#include "watch/application.h"
#include "watch/counts_engine.h"
#include "watch/sched_counters.h"

using namespace jitterd;
using jitterd::testing::named;

namespace {

// A /proc/PID/task/TID/stat line: comm, start time (field 22) and last CPU (field 39).
std::string watch_stat_line(int tid, const std::string& comm, unsigned long long start, int cpu) {
  std::string line = std::to_string(tid) + " (" + comm + ") R";
  for (int field = 4; field <= 52; ++field) {
    const std::string value = field == 22 ? std::to_string(start) : field == 39 ? std::to_string(cpu) : "0";
    line += " " + value;
  }
  return line + "\n";
}

struct WatchedThreadFiles {
  int pid, tid;
  std::string comm;
  unsigned long long start;
  int cpu;
  std::uint64_t involuntary, voluntary, run_ns, wait_ns;
};

void write_thread(const jitterd::testing::ScratchTree& proc, const WatchedThreadFiles& t, unsigned uid = 0) {
  const std::string dir = std::to_string(t.pid) + "/task/" + std::to_string(t.tid) + "/";
  const std::string ids = std::to_string(uid) + "\t" + std::to_string(uid) + "\t0\t0";
  const std::string status = "Name:\t" + t.comm + "\nTgid:\t" + std::to_string(t.pid) + "\nUid:\t" + ids +
                             "\nCpus_allowed_list:\t" + std::to_string(t.cpu) + "\nvoluntary_ctxt_switches:\t" +
                             std::to_string(t.voluntary) + "\nnonvoluntary_ctxt_switches:\t" +
                             std::to_string(t.involuntary) + "\n";
  for (const std::string& base : {dir, std::to_string(t.tid) + "/"}) {
    proc.write(base + "stat", watch_stat_line(t.tid, t.comm, t.start, t.cpu));
    proc.write(base + "status", status);
  }
  proc.write(dir + "schedstat", std::to_string(t.run_ns) + " " + std::to_string(t.wait_ns) + " " +
                                    std::to_string(t.involuntary) + "\n");
}

void remove_thread(const jitterd::testing::ScratchTree& proc, int pid, int tid) {
  std::filesystem::remove_all(proc.root() / std::to_string(pid) / "task" / std::to_string(tid));
  std::filesystem::remove_all(proc.root() / std::to_string(tid));
}

std::string watch_interrupts(bool cpu1_online, int loc1, int nic1, int tlb1) {
  if (!cpu1_online)
    return "           CPU0       \n 45:          0  IR-PCI-MSI 1-edge      eth0-rx-1\n"
           "LOC:       1000   Local timer interrupts\nTLB:          1   TLB shootdowns\n";
  return "           CPU0       CPU1       \n 45:          0 " + std::to_string(nic1) +
         "  IR-PCI-MSI 1-edge      eth0-rx-1\nLOC:       1000 " + std::to_string(loc1) +
         "   Local timer interrupts\nTLB:          1 " + std::to_string(tlb1) + "   TLB shootdowns\n";
}

std::string watch_softirqs(int timer1) {
  return "                    CPU0       CPU1       \n       TIMER:         10 " + std::to_string(timer1) +
         "\n      NET_RX:          0          0\n";
}

std::string watch_schedstat(std::uint64_t run1) {
  return "version 15\ntimestamp 100\ncpu0 0 0 0 0 0 0 500 0 0\ncpu1 0 0 0 0 0 0 " + std::to_string(run1) +
         " 0 0\ndomain0 3 1 2 3\n";
}

// Interrupt and softirq counts that stay at 0, and 100 s of uptime: a tree for the thread tests.
void write_quiet_cpus(const jitterd::testing::ScratchTree& proc) {
  proc.write("interrupts", watch_interrupts(true, 0, 0, 0));
  proc.write("softirqs", watch_softirqs(0));
  proc.write("uptime", "100.00 50.00\n");
}

}  // namespace

TEST_CASE("scheduler counters: a thread's schedstat and /proc/schedstat", "[watch]") {
  CHECK(parse_thread_schedstat("123 45 6\n") == SchedTimes{123, 45, 6});
  CHECK_FALSE(parse_thread_schedstat("123 45\n"));
  CHECK_FALSE(parse_thread_schedstat("a b c"));
  const auto cpus = parse_proc_schedstat(watch_schedstat(9000));
  REQUIRE(cpus.size() == 2);
  CHECK(cpus.at(1).run_ns == 9000);
  CHECK(parse_proc_schedstat("version 14\ncpu0 0 0 0 0 0 0 500 0 0\n").empty());
  CHECK(parse_proc_schedstat("cpuX 0 0 0 0 0 0 500 0 0\ncpu2 1 2\n").empty());
}

TEST_CASE("the application's cgroup path and a thread's watched CPU", "[watch]") {
  CHECK(cgroup_relative_path("/sys/fs/cgroup/system.slice/trader.service") == "system.slice/trader.service");
  CHECK(cgroup_relative_path("/system.slice//trader.service/") == "system.slice/trader.service");
  CHECK(cgroup_relative_path("system.slice/../../etc").empty());
  CHECK(cgroup_relative_path("/").empty());
  ApplicationThread pinned{1, 2, "t", 0, 3, {5}, {}};
  CHECK(watched_cpu_of(pinned, {4, 5}) == 5);
  CHECK(watched_cpu_of(pinned, {3}) == -1);  // pinned elsewhere: where it last ran does not count
  ApplicationThread roaming{1, 2, "t", 0, 3, {0, 1, 2, 3}, {}};
  CHECK(watched_cpu_of(roaming, {3}) == 3);
  CHECK(watched_cpu_of(roaming, {1}) == -1);
}

TEST_CASE("counts engine: interrupts by cause, the application's preemptions and waits", "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  proc.write("interrupts", watch_interrupts(true, 100, 0, 0));
  proc.write("softirqs", watch_softirqs(5));
  proc.write("schedstat", watch_schedstat(1'000'000));
  proc.write("uptime", "100.00 50.00\n");
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 3, 0, 1'000'000, 0});
  write_thread(proc, {40, 42, "logger", 100, 1, 50, 50, 0, 0});  // not the application
  const HostReader host(sys.root(), proc.root());
  CountsEngine engine({{"trader*"}, "", ""}, {1});
  const WatchReading first = engine.read(host, 10.0);
  CHECK(first.window_seconds == 0);
  REQUIRE(first.cpus.size() == 1);
  CHECK(first.cpus[0].preemptions == 0);  // there before jitterd looked: counts from now
  CHECK(first.cpus[0].application_threads == 1);

  proc.write("interrupts", watch_interrupts(true, 350, 4, 2));
  proc.write("softirqs", watch_softirqs(9));
  proc.write("schedstat", watch_schedstat(3'500'000));
  proc.write("uptime", "102.00 50.00\n");
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 13, 0, 2'900'000, 600'000});
  const WatchReading second = engine.read(host, 12.0);
  REQUIRE(second.cpus.size() == 1);
  const WatchedCpu& c = second.cpus[0];
  CHECK(second.window_seconds == 2.0);
  CHECK(c.online);
  CHECK(c.interrupts.at("timer") == 250);
  CHECK(c.window_timer_interrupts == 250);
  CHECK(c.interrupts.at("device_irq") == 4);
  CHECK(c.interrupts.at("tlb") == 2);
  CHECK(c.softirqs.at("timer") == 4);
  CHECK(c.device_irqs.at({"45", "eth0-rx-1"}) == 4);
  CHECK(c.preemptions == 10);
  CHECK(c.wait_ns == 600'000);
  CHECK(c.application_run_ns == 1'900'000);
  CHECK(c.other_tasks_ns == 2'500'000 - 1'900'000);
  REQUIRE(second.threads.size() == 1);
  CHECK(second.threads[0].thread.tid == 41);

  const ProbeResult result = watch_result(second, first.cpus, "counts", "auto", "as configured");
  CHECK(named(result, "jitterd_watch_preemptions_total").size() == 1);
  CHECK(named(result, "jitterd_watch_timer_interrupt_rate_hertz").at(0)->value == 125.0);
  CHECK(named(result, "jitterd_watch_irqs_total").size() == 6);
  // The last window per second: 10 preemptions, 0.6 ms waited, 256 interrupts over 2 s.
  const ProbeTable& window = result.tables.at(0);
  REQUIRE(window.rows.size() == 1);
  CHECK(window.rows[0][3] == Cell(5.0, 3));
  CHECK(window.rows[0][4] == Cell(0.3, 3));
  CHECK(window.rows[0][5] == Cell(128.0, 3));
}

TEST_CASE("counts engine: threads come and go, a reused thread number is a new thread", "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  write_quiet_cpus(proc);
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 3, 0, 0, 0});
  const HostReader host(sys.root(), proc.root());
  CountsEngine engine({{"trader*"}, "", ""}, {1});
  engine.read(host, 1.0);

  // The thread exits; a new one, started after the first reading (tick 10,050 at 100 Hz is
  // 100.5 s), counts everything it did since it started.
  remove_thread(proc, 40, 41);
  write_thread(proc, {40, 43, "trader-poll2", 10'050, 1, 2, 1, 500, 70});
  proc.write("uptime", "101.00 50.00\n");
  WatchReading reading = engine.read(host, 2.0);
  CHECK(reading.cpus[0].preemptions == 2);
  CHECK(reading.cpus[0].wait_ns == 70);

  // Thread number 43 reused by a thread that started later: a new thread, not a counter that
  // went down; the old one's counts stay in the totals.
  write_thread(proc, {40, 43, "trader-poll3", 10'150, 1, 1, 0, 100, 10});
  proc.write("uptime", "102.00 50.00\n");
  reading = engine.read(host, 3.0);
  CHECK(reading.cpus[0].preemptions == 3);
  CHECK(reading.cpus[0].wait_ns == 80);
  REQUIRE(reading.threads.size() == 1);
  CHECK(reading.threads[0].thread.comm == "trader-poll3");
  CHECK(reading.threads[0].preemptions == 1);

  // The process is gone: totals stay, no thread is listed.
  remove_thread(proc, 40, 43);
  reading = engine.read(host, 4.0);
  CHECK(reading.cpus[0].preemptions == 3);
  CHECK(reading.cpus[0].application_threads == 0);
  CHECK(reading.threads.empty());
}

TEST_CASE("counts engine: a new process is found by the next whole walk, at once if the old one is gone",
          "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  write_quiet_cpus(proc);
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 0, 0, 0, 0});
  const HostReader host(sys.root(), proc.root());
  CountsEngine engine({{"trader*"}, "", ""}, {1});
  engine.read(host, 1.0);                                            // a whole walk: process 40
  write_thread(proc, {50, 51, "trader-poll", 100, 1, 0, 0, 0, 0});   // a second process
  write_thread(proc, {40, 42, "trader-poll2", 100, 1, 0, 0, 0, 0});  // a new thread of the known one
  WatchReading reading = engine.read(host, 2.0);
  CHECK(reading.threads.size() == 2);  // 41 and 42: process 50 waits for the next whole walk
  for (int n = 3; n <= kReadingsPerFullSearch; ++n) reading = engine.read(host, n);
  CHECK(reading.threads.size() == 2);
  reading = engine.read(host, kReadingsPerFullSearch + 1.0);
  CHECK(reading.threads.size() == 3);
  // Every known thread gone (a restart): the next reading walks everything again.
  remove_thread(proc, 40, 41);
  remove_thread(proc, 40, 42);
  remove_thread(proc, 50, 51);
  reading = engine.read(host, 20.0);
  CHECK(reading.threads.empty());
  write_thread(proc, {60, 61, "trader-poll", 3000, 1, 0, 0, 0, 0});
  reading = engine.read(host, 21.0);
  REQUIRE(reading.threads.size() == 1);
  CHECK(reading.threads[0].thread.pid == 60);
}

TEST_CASE("counts engine: a watched CPU offline, then back", "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  proc.write("interrupts", watch_interrupts(true, 100, 0, 0));
  proc.write("softirqs", watch_softirqs(0));
  proc.write("uptime", "100.00 50.00\n");
  const HostReader host(sys.root(), proc.root());
  CountsEngine engine({{"trader*"}, "", ""}, {1});
  engine.read(host, 1.0);
  proc.write("interrupts", watch_interrupts(false, 0, 0, 0));
  WatchReading reading = engine.read(host, 2.0);
  CHECK_FALSE(reading.cpus[0].online);
  CHECK(reading.cpus[0].interrupts.empty());
  CHECK_FALSE(reading.other_tasks_measured);  // no /proc/schedstat in this tree
  const ProbeResult offline = watch_result(reading, {}, "counts", "auto", "");
  CHECK(named(offline, "jitterd_watch_timer_interrupt_rate_hertz").empty());  // no current figure
  CHECK(named(offline, "jitterd_watch_cpu_online").at(0)->value == 0);
  CHECK(named(offline, "jitterd_watch_other_tasks_seconds_total").empty());
  // Back online with counts that started again: nothing counted for the window without a baseline.
  proc.write("interrupts", watch_interrupts(true, 20, 0, 0));
  reading = engine.read(host, 3.0);
  CHECK(reading.cpus[0].online);
  CHECK(reading.cpus[0].interrupts.count("timer") == 0);
  proc.write("interrupts", watch_interrupts(true, 50, 0, 0));
  reading = engine.read(host, 4.0);
  CHECK(reading.cpus[0].interrupts.at("timer") == 30);
}

TEST_CASE("counts engine: the application by cgroup, a cgroup that disappears", "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  write_quiet_cpus(proc);
  sys.write("fs/cgroup/system.slice/trader.service/cgroup.threads", "41\n42\n");
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 3, 0, 0, 0});
  write_thread(proc, {40, 42, "trader-log", 100, 1, 3, 0, 0, 0});
  const HostReader host(sys.root(), proc.root());
  const ApplicationSearch both =
      find_application_threads(host, {{}, "/sys/fs/cgroup/system.slice/trader.service", ""});
  CHECK(both.threads.size() == 2);
  CHECK(both.threads[0].pid == 40);
  const ApplicationSearch named_too =
      find_application_threads(host, {{"*-poll"}, "system.slice/trader.service", ""});
  REQUIRE(named_too.threads.size() == 1);
  CHECK(named_too.threads[0].tid == 41);
  std::filesystem::remove_all(sys.root() / "fs/cgroup/system.slice/trader.service");
  const ApplicationSearch gone = find_application_threads(host, {{}, "system.slice/trader.service", ""});
  CHECK(gone.threads.empty());
  REQUIRE(gone.problems.size() == 1);
  CHECK(gone.problems[0].find("system.slice/trader.service") != std::string::npos);
}

TEST_CASE("the application by its user: impostors of the same name are not it", "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  write_quiet_cpus(proc);
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 3, 0, 0, 0}, 1000);
  write_thread(proc, {50, 51, "trader-poll", 100, 1, 3, 0, 0, 0}, 65534);  // another user's, same name
  write_thread(proc, {50, 52, "trader-x", 100, 1, 3, 0, 0, 0}, 65534);
  const HostReader host(sys.root(), proc.root());
  ApplicationSettings settings{{"trader*"}, "", "1000"};
  const ApplicationSearch walked = find_application_threads(host, settings);
  REQUIRE(walked.threads.size() == 1);
  CHECK(walked.threads[0].tid == 41);
  CHECK(walked.threads[0].uid == 1000u);
  const ApplicationSearch among = find_application_threads_in(host, settings, {40, 50});
  REQUIRE(among.threads.size() == 1);
  CHECK(among.threads[0].tid == 41);
  // By user alone: every thread of that user.
  CHECK(find_application_threads(host, {{}, "", "65534"}).threads.size() == 2);
  // By name alone, the impostors are found too (docs/robustness.md says so).
  CHECK(find_application_threads(host, {{"trader*"}, "", ""}).threads.size() == 3);
  // An unknown user matches nothing, and says so: never the names alone.
  const ApplicationSearch unknown = find_application_threads(host, {{"trader*"}, "", "no-such-user-jd"});
  CHECK(unknown.threads.empty());
  REQUIRE(unknown.problems.size() == 1);
  CHECK(unknown.problems[0].find("no-such-user-jd") != std::string::npos);
  CHECK(parse_real_uid("Name:\tx\nUid:\t1000\t0\t0\t0\n") == 1000u);
  CHECK_FALSE(parse_real_uid("Name:\tx\n").has_value());
  CHECK(user_id_of("root") == 0u);
  CHECK(user_id_of("4242") == 4242u);
}

TEST_CASE("configuration: application and watch sections, cpus: []", "[watch][config]") {
  const Config config = parse_config(
      "cpus: []\napplication:\n  tasks: [\"trader*\"]\n  cgroup: system.slice/trader.service\n"
      "watch:\n  cpus: \"2-7\"\n  method: counts\n",
      "test.yaml");
  CHECK_FALSE(config.cpus.automatic);
  CHECK(config.cpus.list.empty());
  const WatchSettings& watch = config.probes.watch;
  CHECK(watch.enabled);
  CHECK(watch.cpus == std::vector<int>{2, 3, 4, 5, 6, 7});
  CHECK(watch.method == WatchMethod::counts);
  CHECK(watch.application.cgroup == "system.slice/trader.service");
  // Named once: the posture probe knows the application's tasks too.
  CHECK(config.probes.posture.expect.application_tasks == std::vector<std::string>{"trader*"});
  CHECK_FALSE(parse_config("cpus: 1\n", "t.yaml").probes.watch.enabled);

  const auto error_of = [](const std::string& yaml) {
    try {
      parse_config(yaml, "t.yaml");
    } catch (const ConfigErrors& e) {
      return e.errors().at(0).to_string();
    }
    return std::string("no error");
  };
  CHECK(error_of("watch:\n  method: ebpf\n").find("watch.method: must be one of auto, bpf, tracepoints, counts") !=
        std::string::npos);
  CHECK(error_of("watch:\n  cpus: []\n").find("watch.cpus") != std::string::npos);
  CHECK(error_of("application:\n  cgroup: ../etc\n").find("application.cgroup") != std::string::npos);
  CHECK(error_of("application:\n  tasks: []\n").find("application.tasks") != std::string::npos);
  CHECK(
      parse_config("application:\n  user: trader\n  cgroup: a.slice\n", "t.yaml").probes.watch.application.user ==
      "trader");
  CHECK(parse_config("application: {user: 1000}\n", "t.yaml").probes.watch.application.user == "1000");
  CHECK(error_of("application:\n  user: \"-x\"\n").find("application.user: must be a user name") !=
        std::string::npos);
  CHECK(error_of("application:\n  user: [a]\n").find("application.user") != std::string::npos);
  CHECK(error_of("application:\n  user: \"a b\"\n").find("application.user") != std::string::npos);
}

TEST_CASE("CPU selection with watched CPUs", "[watch][cpu_selection]") {
  Topology topo;
  topo.possible = topo.online = {0, 1, 2, 3};
  topo.isolated = {2, 3};
  CpuRequest request;
  request.automatic = false;
  request.watch = CpuRequest::Watch::listed;
  request.watch_list = {3};
  CpuSelectionResult r = select_cpus(request, topo, {0, 1, 2, 3});
  REQUIRE(r.selection);
  CHECK(r.selection->sampled.empty());
  CHECK(r.selection->watched == std::vector<int>{3});
  CHECK(r.selection->housekeeping == std::vector<int>{0, 1, 2});

  request.automatic = true;  // auto samples the isolated CPUs that are not watched
  r = select_cpus(request, topo, {0, 1, 2, 3});
  REQUIRE(r.selection);
  CHECK(r.selection->sampled == std::vector<int>{2});
  CHECK(r.selection->housekeeping == std::vector<int>{0, 1});

  request.automatic = false;
  request.list = {2};
  request.watch = CpuRequest::Watch::automatic;  // the isolated CPUs left unsampled
  r = select_cpus(request, topo, {0, 1, 2, 3});
  REQUIRE(r.selection);
  CHECK(r.selection->watched == std::vector<int>{3});
  CHECK(r.selection->housekeeping == std::vector<int>{0, 1});

  request.watch = CpuRequest::Watch::listed;
  request.watch_list = {2};  // both sampled and watched
  r = select_cpus(request, topo, {0, 1, 2, 3});
  REQUIRE_FALSE(r.selection);
  CHECK(r.watch_errors.at(0).find("cpu 2 is also in cpus") == 0);

  request.list = {};
  request.watch_list = {9};
  r = select_cpus(request, topo, {0, 1, 2, 3});
  REQUIRE_FALSE(r.selection);
  CHECK(r.watch_errors.at(0).find("does not exist") != std::string::npos);

  request.watch_list = {0, 1};  // nothing left for the daemon
  r = select_cpus(request, topo, {0, 1});
  REQUIRE_FALSE(r.selection);
  CHECK(
      r.errors.at(0) ==
      "no CPU left for housekeeping: the watched CPUs 0-1 cover every allowed CPU (0-1); leave at least one out");
}

TEST_CASE("counts engine: the application's threads on no watched CPU are named, a bounded list", "[watch]") {
  jitterd::testing::ScratchTree sys, proc;
  write_quiet_cpus(proc);
  write_thread(proc, {40, 41, "trader-poll", 100, 1, 0, 0, 0, 0});
  write_thread(proc, {40, 42, "trader-log\x1b", 100, 0, 0, 0, 0, 0});  // pinned to cpu 0, not watched
  for (int tid = 50; tid < 60; ++tid)
    write_thread(proc, {40, tid, "trader-w" + std::to_string(tid), 100, 0, 0, 0, 0, 0});
  const HostReader host(sys.root(), proc.root());
  CountsEngine engine({{"trader*"}, "", ""}, {1});
  const WatchReading reading = engine.read(host, 10.0);
  CHECK(reading.application_threads_elsewhere == 11);
  REQUIRE(reading.threads_elsewhere.size() == kListedThreadsElsewhere);
  CHECK(reading.threads_elsewhere.front().tid == 42);
  const ProbeResult result = watch_result(reading, {}, "counts", "auto", "as configured");
  const auto note = std::find_if(result.notes.begin(), result.notes.end(), [](const std::string& n) {
    return n.find("run on no watched CPU") != std::string::npos;
  });
  REQUIRE(note != result.notes.end());
  CHECK(note->find("11 of the application's threads run on no watched CPU") == 0);
  CHECK(note->find("tid 42 `trader-log\\x1b` of pid 40 (last on cpu 0, allowed 0)") != std::string::npos);
  CHECK(note->find("and 3 more") != std::string::npos);
  CHECK(note->find('\x1b') == std::string::npos);
}
