// SPDX-License-Identifier: Apache-2.0
/* jitterd loop probe: the record path, what the application's loop calls once per iteration.
 *
 * It is what jitterd's own sampler loop does (docs/method.md): one ordered counter read (x86-64
 * lfence;rdtsc, aarch64 isb;mrs cntvct_el0;isb), the gap since the previous call into the same
 * log-linear histogram (exact below 16 ticks, then 16 linear sub-buckets per power of two: 976
 * buckets), a gap at or above the threshold into the interruption ring with its start tick, and
 * every 1024 gaps the window max of the current 250 ms slot and the published counters. It makes
 * no system call, allocation, lock, log call or atomic read-modify-write: the segment has one
 * writer, which stores with relaxed or release ordering; jitterd only reads it.
 *
 * Part of the header-only C11 (and C++17 or later) library: applications include
 * <jitterd/loop_probe.h>, which includes this. Threads: one thread per probe calls record,
 * record_at and flush (the loop's thread). */
#ifndef JITTERD_LOOP_PROBE_RECORD_H
#define JITTERD_LOOP_PROBE_RECORD_H

#include <jitterd/loop_probe_open.h>

#ifdef JITTERD_LOOP_POSIX_2008 /* else loop_probe_open.h stopped with an #error naming the define */

#ifdef __cplusplus
extern "C" {
#endif

/* The per-iteration functions are always inlined into the loop (a call would cost more than
 * they do); the rare ones (once per 1024 gaps, an interruption) are kept out of it. */
#define JITTERD_LOOP_HOT static inline __attribute__((always_inline))
#define JITTERD_LOOP_COLD static __attribute__((noinline, cold, unused))

/* The window max slot of NOW, entered (the slow path, once per 250 ms): WindowMax::enter_slot. */
JITTERD_LOOP_COLD void jitterd_loop_enter_slot_(jitterd_loop_probe *p, uint64_t now, uint64_t max_gap) {
  const uint64_t index = now / p->slot_ticks, id = index + 1;
  struct jitterd_loop_slot *slot = &p->slots[id % p->slot_count];
  if (JITTERD_LOOP_LOAD(slot->id) != id) {
    JITTERD_LOOP_STORE(slot->id, 0);
    JITTERD_LOOP_RELEASE(slot->max, max_gap);
    JITTERD_LOOP_RELEASE(slot->id, id);
  } else if (max_gap > JITTERD_LOOP_LOAD(slot->max)) {
    JITTERD_LOOP_STORE(slot->max, max_gap);
  }
  p->slot = slot;
  p->slot_max = JITTERD_LOOP_LOAD(slot->max);
  p->slot_start = index * p->slot_ticks;
  p->slot_end = index == UINT64_MAX / p->slot_ticks ? UINT64_MAX : p->slot_start + p->slot_ticks;
}

/* Every 1024 gaps: the slot's max and the counters, as the sampler's publish_progress; the end
 * of the warm-up sets the floor and the threshold. */
JITTERD_LOOP_COLD void jitterd_loop_publish_(jitterd_loop_probe *p, uint64_t now) {
  struct jitterd_loop_header *h = p->segment;
  if (now >= p->slot_end || now < p->slot_start) {
    jitterd_loop_enter_slot_(p, now, p->local_max);
  } else if (p->local_max > p->slot_max) {
    p->slot_max = p->local_max;
    JITTERD_LOOP_STORE(p->slot->max, p->local_max);
  }
  if (p->local_max > p->max_gap) JITTERD_LOOP_STORE(h->max_gap, p->max_gap = p->local_max);
  p->local_max = 0;
  JITTERD_LOOP_STORE(h->samples, p->n);
  JITTERD_LOOP_STORE(h->sampled_ticks, now - p->first);
  JITTERD_LOOP_STORE(h->min_gap, p->local_min);
  JITTERD_LOOP_RELEASE(h->heartbeat, now);
  if (p->n == JITTERD_LOOP_WARMUP_GAPS) {
    const uint64_t automatic =
        p->local_min > UINT64_MAX / p->floor_multiple ? UINT64_MAX : p->local_min * p->floor_multiple;
    p->threshold = p->fixed_threshold != 0 ? p->fixed_threshold : automatic;
    JITTERD_LOOP_STORE(h->floor, p->local_min);
    JITTERD_LOOP_STORE(h->threshold, p->threshold);
  }
}

/* A gap at or above the threshold: into the ring (InterruptionRing::push) and the counters. */
JITTERD_LOOP_COLD void jitterd_loop_interruption_(jitterd_loop_probe *p, uint64_t now, uint64_t gap) {
  struct jitterd_loop_header *h = p->segment;
  struct jitterd_loop_entry *entry = &p->ring[p->ring_head % p->ring_capacity];
  JITTERD_LOOP_STORE(h->ring_writing, p->ring_head + 1);
  JITTERD_LOOP_RELEASE(entry->start, now - gap);
  JITTERD_LOOP_RELEASE(entry->duration, gap);
  JITTERD_LOOP_RELEASE(h->ring_head, ++p->ring_head);
  JITTERD_LOOP_STORE(h->interruptions, ++p->interruptions);
  JITTERD_LOOP_STORE(h->stolen_ticks, p->stolen_ticks += gap);
}

/* GAP's bucket: histogram_bucket_index of src/measure/histogram.h, exact below 16 ticks; above,
 * with TOP the highest set bit, bucket (TOP - 3) * 16 + the 4 bits below TOP, written from TOP
 * itself (one bsr, no 63 - clz) since every instruction after the caller's read costs it time. */
JITTERD_LOOP_HOT JITTERD_LOOP_ATOMIC_U64 *jitterd_loop_bucket_(jitterd_loop_probe *p, uint64_t gap) {
  unsigned top;
  if (gap < JITTERD_LOOP_SUB_BUCKETS) return &p->counts[gap];
  top = 63u ^ (unsigned)__builtin_clzll(gap);
  return &p->counts[((size_t)top << JITTERD_LOOP_SUB_BITS) + (size_t)(gap >> (top - JITTERD_LOOP_SUB_BITS)) -
                    (size_t)(JITTERD_LOOP_SUB_BITS * JITTERD_LOOP_SUB_BUCKETS)];
}

/* GAP, which ended at counter value END, into BUCKET (its bucket), the ring when at or above the
 * threshold, the min and max, and every 1024 gaps the publication. */
JITTERD_LOOP_HOT void jitterd_loop_count_in_(jitterd_loop_probe *p, uint64_t end, uint64_t gap,
                                             JITTERD_LOOP_ATOMIC_U64 *bucket) {
  if (__builtin_expect(gap >= p->threshold, 0)) jitterd_loop_interruption_(p, end, gap);
  /* one writer: a relaxed load and store (plain moves), as GapHistogram::record */
  JITTERD_LOOP_STORE(*bucket, JITTERD_LOOP_LOAD(*bucket) + 1);
  if (gap < p->local_min) p->local_min = gap;
  if (gap > p->local_max) p->local_max = gap;
  if (__builtin_expect((++p->n & (JITTERD_LOOP_CHECK_EVERY - 1)) == 0, 0)) jitterd_loop_publish_(p, end);
}

/* GAP, which ended at counter value END, into its bucket and the rest (jitterd_loop_count_in_). */
JITTERD_LOOP_HOT void jitterd_loop_count_(jitterd_loop_probe *p, uint64_t end, uint64_t gap) {
  jitterd_loop_count_in_(p, end, gap, jitterd_loop_bucket_(p, gap));
}

/* The first call: the loop's first read starts the probe's time; no gap yet. */
static inline void jitterd_loop_start_(jitterd_loop_probe *p, uint64_t now) {
  p->started = 1;
  p->prev = p->first = now;
  JITTERD_LOOP_STORE(p->segment->first_tick, now);
  JITTERD_LOOP_RELEASE(p->segment->heartbeat, now);
}

/* The gap left to count (it ended at p->prev), if any. */
JITTERD_LOOP_HOT void jitterd_loop_count_pending_(jitterd_loop_probe *p) {
  if (p->pending) {
    p->pending = 0;
    p->pending_bucket = NULL;
    jitterd_loop_count_(p, p->prev, p->pending_gap);
  }
}

/* record_at's rare case, a call without the previous gap's bucket at hand: the first call (it
 * starts the probe's time, no gap yet: returns 0), or the first after jitterd_loop_record or
 * jitterd_loop_flush (any gap they left is counted here: returns 1, the caller takes the gap). */
JITTERD_LOOP_COLD int jitterd_loop_record_at_rare_(jitterd_loop_probe *p, uint64_t now) {
  if (!p->started) {
    jitterd_loop_start_(p, now);
    return 0;
  }
  jitterd_loop_count_pending_(p);
  p->pending = 1;
  return 1;
}

/* One loop iteration at counter value NOW (the caller's read, in the probe's counter): the gap
 * since the previous call, counted at the next call (or flush), as jitterd_loop_record does. On
 * x86 the instructions after the caller's rdtsc complete only after it, and the next read's fence
 * waits for them: each one adds its share of the core's width to every iteration (about 0.04 ns
 * on the Intel guest), and a chain of a load, a bucket index from it and a load at that index
 * adds its latency too (docs/benchmarks.md, "The loop probe in an application's loop"). So the
 * gap's bucket address is computed at the call that takes the gap, from NOW (beside the
 * application's own use of its read), and the next call finds the count ready: an increment at a
 * known address, a compare with the threshold, a min, a max and the publication counter. A NULL
 * probe (one that failed to open) does nothing: one branch, always predicted.
 *
 * Invariant: pending_bucket, when not NULL, is the bucket of pending_gap, and pending is 1. */
JITTERD_LOOP_HOT void jitterd_loop_record_at(jitterd_loop_probe *p, uint64_t now) {
  JITTERD_LOOP_ATOMIC_U64 *bucket;
  uint64_t prev, gap;
  if (__builtin_expect(p == NULL, 0)) return;
  prev = p->prev;
  bucket = p->pending_bucket;
  if (__builtin_expect(bucket != NULL, 1)) {
    jitterd_loop_count_in_(p, prev, p->pending_gap, bucket);
  } else if (!jitterd_loop_record_at_rare_(p, now)) {
    return;
  }
  gap = now - prev;
  p->pending_gap = gap;
  p->pending_bucket = jitterd_loop_bucket_(p, gap);
  p->prev = now;
}

/* One loop iteration, reading the counter with jitterd's ordered read. Only for probes opened
 * with the native counter. A NULL probe does nothing (it does not read the counter either).
 *
 * The gap is counted at the next call (or flush), between that call's fence and its read: on x86
 * the instructions after rdtsc start only once it has completed, so counting after the read
 * lengthened every iteration by the bucket's index, load and store (docs/benchmarks.md, "Why the
 * loop cost 1.3x on Intel"); before the read they run beside it. The histogram is then one gap
 * behind at most, until the next call or jitterd_loop_flush. */
JITTERD_LOOP_HOT void jitterd_loop_record(jitterd_loop_probe *p) {
  uint64_t now, prev;
  int started;
  if (__builtin_expect(p == NULL, 0)) return;
#if defined(__x86_64__)
  {
    uint32_t low, high;
    __asm__ __volatile__("lfence" : : : "memory");
    if (__builtin_expect(p->pending, 1)) { /* the previous gap, beside the read below */
      p->pending = 0;
      jitterd_loop_count_(p, p->prev, p->pending_gap); /* pending_bucket is set NULL after the read */
    }
    prev = p->prev; /* loaded before the read: a load after it would wait for it */
    started = p->started;
    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high) : : "memory");
    now = ((uint64_t)high << 32) | low;
  }
#else
  jitterd_loop_count_pending_(p);
  prev = p->prev;
  started = p->started;
  now = jitterd_loop_read_counter();
#endif
  if (__builtin_expect(!started, 0)) {
    jitterd_loop_start_(p, now);
    return;
  }
  p->pending_gap = now - prev;
  p->pending_bucket = NULL; /* counted from the gap at the next call, between its fence and read */
  p->pending = 1;
  p->prev = now;
}

/* Counts the gap the last record or record_at left, and publishes what the loop recorded since the last
 * publication (at most 1023 gaps). NULL does nothing. */
JITTERD_LOOP_HOT void jitterd_loop_flush(jitterd_loop_probe *p) {
  if (p == NULL || !p->started) return;
  jitterd_loop_count_pending_(p);
  if ((p->n & (JITTERD_LOOP_CHECK_EVERY - 1)) != 0) jitterd_loop_publish_(p, p->prev);
}

#ifdef __cplusplus
}
#endif

#endif /* JITTERD_LOOP_POSIX_2008 */
#endif /* JITTERD_LOOP_PROBE_RECORD_H */
