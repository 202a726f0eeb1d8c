// SPDX-License-Identifier: Apache-2.0
// watch_bpf_bench: what the watch's BPF program costs per event, beside an empty program measured
// the same way, so the kernel's own cost of running any program (the tracepoint's dispatch, and
// bpf_stats' clock reads when it is on) is told apart from the program's. Run as root; the
// program is this build's (the skeleton jitterd loads), loaded here without a daemon.
//
//   watch_bpf_bench switches [--cpu 0] [--seconds 20] [--phase-ms 50]
//     Two threads on --cpu (SCHED_FIFO 1) bounce a byte over pipes (one context switch and about
//     one wakeup per hop); this thread, on another CPU, attaches programs to sched_switch and
//     sched_wakeup and detaches them in alternating phases. Rows: an empty program, and the
//     watch's handlers (every CPU without a role: the role lookup, the run counted, return): the
//     median ns per switch without and with, the median of adjacent phases' differences and its
//     ratio to the median without. Then one more run each with
//     bpf_stats on (a BPF_ENABLE_STATS descriptor, dropped at the end), and one of a program
//     that reads the clock once: their ns per run, where the empty program's figure is bpf_stats'
//     own part in every figure it gives and the next one's excess a clock read's cost.
//   watch_bpf_bench watched [--cpu 1] [--seconds 4] [--period-us 200] [--spin-us 10]
//     --cpu watched: an application thread spins there (SCHED_FIFO 1, so nothing else runs there)
//     and a SCHED_FIFO 50 thread wakes every --period-us and spins --spin-us, each time preempting
//     it. Every handler of the program attached, and an empty program on sched_switch and
//     sched_wakeup before the watch's, all with bpf_stats on; prints per handler its runs on --cpu
//     and elsewhere (no role there), the program's own ns per run on --cpu (its counters: one run
//     in 16 timed) and bpf_stats' (every CPU's runs together), and the empty program's bpf_stats
//     ns per run (every CPU's: the same mixture as the watch's sched_switch and sched_wakeup).
//   --object FILE.bpf.o in either mode: another revision's compiled program instead of this build's
//     (the watch_bpf.bpf.o its build generated), to compare the two on the same machine.
//
// Exit: 0 done, 64 usage error, 77 not root or the program does not load, 1 other.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "watch/bpf_watch.h"
#include "watch_bpf.h"
#include "watch_bpf.skel.h"

namespace {

// Thrown where this machine cannot run the bench (exit 77, saying why).
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    throw Unavailable("cannot pin a thread to cpu " + std::to_string(cpu));
}

void fifo(int priority) {
  const sched_param p{.sched_priority = priority};
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0)
    throw Unavailable("SCHED_FIFO " + std::to_string(priority) + " refused");
}

std::int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// A descriptor closed on destruction: an attachment (closing it detaches), bpf_stats' switch.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// The kernel's bpf_stats on while this lives (a BPF_ENABLE_STATS descriptor: dropped, it is off
// again unless something else holds it).
struct Stats {
  Fd fd{bpf_enable_stats(BPF_STATS_RUN_TIME)};
  Stats() {
    if (fd.fd < 0) throw Unavailable(std::string("cannot turn bpf_stats on: ") + std::strerror(errno));
  }
};

struct ProgramStats {
  std::string name;
  unsigned long long runs = 0;
  double ns_per_run = 0;
};

ProgramStats stats_of(int prog_fd, std::string name) {
  bpf_prog_info info{};
  std::uint32_t length = sizeof(info);
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &length) != 0) return {std::move(name)};
  return {std::move(name), info.run_cnt, info.run_cnt ? static_cast<double>(info.run_time_ns) / info.run_cnt : 0};
}

using Attachments = std::vector<std::shared_ptr<void>>;
using Attach = std::function<Attachments()>;

