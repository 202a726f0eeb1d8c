// SPDX-License-Identifier: Apache-2.0
/* The smallest use of the loop probe, in strict ISO C11 (no feature macro defined before the
 * header): open, record a million iterations, close. A failed open says why and the loop runs
 * without the probe (every call accepts NULL), as an application's must. Exits 0 when the probe
 * opened and recorded, 1 when it ran without it.
 *
 *   loop_probe_minimal DIRECTORY */
#include <jitterd/loop_probe.h>

int main(int argc, char **argv) {
  struct jitterd_loop_options options;
  jitterd_loop_probe *probe;
  uint64_t samples;
  int i;
  memset(&options, 0, sizeof options);
  options.directory = argc > 1 ? argv[1] : NULL;
  probe = jitterd_loop_open("minimal", 0, NULL, &options);
  if (probe == NULL)
    fprintf(stderr, "loop_probe_minimal: running without the probe: %s\n", jitterd_loop_strerror(errno));
  for (i = 0; i < 1000000; ++i) jitterd_loop_record(probe);
  jitterd_loop_flush(probe);
  samples = probe != NULL ? JITTERD_LOOP_LOAD(probe->segment->samples) : 0;
  jitterd_loop_close(probe);
  printf("loop_probe_minimal: %llu gaps\n", (unsigned long long)samples);
  return samples == 999999 ? 0 : 1;
}
