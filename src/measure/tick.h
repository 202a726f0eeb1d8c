// SPDX-License-Identifier: Apache-2.0
// The tick counter: one ordered read per architecture, chosen once at start-up and compiled into
// the sampler loop as a template argument so the hot loop carries no branch on the method.
// Every function here is safe from any thread; read_ticks<M>() is what the hot loop calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace jitterd {

enum class TickMethod { lfence_rdtsc, rdtsc, rdtscp, cntvct, steady_clock };

std::string_view to_string(TickMethod method);
std::optional<TickMethod> tick_method_from_string(std::string_view text);

// The methods this build can execute on this architecture; the first is the default.
std::vector<TickMethod> supported_tick_methods();
TickMethod default_tick_method();
bool tick_method_supported(TickMethod method);

template <TickMethod M>
inline std::uint64_t read_ticks() {
#if defined(__x86_64__)
  if constexpr (M == TickMethod::lfence_rdtsc) {
    // lfence waits for every earlier instruction to finish, so the read cannot float above the
    // work it is timing (Intel SDM vol. 2, RDTSC).
    _mm_lfence();
    return __rdtsc();
  } else if constexpr (M == TickMethod::rdtsc) {
    // Unordered: cheapest, but the CPU may execute it early or late by a few tens of cycles.
    return __rdtsc();
  } else if constexpr (M == TickMethod::rdtscp) {
    // rdtscp waits for earlier instructions, but later ones may start before it.
    unsigned int aux;
    return __rdtscp(&aux);
  }
#elif defined(__aarch64__)
  if constexpr (M == TickMethod::cntvct) {
    // isb before: the read may not be speculated early; isb after: later work may not start
    // before it (the same pairing the kernel's arch_timer uses for ordered reads).
    std::uint64_t value;
    asm volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(value) : : "memory");
    return value;
  }
#endif
  if constexpr (M == TickMethod::steady_clock) {
    // Fallback for architectures without a known counter: nanoseconds from the vDSO clock.
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  // An unsupported method is never instantiated: dispatch_tick_method only reaches supported ones.
  return 0;
}

// read_ticks<M>() in its two halves, for a loop that does its own work between them:
// tick_fence<M>(); WORK; read_ticks_after_fence<M>() reads the counter after every instruction
// before the fence, while WORK (which must not depend on the read) runs beside the read instead of
// after it. All of WORK still lies between two reads: the next fence waits for it. On Intel the
// instructions after rdtsc start only once it has completed (docs/benchmarks.md, "Why the loop
// cost 1.3x on Intel"), so work placed there, even work that does not use the value, lengthens
// every gap; placed between the fence and the read it costs nothing measurable. Methods without
// a separate fence have an empty tick_fence and read_ticks_after_fence == read_ticks.
// The memory clobbers keep the compiler from moving WORK's loads and stores out from between.
template <TickMethod M>
inline void tick_fence() {
#if defined(__x86_64__)
  if constexpr (M == TickMethod::lfence_rdtsc) asm volatile("lfence" : : : "memory");
#endif
}

template <TickMethod M>
inline std::uint64_t read_ticks_after_fence() {
#if defined(__x86_64__)
  if constexpr (M == TickMethod::lfence_rdtsc) {
    std::uint32_t low, high;
    asm volatile("rdtsc" : "=a"(low), "=d"(high) : : "memory");
    return (static_cast<std::uint64_t>(high) << 32) | low;
  }
#endif
  return read_ticks<M>();
}

// Calls f.template operator()<M>() with the method known at compile time.
template <typename F>
decltype(auto) dispatch_tick_method(TickMethod method, F&& f) {
  switch (method) {
#if defined(__x86_64__)
    case TickMethod::lfence_rdtsc:
      return f.template operator()<TickMethod::lfence_rdtsc>();
    case TickMethod::rdtsc:
      return f.template operator()<TickMethod::rdtsc>();
    case TickMethod::rdtscp:
      return f.template operator()<TickMethod::rdtscp>();
#elif defined(__aarch64__)
    case TickMethod::cntvct:
      return f.template operator()<TickMethod::cntvct>();
#endif
    default:
      return f.template operator()<TickMethod::steady_clock>();
  }
}

inline std::uint64_t read_ticks(TickMethod method) {
  return dispatch_tick_method(method, []<TickMethod M>() { return read_ticks<M>(); });
}

}  // namespace jitterd