// Empty programs (r0 = 0; exit) of the watch's kind (tp_btf) on sched_switch and sched_wakeup;
// with `clock_read`, each calls bpf_ktime_get_ns first (what one clock read of a handler costs).
class EmptyPrograms {
 public:
  explicit EmptyPrograms(bool clock_read = false) {
    for (const char* event : {"sched_switch", "sched_wakeup"}) {
      const bpf_insn code[] = {{BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns},  // only with clock_read
                               {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},             // r0 = 0
                               {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
      LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
      opts.attach_btf_id = static_cast<std::uint32_t>(libbpf_find_vmlinux_btf_id(event, BPF_TRACE_RAW_TP));
      const int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "empty", "GPL", clock_read ? code : code + 1,
                                   clock_read ? 3 : 2, &opts);
      if (fd < 0)
        throw Unavailable(std::string("an empty tp_btf program on ") + event +
                          " does not load: " + std::strerror(errno));
      programs_.emplace_back(event, Fd(fd));
    }
  }
  Attachments attach() const {
    Attachments out;
    for (const auto& program : programs_) {
      const int link = bpf_raw_tracepoint_open(nullptr, program.second.fd);
      if (link < 0) throw Unavailable(std::string("cannot attach the empty program: ") + std::strerror(errno));
      out.push_back(std::make_shared<Fd>(link));
    }
    return out;
  }
  std::vector<ProgramStats> stats() const {
    std::vector<ProgramStats> out;
    for (const auto& [event, fd] : programs_) out.push_back(stats_of(fd.fd, event));
    return out;
  }

 private:
  std::vector<std::pair<std::string, Fd>> programs_;
};

// This build's watch program (the skeleton the daemon loads), loaded without a daemon: every CPU
// without a role until set_watched.
class WatchProgram {
 public:
  // `only`: the handlers to load and attach; empty: every one. `object`: a compiled program of
  // another revision to compare with (its maps and handlers must have this one's names and
  // layout); empty: this build's.
  WatchProgram(const std::vector<std::string>& only, const std::string& object)
      : object_(open(object), bpf_object__close) {
    if (!object_) throw Unavailable(std::string("cannot open the watch's BPF program: ") + std::strerror(errno));
    bpf_program* p = nullptr;
    bpf_object__for_each_program(p, object_.get()) {
      const bool wanted = only.empty() || std::find(only.begin(), only.end(), bpf_program__name(p)) != only.end();
      bpf_program__set_autoload(p, wanted);
    }
    if (const int error = bpf_object__load(object_.get()); error != 0)
      throw Unavailable(std::string("the watch's BPF program does not load: ") + std::strerror(-error));
  }
  // Every loaded handler attached; one whose tracepoint this kernel lacks is left out.
  Attachments attach() const {
    Attachments out;
    bpf_program* p = nullptr;
    bpf_object__for_each_program(p, object_.get()) {
      if (!bpf_program__autoload(p)) continue;
      if (bpf_link* link = bpf_program__attach(p))
        out.push_back(std::shared_ptr<void>(link, [](void* l) { bpf_link__destroy(static_cast<bpf_link*>(l)); }));
    }
    return out;
  }
  // `cpu` watched, no outlier written (a threshold of 1 s), `tid` the application's thread.
  void set_watched(int cpu, int tid) const {
    std::vector<jd_cpu_role> roles(static_cast<std::size_t>(libbpf_num_possible_cpus()));
    for (auto& r : roles) r.outlier_threshold_ns = 1'000'000'000;
    roles.at(static_cast<std::size_t>(cpu)).role = JD_ROLE_WATCHED;
    const std::uint32_t zero = 0, key = static_cast<std::uint32_t>(tid);
    const std::uint8_t one = 1;
    if (bpf_map_update_elem(map("roles"), &zero, roles.data(), BPF_ANY) != 0 ||
        bpf_map_update_elem(map("application"), &key, &one, BPF_ANY) != 0)
      throw std::runtime_error(std::string("cannot write the program's roles or threads: ") +
                               std::strerror(errno));
  }
  std::vector<ProgramStats> stats() const {
    std::vector<ProgramStats> out;
    bpf_program* p = nullptr;
    bpf_object__for_each_program(p, object_.get()) {
      if (bpf_program__autoload(p)) out.push_back(stats_of(bpf_program__fd(p), bpf_program__name(p)));
    }
    return out;
  }
  struct Cost {
    std::string name;
    unsigned long long runs = 0;
    double own_ns_per_run = 0;
    double stats_ns_per_run = 0;
    unsigned long long all_runs = 0;  // bpf_stats' count: every CPU's runs
  };
  // Each handler that ran on `cpu`: its runs there and the program's own time per run there,
  // beside bpf_stats' figure (every CPU's runs).
  std::vector<Cost> costs(int cpu) const {
    std::vector<jd_program_cost> per_cpu(static_cast<std::size_t>(libbpf_num_possible_cpus()));
    std::vector<Cost> out;
    const auto all = stats();
    for (std::uint32_t program = 0; program < JD_PROGRAMS; ++program) {
      if (bpf_map_lookup_elem(map("costs"), &program, per_cpu.data()) != 0) continue;
      const jd_program_cost& c = per_cpu.at(static_cast<std::size_t>(cpu));
      if (c.runs == 0) continue;
      Cost row{std::string(jitterd::bpf_program_name(program)), c.runs, static_cast<double>(c.ns) / c.runs, 0};
      for (const auto& s : all)
        if (s.name == row.name) {
          row.stats_ns_per_run = s.ns_per_run;
          row.all_runs = s.runs;
        }
      out.push_back(row);
    }
    return out;
  }

