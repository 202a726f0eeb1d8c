// SPDX-License-Identifier: Apache-2.0
/* jitterd loop probe: an application's own busy-polling loop as a jitterd sampler.
 *
 * Header-only, C11 (and C++17 or later), no dependency beyond libc. The application opens a named
 * probe once, calls one record function per loop iteration, and closes it at exit:
 *
 *   jitterd_loop_probe *probe = jitterd_loop_open("rx0", 3, "nic=eth0", NULL);
 *   if (probe == NULL) fprintf(stderr, "rx0: %s\n", jitterd_loop_strerror(errno));
 *   for (;;) { poll_once(); jitterd_loop_record(probe); }       // or _record_at(probe, tsc)
 *   jitterd_loop_close(probe);
 *
 * A failed open returns NULL with one errno per cause (jitterd_loop_strerror names the argument
 * and its rule), and every other call accepts NULL: the loop runs on without its monitor.
 *
 * The record path is what jitterd's own sampler loop does (docs/method.md): one ordered counter
 * read (x86-64 lfence;rdtsc, aarch64 isb;mrs cntvct_el0;isb), the gap since the previous call into
 * the same log-linear histogram (exact below 16 ticks, then 16 linear sub-buckets per power of
 * two: 976 buckets), a gap at or above the threshold into the interruption ring with its start
 * tick, and every 1024 gaps the window max of the current 250 ms slot and the published counters.
 * It makes no system call, allocation, lock, log call or atomic read-modify-write: the segment has
 * one writer, which stores with relaxed or release ordering; jitterd only reads it.
 *
 * The segment is one shared-memory file per probe, JITTERD_LOOP_DEFAULT_DIR/jitterd-loop.NAME
 * (the environment's JITTERD_LOOP_DIR or the options' directory override it), laid out as
 * docs/loops.md describes: a versioned header, the live counters, the histogram, the window max
 * slots and the ring. Open writes it under a temporary name and links it into place, so jitterd
 * never sees a half-made segment, and refuses (EEXIST) a name whose writer is alive; a dead
 * writer's segment is replaced. Close unlinks it.
 *
 * Threads: one thread per probe calls record (the loop's thread); open and close from any one
 * thread, not concurrently with record on the same probe. */
#ifndef JITTERD_LOOP_PROBE_H
#define JITTERD_LOOP_PROBE_H

/* POSIX 2008 (mkstemp, ftruncate, posix_fallocate, clock_gettime, kill, PATH_MAX) under a strict
 * -std=c11: effective when this header comes before any system header, or define
 * _POSIX_C_SOURCE=200809L yourself. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* A system header included before this one under strict ISO C (-std=c11, no feature macro) fixed
 * the C library's features without POSIX, and the define above came too late. */
#if !defined(_POSIX_VERSION) || _POSIX_VERSION < 200809L || !defined(PATH_MAX)
#error \
    "jitterd/loop_probe.h needs POSIX 2008: compile with -D_POSIX_C_SOURCE=200809L (or -std=gnu11, or -D_GNU_SOURCE), or include this header before any system header"
#else

