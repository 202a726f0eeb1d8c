// SPDX-License-Identifier: Apache-2.0
/* jitterd loop probe: the segment's layout and the counter read, the part of the library that
 * jitterd's reader shares with the writer (src/loops/loop_segment.cpp parses a segment with these
 * constants, so the two can never disagree on an offset).
 *
 * The segment is one shared-memory file per probe, laid out as docs/loops.md describes: a
 * versioned header of JITTERD_LOOP_HEADER_BYTES (its fields at the offsets of enum
 * jitterd_loop_offset, little-endian), the histogram's bucket counts, the window max slots and the
 * interruption ring. The counter read is the ordered read jitterd's sampler uses by default.
 *
 * Part of the header-only C11 (and C++17 or later) library: applications include
 * <jitterd/loop_probe.h>, which includes this. Constants, types and a pure read: any thread. */
#ifndef JITTERD_LOOP_PROBE_LAYOUT_H
#define JITTERD_LOOP_PROBE_LAYOUT_H

/* POSIX 2008 (mkstemp, ftruncate, posix_fallocate, clock_gettime, kill, PATH_MAX: the library's
 * opening needs them) under a strict -std=c11: effective when <jitterd/loop_probe.h>, whose first
 * part this is, comes before any system header, or define _POSIX_C_SOURCE=200809L yourself. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
#include <atomic>
#define JITTERD_LOOP_ATOMIC_U64 std::atomic<uint64_t>
#define JITTERD_LOOP_LOAD(object) (object).load(std::memory_order_relaxed)
#define JITTERD_LOOP_STORE(object, value) (object).store((value), std::memory_order_relaxed)
#define JITTERD_LOOP_RELEASE(object, value) (object).store((value), std::memory_order_release)
#define JITTERD_LOOP_STATIC_ASSERT static_assert
#else
#include <stdatomic.h>
#define JITTERD_LOOP_ATOMIC_U64 _Atomic uint64_t
#define JITTERD_LOOP_LOAD(object) atomic_load_explicit(&(object), memory_order_relaxed)
#define JITTERD_LOOP_STORE(object, value) atomic_store_explicit(&(object), (value), memory_order_relaxed)
#define JITTERD_LOOP_RELEASE(object, value) atomic_store_explicit(&(object), (value), memory_order_release)
#define JITTERD_LOOP_STATIC_ASSERT _Static_assert
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the segment's layout (docs/loops.md); jitterd's reader uses these constants ---- */

#define JITTERD_LOOP_MAGIC UINT64_C(0x31504f4f4c544a4a) /* "JJTLOOP1" read as little-endian bytes */
#define JITTERD_LOOP_LAYOUT_VERSION 1u
#define JITTERD_LOOP_HEADER_BYTES 512u
#define JITTERD_LOOP_SUB_BITS 4u
#define JITTERD_LOOP_SUB_BUCKETS (1u << JITTERD_LOOP_SUB_BITS)
#define JITTERD_LOOP_BUCKETS ((65u - JITTERD_LOOP_SUB_BITS) * JITTERD_LOOP_SUB_BUCKETS) /* 976 */
#define JITTERD_LOOP_NAME_BYTES 64u
#define JITTERD_LOOP_LABELS_BYTES 192u
#define JITTERD_LOOP_CHECK_EVERY 1024u  /* gaps between publications, as the sampler */
#define JITTERD_LOOP_SLOT_NS 250000000u /* window max slot: 250 ms, as the daemon's */
#define JITTERD_LOOP_DEFAULT_SLOTS 256u /* 64 s of slots: the daemon's 60 s window */
#define JITTERD_LOOP_DEFAULT_RING 4096u /* the sampler's default interruption ring */
#define JITTERD_LOOP_MAX_SLOTS 65536u
#define JITTERD_LOOP_MAX_RING 1048576u
#define JITTERD_LOOP_MAX_LABELS 8u
#define JITTERD_LOOP_WARMUP_GAPS 4096u /* the floor is the smallest gap of these */
#define JITTERD_LOOP_DEFAULT_FLOOR_MULTIPLE 20u
#define JITTERD_LOOP_DEFAULT_DIR "/dev/shm"
#define JITTERD_LOOP_FILE_PREFIX "jitterd-loop."