 private:
  static bpf_object* open(const std::string& object) {
    if (!object.empty()) return bpf_object__open_file(object.c_str(), nullptr);
    std::size_t size = 0;
    const void* elf = watch_bpf__elf_bytes(&size);
    return bpf_object__open_mem(elf, size, nullptr);
  }
  int map(const char* name) const { return bpf_object__find_map_fd_by_name(object_.get(), name); }
  std::unique_ptr<bpf_object, void (*)(bpf_object*)> object_;
};

// Two threads on `cpu` bounce a byte over pipes (each hop one switch), counting hops.
class Bouncer {
 public:
  explicit Bouncer(int cpu) : cpu_(cpu) {
    if (pipe(ping_) != 0 || pipe(pong_) != 0)
      throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
    echo_ = std::thread([this] { run(ping_[0], pong_[1], false); });
    drive_ = std::thread([this] { run(pong_[0], ping_[1], true); });
  }
  ~Bouncer() {
    for (int fd : {ping_[1], pong_[1]}) close(fd);
    echo_.join();
    drive_.join();
    for (int fd : {ping_[0], pong_[0]}) close(fd);
  }
  std::uint64_t hops() const { return hops_.load(std::memory_order_relaxed); }

 private:
  void run(int in, int out, bool first) {
    try {
      pin(cpu_);
      fifo(1);  // the machine's other tasks do not run between two hops
    } catch (...) {
      return;
    }
    char byte = 0;
    if (first && write(out, &byte, 1) != 1) return;
    while (read(in, &byte, 1) == 1) {
      hops_.fetch_add(1, std::memory_order_relaxed);
      if (write(out, &byte, 1) != 1) break;
    }
  }
  int cpu_;
  int ping_[2]{}, pong_[2]{};
  std::atomic<std::uint64_t> hops_{0};
  std::thread echo_, drive_;
};

struct Alternation {
  double off_ns = 0, on_ns = 0;  // median ns per switch over the phases without and with
  double median_difference_ns = 0, q1_ns = 0, q3_ns = 0;
  std::size_t pairs = 0;
};

// Phases of `phase_ms` without and with `attach`'s programs, in turn, for `seconds`: the switch
// cost in each and the differences of adjacent pairs (the machine's own drift cancels in a pair).
Alternation alternate(const Attach& attach, int cpu, double seconds, double phase_ms) {
  Bouncer bouncer(cpu);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto pairs = static_cast<std::size_t>(std::max(1.0, seconds * 1000 / phase_ms / 2));
  std::vector<double> off, on, difference;
  for (std::size_t i = 0; i < 2 * pairs; ++i) {
    Attachments attached = i % 2 ? attach() : Attachments{};
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the attach's own disturbance
    const std::uint64_t h0 = bouncer.hops();
    const std::int64_t t0 = monotonic_ns();
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(phase_ms * 1000)));
    const double ns = static_cast<double>(monotonic_ns() - t0) /
                      static_cast<double>(std::max<std::uint64_t>(1, bouncer.hops() - h0));
    (i % 2 ? on : off).push_back(ns);
    if (i % 2) difference.push_back(on.back() - off.back());
  }
  // Medians: a phase in which the machine stalled the bouncers (seconds, on a loaded guest) would
  // swamp a mean.
  for (auto* v : {&off, &on, &difference}) std::sort(v->begin(), v->end());
  const std::size_t n = difference.size();
  return {off[n / 2], on[n / 2], difference[n / 2], difference[n / 4], difference[3 * n / 4], n};
}