#ifdef __cplusplus
#include <atomic>
#define JITTERD_LOOP_ATOMIC_U64 std::atomic<uint64_t>
#define JITTERD_LOOP_LOAD(object) (object).load(std::memory_order_relaxed)
#define JITTERD_LOOP_STORE(object, value) (object).store((value), std::memory_order_relaxed)
#define JITTERD_LOOP_RELEASE(object, value) (object).store((value), std::memory_order_release)
#define JITTERD_LOOP_STATIC_ASSERT static_assert
extern "C" {
#else
#include <stdatomic.h>
#define JITTERD_LOOP_ATOMIC_U64 _Atomic uint64_t
#define JITTERD_LOOP_LOAD(object) atomic_load_explicit(&(object), memory_order_relaxed)
#define JITTERD_LOOP_STORE(object, value) atomic_store_explicit(&(object), (value), memory_order_relaxed)
#define JITTERD_LOOP_RELEASE(object, value) atomic_store_explicit(&(object), (value), memory_order_release)
#define JITTERD_LOOP_STATIC_ASSERT _Static_assert
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

/* ---- opening ---- */

/* Options of jitterd_loop_open; NULL or a zeroed struct takes every default. */
struct jitterd_loop_options {
  const char *directory;   /* NULL: $JITTERD_LOOP_DIR, else JITTERD_LOOP_DEFAULT_DIR */
  uint64_t threshold_ns;   /* 0: auto, floor_multiple times the warm-up's smallest gap */
  uint32_t floor_multiple; /* 0: 20, as the sampler's threshold_floor_multiple */
  uint32_t ring_capacity;  /* 0: 4096 */
  uint32_t slot_count;     /* 0: 256 slots of 250 ms */
  uint32_t counter;        /* 0: the native read; JITTERD_LOOP_COUNTER_CALLER with hertz */
  uint64_t hertz;          /* the caller's counter frequency (0: the native counter's, measured) */
};

typedef struct jitterd_loop_probe {
  struct jitterd_loop_header *segment; /* the shared mapping */
  JITTERD_LOOP_ATOMIC_U64 *counts;     /* inside the mapping: the histogram */
  struct jitterd_loop_slot *slots;
  struct jitterd_loop_entry *ring;
  size_t mapped_bytes;
  char path[PATH_MAX];
  /* the writer's own state, never in the segment */
  uint64_t prev, first, n, local_min, local_max, threshold, floor_multiple, fixed_threshold;
  uint64_t samples_base, interruptions, stolen_ticks, max_gap, ring_head;
  uint64_t slot_ticks, slot_start, slot_end, slot_max;
  uint64_t pending_gap; /* jitterd_loop_record's last gap, counted at its next call */
  struct jitterd_loop_slot *slot;
  uint32_t slot_count, ring_capacity;
  int started, pending;
  dev_t device; /* the segment file's identity: close removes that file only */
  ino_t inode;
} jitterd_loop_probe;

static inline int jitterd_loop_name_char_(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

static inline int jitterd_loop_name_ok_(const char *name) {
  size_t length = 0;
  if (name == NULL) return 0;
  for (; name[length] != '\0'; ++length)
    if (!jitterd_loop_name_char_(name[length]) || length + 1 >= JITTERD_LOOP_NAME_BYTES) return 0;
  return length > 0 && name[0] != '.';
}

/* One label key of LENGTH bytes: a Prometheus label name, not reserved ("__" prefix) and not one
 * jitterd or Prometheus puts on a loop's series (loop, cpu, cause, le, quantile, instance, job: a
 * second one would make Prometheus refuse the host's whole scrape). The same rule as jitterd's
 * reader (kLoopReservedLabels, docs/loops.md). */
static inline int jitterd_loop_label_key_ok_(const char *key, size_t length) {
  static const char *const reserved[] = {"loop", "cpu", "cause", "le", "quantile", "instance", "job"};
  size_t i;
  if (length == 0 || length > 63 || (key[0] >= '0' && key[0] <= '9')) return 0;
  if (length >= 2 && key[0] == '_' && key[1] == '_') return 0;
  for (i = 0; i < sizeof reserved / sizeof reserved[0]; ++i)
    if (strlen(reserved[i]) == length && memcmp(key, reserved[i], length) == 0) return 0;
  for (i = 0; i < length; ++i)
    if (key[i] == '-' || key[i] == '.' || !jitterd_loop_name_char_(key[i])) return 0;
  return 1;
}

/* "key=value,key=value" (NULL or "" for none): at most JITTERD_LOOP_MAX_LABELS pairs, distinct
 * keys, values printable ASCII without a comma or a double quote, no trailing comma, fewer than
 * JITTERD_LOOP_LABELS_BYTES bytes. */
static inline int jitterd_loop_labels_ok_(const char *labels) {
  const char *keys[JITTERD_LOOP_MAX_LABELS];
  size_t key_lengths[JITTERD_LOOP_MAX_LABELS];
  size_t count = 0, k;
  const char *at = labels;
  if (labels == NULL || labels[0] == '\0') return 1;
  if (strlen(labels) >= JITTERD_LOOP_LABELS_BYTES) return 0;
  for (;;) {
    const char *equals = at, *end;
    while (*equals != '\0' && *equals != '=' && *equals != ',') ++equals;
    if (*equals != '=' || count == JITTERD_LOOP_MAX_LABELS) return 0;
    if (!jitterd_loop_label_key_ok_(at, (size_t)(equals - at))) return 0;
    for (k = 0; k < count; ++k)
      if (key_lengths[k] == (size_t)(equals - at) && memcmp(keys[k], at, key_lengths[k]) == 0) return 0;
    keys[count] = at;
    key_lengths[count++] = (size_t)(equals - at);
    for (end = equals + 1; *end != '\0' && *end != ','; ++end)
      if (*end < 0x20 || *end > 0x7e || *end == '"') return 0;
    if (*end == '\0') return 1;
    at = end + 1;
    if (*at == '\0') return 0; /* a trailing comma */
  }
}

/* Process PID's start time (clock ticks since boot): field 22 of /proc/PID/stat, after the
 * command in parentheses (which may hold spaces and parentheses itself); its state (field 3)
 * into *STATE when STATE is not NULL. 0 when unreadable (PID 0: this process). */
static inline uint64_t jitterd_loop_start_time_of_(long pid, char *state) {
  char text[1024];
  unsigned long long start = 0;
  FILE *file;
  size_t got;
  const char *at;
  int field;
  if (pid > 0)
    snprintf(text, sizeof text, "/proc/%ld/stat", pid);
  else
    snprintf(text, sizeof text, "/proc/self/stat");
  file = fopen(text, "r");
  if (file == NULL) return 0;
  got = fread(text, 1, sizeof text - 1, file);
  fclose(file);
  text[got] = '\0';
  at = strrchr(text, ')');
  if (at == NULL) return 0;
  if (state != NULL && at[1] == ' ') *state = at[2];
  for (field = 2; field < 22 && at != NULL; ++field) at = strchr(at + 1, ' ');
  if (at == NULL || sscanf(at + 1, "%llu", &start) != 1) return 0;
  return (uint64_t)start;
}

static inline uint64_t jitterd_loop_start_time_(void) { return jitterd_loop_start_time_of_(0, NULL); }

/* Whether the segment file at PATH has a live writer: a whole header with the magic, whose pid
 * is a running process (kill 0 succeeds or is refused for permission; not a zombie) started at
 * the recorded time. A file that is not a segment, or a writer that is gone (its pid free or reused by a
 * later process), is not live. */
static inline int jitterd_loop_writer_alive_(const char *path) {
  unsigned char header[JITTERD_LOOP_HEADER_BYTES];
  uint64_t magic, start_time, now_start;
  int32_t pid;
  char state = '?';
  ssize_t got;
  const int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return 0;
  got = read(fd, header, sizeof header);
  close(fd);
  if (got != (ssize_t)sizeof header) return 0;
  memcpy(&magic, header + JITTERD_LOOP_OFF_MAGIC, sizeof magic);
  memcpy(&pid, header + JITTERD_LOOP_OFF_PID, sizeof pid);
  memcpy(&start_time, header + JITTERD_LOOP_OFF_START_TIME, sizeof start_time);
  if (magic != JITTERD_LOOP_MAGIC || pid <= 0) return 0;
  if (kill((pid_t)pid, 0) != 0 && errno != EPERM) return 0;
  now_start = jitterd_loop_start_time_of_((long)pid, &state);
  if (state == 'Z' || state == 'X') return 0; /* exited, not yet reaped */
  return start_time == 0 || now_start == 0 || now_start == start_time;
}

static inline uint64_t jitterd_loop_monotonic_raw_ns_(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC_RAW, &now);
  return (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
}

/* The native counter's frequency: cntfrq_el0 on aarch64, 1 GHz for nanoseconds, else measured
 * against CLOCK_MONOTONIC_RAW over 20 ms, each end bracketed by two counter reads. */
static inline uint64_t jitterd_loop_native_hertz_(void) {
#if defined(__aarch64__)
  uint64_t hertz;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hertz));
  return hertz;
#elif defined(__x86_64__)
  const struct timespec pause = {0, 20000000};
  uint64_t t0 = jitterd_loop_read_counter(), c0 = jitterd_loop_monotonic_raw_ns_(),
           t1 = jitterd_loop_read_counter();
  uint64_t t2, c1, t3;
  nanosleep(&pause, NULL);
  t2 = jitterd_loop_read_counter();
  c1 = jitterd_loop_monotonic_raw_ns_();
  t3 = jitterd_loop_read_counter();
  if (c1 <= c0) return 0;
  return (uint64_t)((double)((t2 + t3) / 2 - (t0 + t1) / 2) * 1e9 / (double)(c1 - c0) + 0.5);
#else
  return UINT64_C(1000000000);
#endif
}

