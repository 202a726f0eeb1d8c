// SPDX-License-Identifier: Apache-2.0
/* jitterd loop probe: opening a probe (its arguments checked, its segment made and put in place)
 * and closing it. jitterd_loop_open is the one call that may fail: it returns NULL with one errno
 * per cause, which jitterd_loop_strerror turns into a text naming the argument and its rule.
 *
 * Open writes the segment (loop_probe_layout.h) under a temporary name and links it into place,
 * so jitterd never sees a half-made segment, and refuses (EEXIST) a name whose writer is alive; a
 * dead writer's segment is replaced. Close unlinks it.
 *
 * Part of the header-only C11 (and C++17 or later) library: applications include
 * <jitterd/loop_probe.h>, which includes this. Threads: open and close from any one thread, not
 * concurrently with the record path on the same probe; the checks and jitterd_loop_strerror from
 * any thread. */
#ifndef JITTERD_LOOP_PROBE_OPEN_H
#define JITTERD_LOOP_PROBE_OPEN_H

/* First: its feature macro comes before any system header. */
#include <jitterd/loop_probe_layout.h>

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
#define JITTERD_LOOP_POSIX_2008 1 /* the record path's header compiles only with it */

#include <jitterd/loop_probe_checks.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* An open probe: where its segment is mapped, and the writer's own state. The application holds
 * a pointer to it and touches no field. */
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
  uint64_t pending_gap; /* the last gap recorded, counted at the next record, record_at or flush */
  /* its bucket (record_at's); NULL when none is pending, or when record left it */
  JITTERD_LOOP_ATOMIC_U64 *pending_bucket;
  struct jitterd_loop_slot *slot;
  uint32_t slot_count, ring_capacity;
  int started, pending;
  dev_t device; /* the segment file's identity: close removes that file only */
  ino_t inode;
} jitterd_loop_probe;

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

static inline void jitterd_loop_fail_(int fd, const char *temporary, void *map, size_t bytes, int error) {
  if (map != NULL) munmap(map, bytes);
  if (fd >= 0) close(fd);
  if (temporary != NULL) unlink(temporary);
  errno = error;
}

/* The first argument that breaks its rule, as its errno (loop_probe_checks.h); 0 when all are good. */
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

/* Where the segment goes: P's path (DIRECTORY, else $JITTERD_LOOP_DIR, else /dev/shm) and the
 * hidden TEMPORARY name it is made under. ENAMETOOLONG for a path too long, EEXIST when a live
 * writer holds it (checked early, before the 20 ms measurement); else 0. */
static inline int jitterd_loop_locate_(jitterd_loop_probe *p, char *temporary, size_t temporary_bytes,
                                       const char *directory, const char *name) {
  int written;
  if (directory == NULL) directory = getenv("JITTERD_LOOP_DIR");
  if (directory == NULL || directory[0] == '\0') directory = JITTERD_LOOP_DEFAULT_DIR;
  written = snprintf(p->path, sizeof p->path, "%s/" JITTERD_LOOP_FILE_PREFIX "%s", directory, name);
  if (written < 0 || (size_t)written + 8 >= sizeof p->path) return ENAMETOOLONG;
  if (jitterd_loop_writer_alive_(p->path)) return EEXIST;
  /* hidden, and not under the prefix jitterd reads, until linked into place */
  snprintf(temporary, temporary_bytes, "%s/." JITTERD_LOOP_FILE_PREFIX "%s.XXXXXX", directory, name);
  return 0;
}

/* The segment's sizes and counter from the options O (their zeros take the defaults; the native
 * counter's frequency is measured here): JITTERD_LOOP_ENO_FREQUENCY when it cannot be, else 0. */
static inline int jitterd_loop_size_(jitterd_loop_probe *p, struct jitterd_loop_options *o) {
  p->ring_capacity = o->ring_capacity != 0 ? o->ring_capacity : JITTERD_LOOP_DEFAULT_RING;
  p->slot_count = o->slot_count != 0 ? o->slot_count : JITTERD_LOOP_DEFAULT_SLOTS;
  p->mapped_bytes = (size_t)jitterd_loop_segment_bytes(p->slot_count, p->ring_capacity);
  if (o->counter == 0) o->counter = JITTERD_LOOP_NATIVE_COUNTER;
  if (o->hertz == 0) o->hertz = jitterd_loop_native_hertz_();
  p->slot_ticks = (uint64_t)((double)o->hertz * (JITTERD_LOOP_SLOT_NS / 1e9));
  return o->hertz == 0 || p->slot_ticks == 0 ? JITTERD_LOOP_ENO_FREQUENCY : 0;
}

