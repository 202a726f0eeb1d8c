// SPDX-License-Identifier: Apache-2.0
#include "measure/ping_pong.h"

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "measure/op_cost.h"

namespace jitterd {

static_assert(sizeof(PingPongLine) == 128);
static_assert(sizeof(PingPongLines) <= 4096, "PingPongLines must fit one page: one NUMA node");

std::string_view to_string(PingPongMethod method) {
  switch (method) {
    case PingPongMethod::cas:
      return "cas";
    case PingPongMethod::two_lines:
      return "two_lines";
  }
  return "unknown";
}

void* PingPongLines::operator new(std::size_t size) {
  // A fresh anonymous mapping is not backed by any page until first written, so the first touch
  // below (on the allocating thread) places it; recycled heap memory may already sit elsewhere.
  void* pointer = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pointer == MAP_FAILED) throw std::bad_alloc();
  // Every byte, padding included: the whole page is faulted in here, on the caller's node.
  std::memset(pointer, 0, size);
  return pointer;
}

void* PingPongLines::operator new(std::size_t size, std::align_val_t) {
  return operator new(size);  // page-aligned, more than any alignment asked of it
}

void PingPongLines::operator delete(void* pointer) noexcept {
  if (pointer != nullptr) munmap(pointer, sizeof(PingPongLines));
}

void PingPongLines::operator delete(void* pointer, std::align_val_t) noexcept { operator delete(pointer); }

std::unique_ptr<PingPongLines> make_ping_pong_lines() { return std::make_unique<PingPongLines>(); }

std::optional<int> numa_node_of(const void* address) {
  int node = -1;
  // MPOL_F_NODE | MPOL_F_ADDR: report the node of the page at `address`, not a policy.
  const long rc = syscall(SYS_get_mempolicy, &node, nullptr, 0UL, address,
                          static_cast<unsigned long>(MPOL_F_NODE | MPOL_F_ADDR));
  if (rc != 0 || node < 0) return std::nullopt;
  return node;
}

