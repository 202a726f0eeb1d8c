// SPDX-License-Identifier: Apache-2.0
// A busy-polling loop on a single-producer ring, instrumented with the jitterd loop probe from
// C++: the consumer polls the ring, handles what it finds and records one gap per iteration,
// passing the counter read it already takes (jitterd_loop_record_at), as most poll loops do.
//
//   ring_loop NAME CPU SECONDS [LABELS]
//
// The consumer pins itself to CPU; the producer (unpinned) pushes a message every 100 us.
// Built and run by the tests (tests/integration/loop_test.py).
#include <jitterd/loop_probe.h>
#include <sched.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

struct Ring {
  std::array<std::uint64_t, 1024> slots{};
  std::atomic<std::uint64_t> head{0}, tail{0};
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s NAME CPU SECONDS [LABELS]\n", argv[0]);
    return 2;
  }
  const int cpu = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  std::atomic<bool> stop{false};
  Ring ring;
  std::thread producer([&] {
    for (std::uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
      const std::uint64_t head = ring.head.load(std::memory_order_relaxed);
      if (head - ring.tail.load(std::memory_order_acquire) < ring.slots.size()) {
        ring.slots[head % ring.slots.size()] = n;
        ring.head.store(head + 1, std::memory_order_release);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::fprintf(stderr, "ring_loop: cannot pin to CPU %d\n", cpu);
  jitterd_loop_probe* probe = jitterd_loop_open(argv[1], cpu, argc == 5 ? argv[4] : nullptr, nullptr);
  if (probe == nullptr)  // the loop runs without it: the record calls accept nullptr
    std::printf("ring_loop: %s on CPU %d, without the loop probe: %s\n", argv[1], cpu,
                jitterd_loop_strerror(errno));
  else
    std::printf("ring_loop: %s on CPU %d, segment %s\n", argv[1], cpu, probe->path);
  std::fflush(stdout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t handled = 0, sum = 0, iterations = 0;
  for (;;) {
    const std::uint64_t now = jitterd_loop_read_counter();  // the loop's own read, handed over
    const std::uint64_t tail = ring.tail.load(std::memory_order_relaxed);
    if (ring.head.load(std::memory_order_acquire) != tail) {
      sum += ring.slots[tail % ring.slots.size()];
      ring.tail.store(tail + 1, std::memory_order_release);
      ++handled;
    }
    jitterd_loop_record_at(probe, now);
    // the clock is looked at every 4096 iterations (the loop's own counter has no known rate
    // when the probe did not open)
    if (seconds > 0 && (++iterations & 4095) == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  jitterd_loop_flush(probe);
  std::printf("ring_loop: %s samples=%llu interruptions=%llu handled=%llu\n", argv[1],
              static_cast<unsigned long long>(probe != nullptr ? probe->n : 0),
              static_cast<unsigned long long>(probe != nullptr ? probe->interruptions : 0),
              static_cast<unsigned long long>(handled));
  jitterd_loop_close(probe);
  stop = true;
  producer.join();
  return sum == 0 && handled > 1 ? 1 : 0;
}