/* Why jitterd_loop_open failed: errno names the cause, one value per rule (docs/loops.md). */
#define JITTERD_LOOP_EBAD_NAME EINVAL      /* name */
#define JITTERD_LOOP_EBAD_LABELS EILSEQ    /* labels */
#define JITTERD_LOOP_EBAD_CPU ERANGE       /* cpu */
#define JITTERD_LOOP_EBAD_OPTION EDOM      /* options: ring_capacity, slot_count, counter, hertz */
#define JITTERD_LOOP_ENO_FREQUENCY ENOTSUP /* the native counter's frequency could not be measured */
/* and, from the system: ENOENT or ENOTDIR (the directory does not exist), EACCES, EPERM or EROFS
 * (it is not writable), ENOSPC (no room for the segment), EEXIST (a live process writes a probe of
 * that name there), ENAMETOOLONG (the directory's path), ENOMEM. */

/* A text for the errno jitterd_loop_open left, naming the argument and the rule it broke (a
 * static string; any errno gives a text). */
static inline const char *jitterd_loop_strerror(int error) {
  switch (error) {
    case JITTERD_LOOP_EBAD_NAME:
      return "name: must be 1 to 63 letters, digits, '_', '-' or '.', not starting with '.'";
    case JITTERD_LOOP_EBAD_LABELS:
      return "labels: must be \"key=value,key=value\" (at most 8 pairs, under 192 bytes; keys as Prometheus "
             "label names, distinct, not loop, cpu, cause, le, quantile, instance, job or starting with __; "
             "values printable ASCII without ',' or "
             "'\"')";
    case JITTERD_LOOP_EBAD_CPU:
      return "cpu: must be 0 to 65535, the CPU the loop runs on";
    case JITTERD_LOOP_EBAD_OPTION:
      return "options: ring_capacity at most 1048576, slot_count at most 65536, counter 0, the native one or "
             "JITTERD_LOOP_COUNTER_CALLER, which needs hertz";
    case JITTERD_LOOP_ENO_FREQUENCY:
      return "counter: the native counter's frequency could not be measured; pass options.hertz";
    case ENOENT:
    case ENOTDIR:
      return "directory: does not exist (options.directory, else $JITTERD_LOOP_DIR, else /dev/shm)";
    case EACCES:
    case EPERM:
    case EROFS:
      return "directory: this process may not create files in it (options.directory, else $JITTERD_LOOP_DIR, "
             "else /dev/shm)";
    case ENOSPC:
    case EDQUOT:
      return "directory: no space left for the segment (about 100 KiB with the default sizes; is /dev/shm full?)";
    case EEXIST:
      return "name: a running process already writes a loop probe of this name in this directory";
    case ENAMETOOLONG:
      return "directory: its path is too long for the segment's file name";
    case ENOMEM:
      return "out of memory for the probe";
    default:
      return strerror(error);
  }
}

