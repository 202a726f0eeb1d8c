// SPDX-License-Identifier: Apache-2.0
/* The smallest use of the loop probe, in strict ISO C11 (no feature macro defined before the
 * header): open, record a million iterations, close. Exits 0 when the probe opened and recorded.
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
  if (probe == NULL) {
    perror("loop_probe_minimal");
    return 1;
  }
  for (i = 0; i < 1000000; ++i) jitterd_loop_record(probe);
  jitterd_loop_flush(probe);
  samples = JITTERD_LOOP_LOAD(probe->segment->samples);
  jitterd_loop_close(probe);
  printf("loop_probe_minimal: %llu gaps\n", (unsigned long long)samples);
  return samples == 999999 ? 0 : 1;
}