namespace {

// The slow path of a wait, run once every kPingPongSpinsPerCheck spins. The counter is read only
// here, so a handoff that completes in fewer spins costs no counter read at all.
struct WaitClock {
  std::uint64_t since = 0;  // counter at the wait's first check
  bool started = false;
};

template <TickMethod M>
[[gnu::noinline, gnu::cold]] bool still_worth_waiting(PingPongLines& lines, std::uint64_t timeout_ticks,
                                                      WaitClock& clock) {
  // Relaxed: abort publishes no data, it only says "stop"; the loads and stores of the handoff
  // need nothing from it.
  if (lines.abort.load(std::memory_order_relaxed)) return false;
  if (timeout_ticks == 0) return true;
  const std::uint64_t now = read_ticks<M>();
  if (!clock.started) {
    clock = {now, true};
    return true;
  }
  if (now - clock.since <= timeout_ticks) return true;
  lines.abort.store(true, std::memory_order_relaxed);
  return false;
}

// Spins until arrived() is true; false when this side gives up (timeout or the other's abort).
// A plain spin, no pause instruction: a pause would add its own latency to the handoff measured.
template <TickMethod M, typename Arrived>
inline bool wait_until(Arrived&& arrived, PingPongLines& lines, std::uint64_t timeout_ticks) {
  std::uint32_t spins = 0;
  WaitClock clock;
  while (!arrived()) {
    if (++spins == kPingPongSpinsPerCheck) [[unlikely]] {
      spins = 0;
      if (!still_worth_waiting<M>(lines, timeout_ticks, clock)) return false;
    }
  }
  return true;
}

// Both sides check in, then wait for each other, so the handoff starts with both spinning.
template <TickMethod M>
bool meet_at_barrier(PingPongLines& lines, std::uint64_t timeout_ticks) {
  if (lines.abort.load(std::memory_order_relaxed)) return false;
  // acq_rel/acquire: what either side wrote before checking in is visible to the other after the
  // barrier. Outside the timed loops, so the read-modify-write costs no measurement.
  lines.ready.fetch_add(1, std::memory_order_acq_rel);
  return wait_until<M>([&] { return lines.ready.load(std::memory_order_acquire) >= 2; }, lines, timeout_ticks);
}

// The method is a template argument as well, so the timed loop carries no branch on it.
template <TickMethod M, PingPongMethod P>
std::optional<std::vector<std::uint64_t>> run_initiator(PingPongLines& lines, const PingPongSettings& s) {
  std::vector<std::uint64_t> ticks(s.samples + 1);  // allocated before the barrier
  if (!meet_at_barrier<M>(lines, s.timeout_ticks)) return std::nullopt;
  std::atomic<std::uint64_t>& mine = lines.first.value;
  std::atomic<std::uint64_t>& theirs = P == PingPongMethod::cas ? lines.first.value : lines.second.value;
  std::uint64_t turn = 0;  // cas: the even value that says it is our turn; two_lines: the last seq
  for (std::size_t sample = 0; sample <= s.samples; ++sample) {
    const std::uint64_t start = read_ticks<M>();
    for (std::size_t trip = 0; trip < s.round_trips; ++trip) {
      bool arrived;
      if constexpr (P == PingPongMethod::cas) {
        // acq_rel on success: take the responder's turn and hand over ours in one step; acquire on
        // failure, as a failed CAS is a read of the responder's line state.
        arrived = wait_until<M>(
            [&] {
              std::uint64_t expected = turn;
              return mine.compare_exchange_strong(expected, turn + 1, std::memory_order_acq_rel,
                                                  std::memory_order_acquire);
            },
            lines, s.timeout_ticks);
        turn += 2;
      } else {
        ++turn;
        // Release/acquire: the pair is a message exchange, ordered like one (free on x86-64,
        // stlr/ldar on aarch64: what a real producer/consumer pays).
        mine.store(turn, std::memory_order_release);
        arrived =
            wait_until<M>([&] { return theirs.load(std::memory_order_acquire) == turn; }, lines, s.timeout_ticks);
      }
      if (!arrived) [[unlikely]]
        return std::nullopt;
    }
    const std::uint64_t end = read_ticks<M>();
    ticks[sample] = end - start;
  }
  return ticks;
}

template <TickMethod M, PingPongMethod P>
bool run_responder(PingPongLines& lines, const PingPongSettings& s) {
  if (!meet_at_barrier<M>(lines, s.timeout_ticks)) return false;
  std::atomic<std::uint64_t>& theirs = lines.first.value;
  std::atomic<std::uint64_t>& mine = P == PingPongMethod::cas ? lines.first.value : lines.second.value;
  const std::uint64_t answers = static_cast<std::uint64_t>(s.samples + 1) * s.round_trips;
  for (std::uint64_t i = 0; i < answers; ++i) {
    bool arrived;
    if constexpr (P == PingPongMethod::cas) {
      // The odd value 2i + 1 is the initiator's ping; 2i + 2 hands the line back.
      arrived = wait_until<M>(
          [&] {
            std::uint64_t expected = 2 * i + 1;
            return mine.compare_exchange_strong(expected, 2 * i + 2, std::memory_order_acq_rel,
                                                std::memory_order_acquire);
          },
          lines, s.timeout_ticks);
    } else {
      const std::uint64_t seq = i + 1;
      arrived =
          wait_until<M>([&] { return theirs.load(std::memory_order_acquire) == seq; }, lines, s.timeout_ticks);
      if (arrived) mine.store(seq, std::memory_order_release);
    }
    if (!arrived) [[unlikely]]
      return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::uint64_t>> ping_pong_initiator(TickMethod method, PingPongLines& lines,
                                                              const PingPongSettings& settings) {
  return dispatch_tick_method(method, [&]<TickMethod M>() {
    return settings.method == PingPongMethod::cas ? run_initiator<M, PingPongMethod::cas>(lines, settings)
                                                  : run_initiator<M, PingPongMethod::two_lines>(lines, settings);
  });
}

bool ping_pong_responder(TickMethod method, PingPongLines& lines, const PingPongSettings& settings) {
  return dispatch_tick_method(method, [&]<TickMethod M>() {
    return settings.method == PingPongMethod::cas ? run_responder<M, PingPongMethod::cas>(lines, settings)
                                                  : run_responder<M, PingPongMethod::two_lines>(lines, settings);
  });
}

OneWayLatency one_way_latency(const std::vector<std::uint64_t>& sample_ticks, std::size_t round_trips) {
  OneWayLatency result;
  if (sample_ticks.size() < 2 || round_trips == 0) return result;
  const double divisor = 2.0 * static_cast<double>(round_trips);
  std::vector<double> one_way;
  one_way.reserve(sample_ticks.size() - 1);
  // Sample 0 is the warm-up: lines migrating in, the partner still arriving.
  for (std::size_t i = 1; i < sample_ticks.size(); ++i) {
    one_way.push_back(static_cast<double>(sample_ticks[i]) / divisor);
  }
  std::sort(one_way.begin(), one_way.end());
  result.samples = one_way.size();
  result.min_ticks = one_way.front();
  result.p10_ticks = nearest_rank(one_way, 0.10);
  result.median_ticks = nearest_rank(one_way, 0.50);
  result.p90_ticks = nearest_rank(one_way, 0.90);
  result.sum_ticks = std::accumulate(one_way.begin(), one_way.end(), 0.0);
  return result;
}

}  // namespace jitterd
