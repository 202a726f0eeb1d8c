// SPDX-License-Identifier: Apache-2.0
/* Many application loops from one process, for the web server's load benchmark and test: the
 * status pages of a daemon that reads 256 loops are what issue 35's audit loaded.
 *
 *   many_loops COUNT CPU SECONDS
 *
 * Opens COUNT loop probes (many0, many1, ...) in $JITTERD_LOOP_DIR (or /dev/shm), all of the loop
 * running on CPU, pins itself there, then records one iteration of each every millisecond for
 * SECONDS (0: until killed), so every loop is up and its window fills. Prints "ready" once all
 * are open. */
#define _GNU_SOURCE
#include <jitterd/loop_probe.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  jitterd_loop_probe **probes;
  struct timespec pause = {0, 1000000};
  struct timespec start, now;
  double seconds;
  int count, cpu, i;
  cpu_set_t set;
  char name[32];
  if (argc != 4) {
    fprintf(stderr, "usage: %s COUNT CPU SECONDS\n", argv[0]);
    return 2;
  }
  count = atoi(argv[1]);
  cpu = atoi(argv[2]);
  seconds = atof(argv[3]);
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("many_loops: pinning");
  probes = calloc((size_t)count, sizeof *probes);
  if (probes == NULL) return 1;
  for (i = 0; i < count; ++i) {
    snprintf(name, sizeof name, "many%d", i);
    probes[i] = jitterd_loop_open(name, cpu, "bench=web", NULL);
    if (probes[i] == NULL) {
      fprintf(stderr, "many_loops: cannot open the loop probe %s: %s\n", name, strerror(errno));
      return 1;
    }
  }
  printf("ready: %d loops on CPU %d\n", count, cpu);
  fflush(stdout);
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    for (i = 0; i < count; ++i) jitterd_loop_record(probes[i]);
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (seconds > 0 &&
        (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9 >= seconds)
      break;
  }
  for (i = 0; i < count; ++i) jitterd_loop_close(probes[i]);
  free(probes);
  return 0;
}
