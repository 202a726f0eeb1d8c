// SPDX-License-Identifier: Apache-2.0
/* jitterd loop probe: the rules jitterd_loop_open applies to a probe's name and labels, and the
 * errno it leaves for each broken rule, with jitterd_loop_strerror's text for it (naming the
 * argument and the rule). The name and label rules are jitterd's reader's (kLoopReservedLabels,
 * docs/loops.md): a segment the library writes is never refused for them.
 *
 * Part of the header-only C11 (and C++17 or later) library: applications include
 * <jitterd/loop_probe.h>, which includes this. Pure functions of their arguments: any thread. */
#ifndef JITTERD_LOOP_PROBE_CHECKS_H
#define JITTERD_LOOP_PROBE_CHECKS_H

/* First: its feature macro comes before any system header. */
#include <jitterd/loop_probe_layout.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* JITTERD_LOOP_PROBE_CHECKS_H */