/* How the counter is read: the names jitterd's tick methods have (docs/method.md). */
enum jitterd_loop_counter {
  JITTERD_LOOP_COUNTER_LFENCE_RDTSC = 1, /* x86-64 default */
  JITTERD_LOOP_COUNTER_RDTSC = 2,
  JITTERD_LOOP_COUNTER_RDTSCP = 3,
  JITTERD_LOOP_COUNTER_CNTVCT = 4,    /* aarch64 default */
  JITTERD_LOOP_COUNTER_STEADY_NS = 5, /* CLOCK_MONOTONIC nanoseconds: other architectures */
  JITTERD_LOOP_COUNTER_CALLER = 6     /* the caller's own reads, at the hertz it gave */
};

/* Byte offsets of the header's fields (all little-endian on the architectures jitterd runs on). */
enum jitterd_loop_offset {
  JITTERD_LOOP_OFF_MAGIC = 0,           /* u64, stored last (release) when the segment is ready */
  JITTERD_LOOP_OFF_VERSION = 8,         /* u32 */
  JITTERD_LOOP_OFF_HEADER_BYTES = 12,   /* u32 */
  JITTERD_LOOP_OFF_TOTAL_BYTES = 16,    /* u64: the whole file */
  JITTERD_LOOP_OFF_PID = 24,            /* i32: the writer's pid */
  JITTERD_LOOP_OFF_CPU = 28,            /* i32: the CPU the loop runs on */
  JITTERD_LOOP_OFF_START_TIME = 32,     /* u64: the writer's start time, /proc/PID/stat field 22 */
  JITTERD_LOOP_OFF_COUNTER = 40,        /* u32: enum jitterd_loop_counter */
  JITTERD_LOOP_OFF_SUB_BITS = 44,       /* u32: 4 */
  JITTERD_LOOP_OFF_HERTZ = 48,          /* u64: counter ticks per second */
  JITTERD_LOOP_OFF_BUCKETS = 56,        /* u32: 976 */
  JITTERD_LOOP_OFF_RING_CAPACITY = 60,  /* u32 */
  JITTERD_LOOP_OFF_SLOT_COUNT = 64,     /* u32 */
  JITTERD_LOOP_OFF_SLOT_TICKS = 72,     /* u64: window max slot length in ticks */
  JITTERD_LOOP_OFF_THRESHOLD = 80,      /* u64, live: interruption threshold, 0 while warming up */
  JITTERD_LOOP_OFF_FLOOR = 88,          /* u64, live: smallest gap of the warm-up, 0 before */
  JITTERD_LOOP_OFF_HISTOGRAM = 96,      /* u64: offset of the bucket counts */
  JITTERD_LOOP_OFF_SLOTS = 104,         /* u64: offset of the window max slots */
  JITTERD_LOOP_OFF_RING = 112,          /* u64: offset of the ring */
  JITTERD_LOOP_OFF_NAME = 128,          /* char[64], NUL-terminated */
  JITTERD_LOOP_OFF_LABELS = 192,        /* char[192], "key=value,key=value", NUL-terminated */
  JITTERD_LOOP_OFF_SAMPLES = 384,       /* u64, live: gaps recorded (published every 1024) */
  JITTERD_LOOP_OFF_SAMPLED_TICKS = 392, /* u64, live: sum of the recorded gaps */
  JITTERD_LOOP_OFF_INTERRUPTIONS = 400, /* u64, live: gaps at or above the threshold */
  JITTERD_LOOP_OFF_STOLEN_TICKS = 408,  /* u64, live: sum of those gaps */
  JITTERD_LOOP_OFF_MIN_GAP = 416,       /* u64, live: smallest gap, UINT64_MAX before any */
  JITTERD_LOOP_OFF_MAX_GAP = 424,       /* u64, live: largest gap */
  JITTERD_LOOP_OFF_HEARTBEAT = 432,     /* u64, live: counter at the last publication */
  JITTERD_LOOP_OFF_FIRST_TICK = 440,    /* u64: counter at the first record */
  JITTERD_LOOP_OFF_RING_HEAD = 448,     /* u64, live: ring pushes so far */
  JITTERD_LOOP_OFF_RING_WRITING = 456   /* u64, live: the push in progress, announced first */
};

/* The segment's header as the writer maps it. The layout is the offsets above, whatever the
 * language: C's _Atomic uint64_t and C++'s std::atomic<uint64_t> are both plain lock-free 8-byte
 * words on x86-64 and aarch64. */