static inline void jitterd_loop_fail_(int fd, const char *temporary, void *map, size_t bytes, int error) {
  if (map != NULL) munmap(map, bytes);
  if (fd >= 0) close(fd);
  if (temporary != NULL) unlink(temporary);
  errno = error;
}

/* The first argument that breaks its rule, as the errno above; 0 when all are good. */
static inline int jitterd_loop_check_arguments_(const char *name, int cpu, const char *labels,
                                                const struct jitterd_loop_options *o) {
  if (!jitterd_loop_name_ok_(name)) return JITTERD_LOOP_EBAD_NAME;
  if (!jitterd_loop_labels_ok_(labels)) return JITTERD_LOOP_EBAD_LABELS;
  if (cpu < 0 || cpu > 65535) return JITTERD_LOOP_EBAD_CPU;
  if (o->ring_capacity > JITTERD_LOOP_MAX_RING || o->slot_count > JITTERD_LOOP_MAX_SLOTS ||
      (o->counter == JITTERD_LOOP_COUNTER_CALLER && o->hertz == 0) ||
      (o->counter != 0 && o->counter != JITTERD_LOOP_COUNTER_CALLER && o->counter != JITTERD_LOOP_NATIVE_COUNTER))
    return JITTERD_LOOP_EBAD_OPTION;
  return 0;
}

