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
 * The library is this header and the four it includes, each on its own part:
 *   jitterd/loop_probe_layout.h  the segment's layout and the counter read (jitterd's reader
 *                                parses segments with the same constants)
 *   jitterd/loop_probe_checks.h  the rules a name and labels must keep, the errno per broken
 *                                rule and its text (jitterd_loop_strerror)
 *   jitterd/loop_probe_open.h    opening (the segment made and put in place) and closing
 *   jitterd/loop_probe_record.h  the record path: record, record_at, flush
 * Include this one; the others are its parts and may change between versions.
 *
 * The record path does what jitterd's own sampler loop does (docs/method.md), with no system
 * call, allocation, lock or atomic read-modify-write (loop_probe_record.h). The segment is one
 * shared-memory file per probe, JITTERD_LOOP_DEFAULT_DIR/jitterd-loop.NAME (the environment's
 * JITTERD_LOOP_DIR or the options' directory override it), laid out as docs/loops.md describes;
 * jitterd only reads it.
 *
 * Threads: one thread per probe calls record (the loop's thread); open and close from any one
 * thread, not concurrently with record on the same probe. */
#ifndef JITTERD_LOOP_PROBE_H
#define JITTERD_LOOP_PROBE_H

/* Each part includes loop_probe_layout.h first, whose feature macro comes before any system header. */
#include <jitterd/loop_probe_checks.h>
#include <jitterd/loop_probe_layout.h>
#include <jitterd/loop_probe_open.h>
#include <jitterd/loop_probe_record.h>

#endif /* JITTERD_LOOP_PROBE_H */