// The application spinning on `cpu` (SCHED_FIFO 1) and a SCHED_FIFO 50 thread that preempts it
// every `period_us` for `spin_us`, for `seconds`; the application's thread is watched from the start.
void preempt(const WatchProgram& watch, int cpu, double seconds, double period_us, double spin_us) {
  std::atomic<bool> stop{false};
  std::atomic<int> app_tid{0};
  std::thread app([&] {
    pin(cpu);
    fifo(1);
    app_tid = static_cast<int>(syscall(SYS_gettid));
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (app_tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  watch.set_watched(cpu, app_tid);
  std::thread injector([&] {
    pin(cpu);
    fifo(50);
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!stop.load(std::memory_order_relaxed)) {
      next.tv_nsec += static_cast<long>(period_us * 1000);
      while (next.tv_nsec >= 1'000'000'000) {
        next.tv_nsec -= 1'000'000'000;
        ++next.tv_sec;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
      const std::int64_t end = monotonic_ns() + static_cast<std::int64_t>(spin_us * 1000);
      while (monotonic_ns() < end) {
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(seconds * 1e6)));
  stop = true;
  injector.join();
  app.join();
}

struct Args {
  std::string mode;
  int cpu = -1;
  double seconds = 0;
  double phase_ms = 50;
  double period_us = 200;
  double spin_us = 10;
  std::string object;  // --object: another revision's compiled program
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) throw std::invalid_argument("a mode: switches or watched");
  a.mode = argv[1];
  if (a.mode != "switches" && a.mode != "watched")
    throw std::invalid_argument("mode: switches or watched, got " + a.mode);
  a.cpu = a.mode == "switches" ? 0 : 1;
  a.seconds = a.mode == "switches" ? 20 : 4;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--object") {
      a.object = argv[i + 1];
      continue;
    }
    const double v = std::strtod(argv[i + 1], nullptr);
    if (!(v > 0) && flag != "--cpu")
      throw std::invalid_argument(std::string(flag) + ": must be > 0, got " + argv[i + 1]);
    if (flag == "--cpu")
      a.cpu = static_cast<int>(v);
    else if (flag == "--seconds")
      a.seconds = v;
    else if (flag == "--phase-ms")
      a.phase_ms = v;
    else if (flag == "--period-us")
      a.period_us = v;
    else if (flag == "--spin-us")
      a.spin_us = v;
    else
      throw std::invalid_argument("unknown flag " + std::string(flag));
  }
  if (argc % 2 != 0) throw std::invalid_argument(std::string(argv[argc - 1]) + ": a value is missing");
  return a;
}

void switches_row(const char* what, const Attach& attach, const Args& a) {
  const Alternation r = alternate(attach, a.cpu, a.seconds, a.phase_ms);
  std::printf("%-28s %10.1f %10.1f %+10.1f %+9.2f%%  (IQR %+.1f..%+.1f, %zu pairs)\n", what, r.off_ns, r.on_ns,
              r.median_difference_ns, 100 * r.median_difference_ns / r.off_ns, r.q1_ns, r.q3_ns, r.pairs);
}

int switches(const Args& a) {
  pin(a.cpu == 0 ? 1 : 0);  // the attaching thread off the CPU the bouncers hold
  EmptyPrograms empty;
  WatchProgram watch({"sched_switch", "sched_wakeup"}, a.object);
  std::printf("switches on cpu %d, %g s of alternating %g ms phases each row: ns per switch\n", a.cpu, a.seconds,
              a.phase_ms);
  std::printf("%-28s %10s %10s %10s %10s\n", "attached", "without", "with", "median", "ratio-1");
  switches_row(
      "empty program", [&] { return empty.attach(); }, a);
  switches_row(
      "watch, no role", [&] { return watch.attach(); }, a);
  std::printf("bpf_stats on (its own part: the empty program's figure), ns per run:\n");
  {
    Stats on;
    const EmptyPrograms clocked(true);
    alternate([&] { return empty.attach(); }, a.cpu, a.seconds / 4, a.phase_ms);
    alternate([&] { return clocked.attach(); }, a.cpu, a.seconds / 4, a.phase_ms);
    alternate([&] { return watch.attach(); }, a.cpu, a.seconds / 4, a.phase_ms);
    for (const auto& p : empty.stats())
      std::printf("  empty %-22s %12llu runs %8.1f\n", p.name.c_str(), p.runs, p.ns_per_run);
    for (const auto& p : clocked.stats())
      std::printf("  one clock read %-13s %12llu runs %8.1f\n", p.name.c_str(), p.runs, p.ns_per_run);
    for (const auto& p : watch.stats())
      std::printf("  watch %-22s %12llu runs %8.1f\n", p.name.c_str(), p.runs, p.ns_per_run);
  }
  return 0;
}

int watched(const Args& a) {
  EmptyPrograms empty;
  WatchProgram watch({}, a.object);
  Stats on;
  const auto empty_links = empty.attach();
  const auto links = watch.attach();
  preempt(watch, a.cpu, a.seconds, a.period_us, a.spin_us);
  (void)empty_links;
  (void)links;
  std::printf("cpu %d watched, preempted every %g us for %g us, %g s; ns per run:\n", a.cpu, a.period_us,
              a.spin_us, a.seconds);
  std::printf("  %-28s %10s %10s %14s %10s\n", "handler", "runs there", "elsewhere", "own (1 in 16)", "bpf_stats");
  for (const auto& c : watch.costs(a.cpu))
    std::printf("  %-28s %10llu %10llu %14.1f %10.1f\n", c.name.c_str(), c.runs,
                c.all_runs - std::min(c.all_runs, c.runs), c.own_ns_per_run, c.stats_ns_per_run);
  for (const auto& p : empty.stats())
    if (p.runs)
      std::printf("  empty program on %-11s %21llu %14s %10.1f\n", p.name.c_str(), p.runs, "", p.ns_per_run);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(
        stderr,
        "watch_bpf_bench: %s\nusage: watch_bpf_bench switches|watched [--cpu N] [--seconds S] [--phase-ms M] "
        "[--period-us U] [--spin-us U] [--object FILE.bpf.o]\n",
        e.what());
    return 64;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "watch_bpf_bench: needs root (BPF programs and bpf_stats)\n");
    return 77;
  }
  libbpf_set_print(nullptr);
  try {
    return a.mode == "switches" ? switches(a) : watched(a);
  } catch (const Unavailable& e) {
    std::fprintf(stderr, "watch_bpf_bench: %s\n", e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "watch_bpf_bench: %s\n", e.what());
    return 1;
  }
}
