// SPDX-License-Identifier: Apache-2.0
// The measurement kernel of the core-to-core (c2c) latency probe: two pinned threads hand a cache
// line back and forth, and one-way latency is the round-trip time / 2 (core-to-core-latency,
// c2clat). Two methods: `cas`, compare-and-swap ping-pong on one shared line, and `two_lines`,
// where each side stores only to its own line and spins reading the other's. Every pair and every
// run gets fresh PingPongLines, first-touched by the side named as owner, whose NUMA node is
// reported.
//
// The caller runs ping_pong_initiator on CPU a's thread and ping_pong_responder on CPU b's thread
// at the same time, each already pinned (a sampler thread borrowed with sampling paused is fine).
// Neither blocks forever when a timeout is set: a side that waits too long sets `abort` and
// returns, and the other side then returns too. The timed loops make no syscall, allocation or
// lock. one_way_latency and numa_node_of are safe from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <vector>

#include "measure/tick.h"

namespace jitterd {

enum class PingPongMethod { cas, two_lines };

std::string_view to_string(PingPongMethod method);  // "cas", "two_lines"

// One 64-byte cache line to itself, padded to 128 so the adjacent-line prefetcher (which pulls
// lines in 128-byte pairs on Intel) does not couple it to its neighbour.
struct alignas(128) PingPongLine {
  std::atomic<std::uint64_t> value{0};
};

// The shared state of one pair for one run; single use (a second run needs fresh lines, so the
// counters and the barrier start from zero). Allocation goes to a fresh anonymous page of its own,
// never recycled heap memory, so the first thread to write it decides its NUMA node.
struct PingPongLines {
  PingPongLine first;   // the CAS method uses only this one
  PingPongLine second;  // two_lines: written only by the responder
  // Own line too (after the two padded ones): the barrier and abort never disturb the handoff.
  std::atomic<int> ready{0};       // start barrier: both sides check in
  std::atomic<bool> abort{false};  // either side gives up: the other returns too

  // Class-specific allocation: one mmap'd page each (zero-filled, not yet faulted in).
  // Throws std::bad_alloc when the kernel refuses the mapping.
  static void* operator new(std::size_t size);
  static void* operator new(std::size_t size, std::align_val_t alignment);
  static void operator delete(void* pointer) noexcept;
  static void operator delete(void* pointer, std::align_val_t alignment) noexcept;
};

// Allocates fresh PingPongLines on the calling thread and writes every byte (first touch), so its
// memory lands on the caller's NUMA node under the default policy. Call it on the side you name as
// the owner, before either side starts. Not for the hot path (mmap).
std::unique_ptr<PingPongLines> make_ping_pong_lines();

// The NUMA node of the page holding `address` (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR, no
// libnuma); nullopt if the kernel can't tell (no NUMA support, ENOSYS under emulators).
std::optional<int> numa_node_of(const void* address);

struct PingPongSettings {
  PingPongMethod method = PingPongMethod::cas;
  std::size_t samples = 100;       // timed samples; one more warm-up sample is run before them
  std::size_t round_trips = 1000;  // per sample
  // 0: wait forever (unless the other side aborts). Otherwise a side gives up and sets abort when
  // one wait (the barrier or one handoff) exceeds it; the timeout is looked at only every
  // kPingPongSpinsPerCheck spins, so giving up takes between timeout and timeout + two check
  // periods.
  std::uint64_t timeout_ticks = 0;
};

// Spins between looks at the counter and the abort flag: rare enough not to distort a handoff
// (a handoff takes tens to hundreds of spins), frequent enough to give up promptly.
inline constexpr std::uint32_t kPingPongSpinsPerCheck = 4096;

// Initiator: checks in at the barrier, then for samples + 1 times: counter read, round_trips round
// trips, counter read. Returns the ticks of each sample, the first (warm-up) included: the caller
// or one_way_latency drops it. nullopt on timeout (abort is then set) or when the other side
// aborted. Both sides must be given the same settings.
std::optional<std::vector<std::uint64_t>> ping_pong_initiator(TickMethod method, PingPongLines& lines,
                                                              const PingPongSettings& settings);

// Responder: checks in at the barrier, then answers (samples + 1) * round_trips pings. false on
// timeout (abort is then set) or when the other side aborted. `method` times only the timeout.
bool ping_pong_responder(TickMethod method, PingPongLines& lines, const PingPongSettings& settings);

struct OneWayLatency {
  std::size_t samples = 0;  // timed samples used (warm-up excluded)
  double min_ticks = 0;
  double p10_ticks = 0;
  double median_ticks = 0;
  double p90_ticks = 0;
  double sum_ticks = 0;  // of the samples' one-way values, for a mean
};

// Per sample: ticks / (2 * round_trips), dropping sample 0 (warm-up); exact nearest-rank order
// statistics (as op_cost.h's nearest_rank). All zero with fewer than two entries or no round trips.
OneWayLatency one_way_latency(const std::vector<std::uint64_t>& sample_ticks, std::size_t round_trips);

}  // namespace jitterd