struct jitterd_loop_header {
  JITTERD_LOOP_ATOMIC_U64 magic;
  uint32_t version, header_bytes;
  uint64_t total_bytes;
  int32_t pid, cpu;
  uint64_t start_time;
  uint32_t counter, sub_bits;
  uint64_t hertz;
  uint32_t buckets, ring_capacity, slot_count, reserved0;
  uint64_t slot_ticks;
  JITTERD_LOOP_ATOMIC_U64 threshold, floor;
  uint64_t histogram_offset, slots_offset, ring_offset, reserved1;
  char name[JITTERD_LOOP_NAME_BYTES];
  char labels[JITTERD_LOOP_LABELS_BYTES];
  JITTERD_LOOP_ATOMIC_U64 samples, sampled_ticks, interruptions, stolen_ticks, min_gap, max_gap, heartbeat,
      first_tick, ring_head, ring_writing;
  uint64_t reserved2[6];
};
JITTERD_LOOP_STATIC_ASSERT(sizeof(struct jitterd_loop_header) == JITTERD_LOOP_HEADER_BYTES, "header size");
JITTERD_LOOP_STATIC_ASSERT((size_t)offsetof(struct jitterd_loop_header, hertz) == (size_t)JITTERD_LOOP_OFF_HERTZ,
                           "hertz");
JITTERD_LOOP_STATIC_ASSERT((size_t)offsetof(struct jitterd_loop_header, slot_ticks) ==
                               (size_t)JITTERD_LOOP_OFF_SLOT_TICKS,
                           "slot");
JITTERD_LOOP_STATIC_ASSERT((size_t)offsetof(struct jitterd_loop_header, histogram_offset) ==
                               (size_t)JITTERD_LOOP_OFF_HISTOGRAM,
                           "histogram");
JITTERD_LOOP_STATIC_ASSERT((size_t)offsetof(struct jitterd_loop_header, name) == (size_t)JITTERD_LOOP_OFF_NAME,
                           "name");
JITTERD_LOOP_STATIC_ASSERT((size_t)offsetof(struct jitterd_loop_header, samples) ==
                               (size_t)JITTERD_LOOP_OFF_SAMPLES,
                           "samples");
JITTERD_LOOP_STATIC_ASSERT((size_t)offsetof(struct jitterd_loop_header, ring_writing) ==
                               (size_t)JITTERD_LOOP_OFF_RING_WRITING,
                           "ring_writing");

/* A window max slot (seqlock-style: id 0 while rewritten; id = slot index + 1) and a ring entry. */
struct jitterd_loop_slot {
  JITTERD_LOOP_ATOMIC_U64 id, max;
};
struct jitterd_loop_entry {
  JITTERD_LOOP_ATOMIC_U64 start, duration;
};

/* Bytes of a segment with these sizes: header, histogram, slots, ring. */
static inline uint64_t jitterd_loop_segment_bytes(uint32_t slot_count, uint32_t ring_capacity) {
  return (uint64_t)JITTERD_LOOP_HEADER_BYTES + 8u * (uint64_t)JITTERD_LOOP_BUCKETS + 16u * (uint64_t)slot_count +
         16u * (uint64_t)ring_capacity;
}

/* ---- the counter read ---- */

#if defined(__x86_64__)
#define JITTERD_LOOP_NATIVE_COUNTER JITTERD_LOOP_COUNTER_LFENCE_RDTSC
#elif defined(__aarch64__)
#define JITTERD_LOOP_NATIVE_COUNTER JITTERD_LOOP_COUNTER_CNTVCT
#else
#define JITTERD_LOOP_NATIVE_COUNTER JITTERD_LOOP_COUNTER_STEADY_NS
#endif

/* The ordered read jitterd's sampler uses by default (src/measure/tick.h). */
static inline uint64_t jitterd_loop_read_counter(void) {
#if defined(__x86_64__)
  /* lfence waits for every earlier instruction, so the read cannot float above the work it times. */
  uint32_t low, high;
  __asm__ __volatile__("lfence\n\trdtsc" : "=a"(low), "=d"(high) : : "memory");
  return ((uint64_t)high << 32) | low;
#elif defined(__aarch64__)
  /* isb before: not speculated early; isb after: later work does not start before it. */
  uint64_t value;
  __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(value) : : "memory");
  return value;
#else
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* JITTERD_LOOP_PROBE_LAYOUT_H */