/* Creates TEMPORARY (its XXXXXX replaced) with P's size reserved and maps it: 0 with the file
 * open in *FD and mapped at p->segment, or an errno with nothing left behind. */
static inline int jitterd_loop_map_(jitterd_loop_probe *p, char *temporary, int *fd) {
  void *map = NULL;
  int error;
  *fd = mkstemp(temporary);
  if (*fd < 0) return errno;
  /* posix_fallocate reserves the pages now: on a full tmpfs a mapping without them would kill the
   * application with SIGBUS at its first touch; this way open fails with ENOSPC instead. */
  if (fchmod(*fd, 0644) != 0 || ftruncate(*fd, (off_t)p->mapped_bytes) != 0 ||
      (errno = posix_fallocate(*fd, 0, (off_t)p->mapped_bytes)) != 0 ||
      (map = mmap(NULL, p->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
    error = errno;
    jitterd_loop_fail_(*fd, temporary, map == MAP_FAILED ? NULL : map, p->mapped_bytes, error);
    return error;
  }
  p->segment = (struct jitterd_loop_header *)map;
  return 0;
}

/* The new segment made ready (its pages touched and locked, its header filled, the writer's
 * state at its start) and its magic stored last, with release: a reader that sees the magic sees
 * the rest. */
static inline void jitterd_loop_ready_(jitterd_loop_probe *p, const char *name, int cpu, const char *labels,
                                       const struct jitterd_loop_options *o) {
  memset((void *)p->segment, 0, p->mapped_bytes); /* touches every page now, not in the loop */
  (void)mlock(p->segment, p->mapped_bytes);       /* best effort, as the sampler's */
  jitterd_loop_fill_header_(p, name, cpu, labels, o->counter, o->hertz);
  p->floor_multiple = o->floor_multiple != 0 ? o->floor_multiple : JITTERD_LOOP_DEFAULT_FLOOR_MULTIPLE;
  p->fixed_threshold = o->threshold_ns != 0 ? (uint64_t)((double)o->threshold_ns * (double)o->hertz / 1e9) : 0;
  p->threshold = UINT64_MAX; /* no interruption until the warm-up ends */
  p->local_min = UINT64_MAX;
  p->slot_end = 0;
  p->slot_start = 1; /* an empty range: the first publication takes the slow path */
  JITTERD_LOOP_RELEASE(p->segment->magic, JITTERD_LOOP_MAGIC);
}

/* Opens the probe NAME (letters, digits, '_', '-', '.'; at most 63) of the loop running on CPU,
 * with LABELS ("key=value,key=value", at most 8 pairs and 191 bytes; NULL for none). Creates the
 * segment, so call it before the loop starts (it may sleep 20 ms to measure the counter's
 * frequency). Returns NULL with errno set on failure, one value per cause (see
 * jitterd_loop_strerror): the loop then runs without the probe, whose functions all accept NULL. */
static inline jitterd_loop_probe *jitterd_loop_open(const char *name, int cpu, const char *labels,
                                                    const struct jitterd_loop_options *options) {
  struct jitterd_loop_options o;
  char temporary[PATH_MAX + 32];
  jitterd_loop_probe *p;
  struct stat file;
  int fd = -1, error;
  if (options != NULL)
    o = *options;
  else
    memset(&o, 0, sizeof o);
  error = jitterd_loop_check_arguments_(name, cpu, labels, &o);
  if (error != 0) {
    errno = error;
    return NULL;
  }
  p = (jitterd_loop_probe *)calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  error = jitterd_loop_locate_(p, temporary, sizeof temporary, o.directory, name);
  if (error == 0) error = jitterd_loop_size_(p, &o);
  if (error == 0) error = jitterd_loop_map_(p, temporary, &fd);
  if (error == 0) {
    jitterd_loop_ready_(p, name, cpu, labels, &o);
    error = jitterd_loop_place_(temporary, p->path);
    if (error != 0) jitterd_loop_fail_(fd, temporary, p->segment, p->mapped_bytes, error);
  }
  if (error != 0) {
    free(p);
    errno = error;
    return NULL;
  }
  if (fstat(fd, &file) == 0) { /* the file close may remove */
    p->device = file.st_dev;
    p->inode = file.st_ino;
  }
  close(fd);
  return p;
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
#endif /* JITTERD_LOOP_PROBE_OPEN_H */
