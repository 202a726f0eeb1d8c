// SPDX-License-Identifier: Apache-2.0
// switch_bench: what a context switch costs on one CPU. Two threads pinned to --cpu bounce one
// byte over two pipes for --seconds: each read blocks, so every hop is one switch from the
// thread that wrote to the one that reads. Prints "switches ns_per_switch" on stdout. The watch
// cost bench (watch_cost_bench.py) runs it on a CPU jitterd does not watch, with and without the
// BPF program attached to sched_switch there.
//
// Exit: 0 done, 64 usage error, 77 pinning refused, 1 a pipe failed.
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

struct Pipes {
  int ping[2];
  int pong[2];
};

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

int cpu_arg = 0;

// The echo side: reads a byte, writes it back, until the pipe closes.
void* echo(void* arg) {
  const Pipes* p = static_cast<const Pipes*>(arg);
  if (!pin(cpu_arg)) std::exit(77);
  char byte = 0;
  while (read(p->ping[0], &byte, 1) == 1)
    if (write(p->pong[1], &byte, 1) != 1) break;
  return nullptr;
}

long parse(std::string_view text) {
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    std::fprintf(stderr, "switch_bench: not a number: %.*s\n", static_cast<int>(text.size()), text.data());
    std::exit(64);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--cpu")
      cpu_arg = static_cast<int>(parse(argv[i + 1]));
    else if (flag == "--seconds")
      seconds = static_cast<double>(parse(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: switch_bench [--cpu N] [--seconds S]\n");
      return 64;
    }
  }
  Pipes p{};
  if (pipe(p.ping) != 0 || pipe(p.pong) != 0) return 1;
  if (!pin(cpu_arg)) {
    std::fprintf(stderr, "switch_bench: cannot pin to cpu %d\n", cpu_arg);
    return 77;
  }
  pthread_t thread;
  if (pthread_create(&thread, nullptr, echo, &p) != 0) return 1;
  char byte = 1;
  std::uint64_t trips = 0;
  const std::int64_t start = monotonic_ns();
  const std::int64_t end = start + static_cast<std::int64_t>(seconds * 1e9);
  std::int64_t now = start;
  while (now < end) {
    for (int i = 0; i < 256; ++i) {  // the clock read once in 256 round trips
      if (write(p.ping[1], &byte, 1) != 1 || read(p.pong[0], &byte, 1) != 1) return 1;
    }
    trips += 256;
    now = monotonic_ns();
  }
  close(p.ping[1]);
  pthread_join(thread, nullptr);
  const std::uint64_t switches = 2 * trips;
  std::printf("%llu %.1f\n", static_cast<unsigned long long>(switches),
              static_cast<double>(now - start) / static_cast<double>(switches));
  return 0;
}