/* Puts the finished segment TEMPORARY in place at PATH: refused with EEXIST while a live writer
 * holds PATH; a dead writer's segment (or any other file) is replaced. link() fails when PATH
 * exists, so two processes opening one name at once cannot both succeed; a file system without
 * hard links falls back to rename(). Returns 0 or an errno. */
static inline int jitterd_loop_place_(const char *temporary, const char *path) {
  if (link(temporary, path) == 0) {
    unlink(temporary);
    return 0;
  }
  if (errno != EEXIST && errno != EPERM && errno != ENOTSUP && errno != EMLINK) return errno;
  if (jitterd_loop_writer_alive_(path)) return EEXIST;
  return rename(temporary, path) == 0 ? 0 : errno;
}

/* Fills the header of a new segment (every field but the magic). */
static inline void jitterd_loop_fill_header_(jitterd_loop_probe *p, const char *name, int cpu, const char *labels,
                                             uint32_t counter, uint64_t hertz) {
  struct jitterd_loop_header *h = p->segment;
  h->version = JITTERD_LOOP_LAYOUT_VERSION;
  h->header_bytes = JITTERD_LOOP_HEADER_BYTES;
  h->total_bytes = p->mapped_bytes;
  h->pid = (int32_t)getpid();
  h->cpu = (int32_t)cpu;
  h->start_time = jitterd_loop_start_time_();
  h->counter = counter;
  h->sub_bits = JITTERD_LOOP_SUB_BITS;
  h->hertz = hertz;
  h->buckets = JITTERD_LOOP_BUCKETS;
  h->ring_capacity = p->ring_capacity;
  h->slot_count = p->slot_count;
  h->slot_ticks = p->slot_ticks;
  h->histogram_offset = JITTERD_LOOP_HEADER_BYTES;
  h->slots_offset = h->histogram_offset + 8u * JITTERD_LOOP_BUCKETS;
  h->ring_offset = h->slots_offset + 16u * (uint64_t)p->slot_count;
  strncpy(h->name, name, JITTERD_LOOP_NAME_BYTES - 1);
  if (labels != NULL) strncpy(h->labels, labels, JITTERD_LOOP_LABELS_BYTES - 1);
  JITTERD_LOOP_STORE(h->min_gap, UINT64_MAX);
  p->counts = (JITTERD_LOOP_ATOMIC_U64 *)((char *)h + h->histogram_offset);
  p->slots = (struct jitterd_loop_slot *)((char *)h + h->slots_offset);
  p->ring = (struct jitterd_loop_entry *)((char *)h + h->ring_offset);
}

/* Opens the probe NAME (letters, digits, '_', '-', '.'; at most 63) of the loop running on CPU,
 * with LABELS ("key=value,key=value", at most 8 pairs and 191 bytes; NULL for none). Creates the
 * segment, so call it before the loop starts (it may sleep 20 ms to measure the counter's
 * frequency). Returns NULL with errno set on failure, one value per cause (see
 * jitterd_loop_strerror): the loop then runs without the probe, whose functions all accept NULL. */
