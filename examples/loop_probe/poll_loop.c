// SPDX-License-Identifier: Apache-2.0
/* A busy-polling loop on a UDP socket, instrumented with the jitterd loop probe: what an
 * application does (poll, handle what came, poll again), with one record call per iteration.
 *
 *   poll_loop NAME CPU SECONDS [LABELS]
 *
 * Pins itself to CPU (a warning if it cannot), opens the probe NAME in $JITTERD_LOOP_DIR (or
 * /dev/shm), polls a non-blocking socket on 127.0.0.1 for SECONDS (0: until killed) and prints
 * one line of what it recorded. When the probe cannot open, it says why and polls without it:
 * the record calls accept NULL. Built and run by the tests (tests/integration/loop_test.py). */
#define _GNU_SOURCE
#include <jitterd/loop_probe.h>

#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

static int pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set);
}

static uint64_t monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

int main(int argc, char **argv) {
  struct sockaddr_in address;
  jitterd_loop_probe *probe;
  char buffer[2048];
  uint64_t end, handled = 0, iteration;
  double seconds;
  int cpu, fd;
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: %s NAME CPU SECONDS [LABELS]\n", argv[0]);
    return 2;
  }
  cpu = atoi(argv[2]);
  seconds = atof(argv[3]);
  if (pin_to(cpu) != 0) fprintf(stderr, "poll_loop: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
  fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    perror("poll_loop: socket");
    return 1;
  }
  probe = jitterd_loop_open(argv[1], cpu, argc == 5 ? argv[4] : NULL, NULL);
  if (probe == NULL)
    printf("poll_loop: %s on CPU %d, without the loop probe: %s\n", argv[1], cpu, jitterd_loop_strerror(errno));
  else
    printf("poll_loop: %s on CPU %d, segment %s\n", argv[1], cpu, probe->path);
  fflush(stdout);
  /* the clock is looked at every 4096 iterations: a few nanoseconds among millions */
  end = seconds > 0 ? monotonic_ns() + (uint64_t)(seconds * 1e9) : UINT64_MAX;
  for (iteration = 1;; ++iteration) {
    if (recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) > 0) ++handled;
    jitterd_loop_record(probe);
    if ((iteration & 4095) == 0 && monotonic_ns() >= end) break;
  }
  jitterd_loop_flush(probe);
  if (probe != NULL)
    printf("poll_loop: %s samples=%llu interruptions=%llu handled=%llu\n", argv[1], (unsigned long long)probe->n,
           (unsigned long long)probe->interruptions, (unsigned long long)handled);
  else
    printf("poll_loop: %s iterations=%llu handled=%llu, not recorded\n", argv[1], (unsigned long long)iteration,
           (unsigned long long)handled);
  jitterd_loop_close(probe);
  close(fd);
  return 0;
}