static inline jitterd_loop_probe *jitterd_loop_open(const char *name, int cpu, const char *labels,
                                                    const struct jitterd_loop_options *options) {
  struct jitterd_loop_options o;
  const char *directory;
  char temporary[PATH_MAX + 32];
  jitterd_loop_probe *p;
  void *map;
  int fd, written, error;
  if (options != NULL)
    o = *options;
  else
    memset(&o, 0, sizeof o);
  error = jitterd_loop_check_arguments_(name, cpu, labels, &o);
  if (error != 0) {
    errno = error;
    return NULL;
  }
  directory = o.directory != NULL ? o.directory : getenv("JITTERD_LOOP_DIR");
  if (directory == NULL || directory[0] == '\0') directory = JITTERD_LOOP_DEFAULT_DIR;
  p = (jitterd_loop_probe *)calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  written = snprintf(p->path, sizeof p->path, "%s/" JITTERD_LOOP_FILE_PREFIX "%s", directory, name);
  if (written < 0 || (size_t)written + 8 >= sizeof p->path) {
    free(p);
    errno = ENAMETOOLONG;
    return NULL;
  }
  if (jitterd_loop_writer_alive_(p->path)) { /* early, before the 20 ms measurement */
    free(p);
    errno = EEXIST;
    return NULL;
  }
  /* hidden, and not under the prefix jitterd reads, until linked into place */
  snprintf(temporary, sizeof temporary, "%s/." JITTERD_LOOP_FILE_PREFIX "%s.XXXXXX", directory, name);
  p->ring_capacity = o.ring_capacity != 0 ? o.ring_capacity : JITTERD_LOOP_DEFAULT_RING;
  p->slot_count = o.slot_count != 0 ? o.slot_count : JITTERD_LOOP_DEFAULT_SLOTS;
  p->mapped_bytes = (size_t)jitterd_loop_segment_bytes(p->slot_count, p->ring_capacity);
  if (o.counter == 0) o.counter = JITTERD_LOOP_NATIVE_COUNTER;
  if (o.hertz == 0) o.hertz = jitterd_loop_native_hertz_();
  p->slot_ticks = (uint64_t)((double)o.hertz * (JITTERD_LOOP_SLOT_NS / 1e9));
  if (o.hertz == 0 || p->slot_ticks == 0) {
    free(p);
    errno = JITTERD_LOOP_ENO_FREQUENCY;
    return NULL;
  }
  fd = mkstemp(temporary);
  if (fd < 0) {
    free(p);
    return NULL;
  }
  map = NULL;
  /* posix_fallocate reserves the pages now: on a full tmpfs a mapping without them would kill the
   * application with SIGBUS at its first touch; this way open fails with ENOSPC instead. */
  if (fchmod(fd, 0644) != 0 || ftruncate(fd, (off_t)p->mapped_bytes) != 0 ||
      (errno = posix_fallocate(fd, 0, (off_t)p->mapped_bytes)) != 0 ||
      (map = mmap(NULL, p->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
    error = errno;
    jitterd_loop_fail_(fd, temporary, map == MAP_FAILED ? NULL : map, p->mapped_bytes, error);
    free(p);
    return NULL;
  }
  p->segment = (struct jitterd_loop_header *)map;
  memset(map, 0, p->mapped_bytes);   /* touches every page now, not in the loop */
  (void)mlock(map, p->mapped_bytes); /* best effort, as the sampler's */
  jitterd_loop_fill_header_(p, name, cpu, labels, o.counter, o.hertz);
  p->floor_multiple = o.floor_multiple != 0 ? o.floor_multiple : JITTERD_LOOP_DEFAULT_FLOOR_MULTIPLE;
  p->fixed_threshold = o.threshold_ns != 0 ? (uint64_t)((double)o.threshold_ns * (double)o.hertz / 1e9) : 0;
  p->threshold = UINT64_MAX; /* no interruption until the warm-up ends */
  p->local_min = UINT64_MAX;
  p->slot_end = 0;
  p->slot_start = 1; /* an empty range: the first publication takes the slow path */
  JITTERD_LOOP_RELEASE(p->segment->magic, JITTERD_LOOP_MAGIC);
  error = jitterd_loop_place_(temporary, p->path);
  if (error != 0) {
    jitterd_loop_fail_(fd, temporary, map, p->mapped_bytes, error);
    free(p);
    return NULL;
  }
  {
    struct stat file;
    if (fstat(fd, &file) == 0) {
      p->device = file.st_dev;
      p->inode = file.st_ino;
    }
  }
  close(fd);
  return p;
}

/* ---- the record path ---- */

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

/* GAP, which ended at counter value END: into the histogram (histogram_bucket_index of
 * src/measure/histogram.h, branch-free above the exact range), the ring when at or above the
 * threshold, the min and max, and every 1024 gaps the publication. */
JITTERD_LOOP_HOT void jitterd_loop_count_(jitterd_loop_probe *p, uint64_t end, uint64_t gap) {
  JITTERD_LOOP_ATOMIC_U64 *bucket;
  unsigned top;
  if (gap < JITTERD_LOOP_SUB_BUCKETS) {
    bucket = &p->counts[gap];
  } else {
    top = 63u - (unsigned)__builtin_clzll(gap);
    bucket = &p->counts[((size_t)(top - JITTERD_LOOP_SUB_BITS + 1) << JITTERD_LOOP_SUB_BITS) +
                        (size_t)((gap >> (top - JITTERD_LOOP_SUB_BITS)) - JITTERD_LOOP_SUB_BUCKETS)];
  }
  if (__builtin_expect(gap >= p->threshold, 0)) jitterd_loop_interruption_(p, end, gap);
  /* one writer: a relaxed load and store (plain moves), as GapHistogram::record */
  JITTERD_LOOP_STORE(*bucket, JITTERD_LOOP_LOAD(*bucket) + 1);
  if (gap < p->local_min) p->local_min = gap;
  if (gap > p->local_max) p->local_max = gap;
  if (__builtin_expect((++p->n & (JITTERD_LOOP_CHECK_EVERY - 1)) == 0, 0)) jitterd_loop_publish_(p, end);
}

/* The first call: the loop's first read starts the probe's time; no gap yet. */
static inline void jitterd_loop_start_(jitterd_loop_probe *p, uint64_t now) {
  p->started = 1;
  p->prev = p->first = now;
  JITTERD_LOOP_STORE(p->segment->first_tick, now);
  JITTERD_LOOP_RELEASE(p->segment->heartbeat, now);
}

/* The gap jitterd_loop_record left to count (it ended at p->prev), if any. */
JITTERD_LOOP_HOT void jitterd_loop_count_pending_(jitterd_loop_probe *p) {
  if (p->pending) {
    p->pending = 0;
    jitterd_loop_count_(p, p->prev, p->pending_gap);
  }
}

/* One loop iteration at counter value NOW (the caller's read, in the probe's counter): the gap
 * since the previous call, counted now. A NULL probe (one that failed to open) does nothing:
 * one branch, always predicted. */
JITTERD_LOOP_HOT void jitterd_loop_record_at(jitterd_loop_probe *p, uint64_t now) {
  uint64_t gap;
  if (__builtin_expect(p == NULL, 0)) return;
  if (__builtin_expect(!p->started, 0)) {
    jitterd_loop_start_(p, now);
    return;
  }
  if (__builtin_expect(p->pending, 0)) jitterd_loop_count_pending_(p); /* after a jitterd_loop_record */
  gap = now - p->prev;
  p->prev = now;
  jitterd_loop_count_(p, now, gap);
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
      jitterd_loop_count_(p, p->prev, p->pending_gap);
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
  p->pending = 1;
  p->prev = now;
}

/* Counts the gap jitterd_loop_record left, and publishes what the loop recorded since the last
 * publication (at most 1023 gaps). NULL does nothing. */
JITTERD_LOOP_HOT void jitterd_loop_flush(jitterd_loop_probe *p) {
  if (p == NULL || !p->started) return;
  jitterd_loop_count_pending_(p);
  if ((p->n & (JITTERD_LOOP_CHECK_EVERY - 1)) != 0) jitterd_loop_publish_(p, p->prev);
}

/* Unmaps and removes the segment: jitterd then drops the probe. The file is removed only while
 * it is still this probe's (a later open of the same name replaced it otherwise). NULL is ignored. */
static inline void jitterd_loop_close(jitterd_loop_probe *p) {
  struct stat file;
  if (p == NULL) return;
  if (stat(p->path, &file) == 0 && file.st_dev == p->device && file.st_ino == p->inode) unlink(p->path);
  munmap(p->segment, p->mapped_bytes);
  free(p);
}

#ifdef __cplusplus
}
#endif

#endif /* POSIX 2008 */
#endif /* JITTERD_LOOP_PROBE_H */
