// SPDX-License-Identifier: Apache-2.0
/* The loop probe's failures, in strict ISO C11 as an application compiles it: each cause of a
 * failed open has its own errno and a text naming the argument and its rule; a live writer's name
 * is refused (EEXIST) and a dead one's replaced; the record, flush and close calls accept NULL.
 *
 *   open_failures arguments DIR    argument rules, a missing directory, EEXIST, a dead writer, NULL
 *   open_failures unwritable DIR   DIR made read-only (as root: opened by user nobody): EACCES
 *   open_failures full DIR         DIR a tmpfs too small for a segment: ENOSPC, and no SIGBUS
 *
 * Exit 0 when every check passed, 1 otherwise (each check prints one line). */
#include <jitterd/loop_probe.h>

#include <sys/wait.h>

static int failures;

static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

/* open(...) fails with errno WANT and a text holding PART; the NULL it returns is usable. */
static void expect_failure(jitterd_loop_probe *probe, int want, const char *part, const char *what) {
  const int error = errno;
  char line[512];
  snprintf(line, sizeof line, "%s: NULL with errno %d (want %d), \"%s\"", what, error, want,
           jitterd_loop_strerror(error));
  check(probe == NULL && error == want && strstr(jitterd_loop_strerror(error), part) != NULL, line);
  jitterd_loop_record(probe);
  jitterd_loop_record_at(probe, 12345);
  jitterd_loop_flush(probe);
  jitterd_loop_close(probe);
}

static jitterd_loop_probe *open_in(const char *directory, const char *name, int cpu, const char *labels) {
  struct jitterd_loop_options options;
  memset(&options, 0, sizeof options);
  options.directory = directory;
  options.counter = JITTERD_LOOP_COUNTER_CALLER; /* no 20 ms measurement */
  options.hertz = 1000000000u;
  errno = 0;
  return jitterd_loop_open(name, cpu, labels, &options);
}

static void arguments(const char *dir) {
  static const char *const bad_names[] = {"rx 0", "", ".hidden", "a/b",
                                          "0123456789012345678901234567890123456789012345678901234567890123"};
  static const char *const bad_labels[] = {
      "nic",           "cpu=3",       "loop=a",     "le=0.5",
      "quantile=0.99", "cause=timer", "instance=x", "job=y",
      "__x=1",         "1a=b",        "a=b,",       "a=b,a=c",
      "a=\"q\"",       "a-b=c",       "a=tab\t",    "a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9"};
  struct jitterd_loop_options options;
  char missing[4096], path[4096];
  jitterd_loop_probe *probe, *second;
  size_t i;
  pid_t child;
  for (i = 0; i < sizeof bad_names / sizeof bad_names[0]; ++i)
    expect_failure(open_in(dir, bad_names[i], 0, NULL), EINVAL, "name:", "a bad name");
  expect_failure(open_in(dir, NULL, 0, NULL), EINVAL, "name:", "a NULL name");
  for (i = 0; i < sizeof bad_labels / sizeof bad_labels[0]; ++i)
    expect_failure(open_in(dir, "rx0", 0, bad_labels[i]), EILSEQ, "labels:", bad_labels[i]);
  expect_failure(open_in(dir, "rx0", -1, NULL), ERANGE, "cpu:", "CPU -1");
  expect_failure(open_in(dir, "rx0", 70000, NULL), ERANGE, "cpu:", "CPU 70000");
  memset(&options, 0, sizeof options);
  options.directory = dir;
  options.ring_capacity = JITTERD_LOOP_MAX_RING + 1;
  errno = 0;
  expect_failure(jitterd_loop_open("rx0", 0, NULL, &options), EDOM, "options:", "a ring over the maximum");
  snprintf(missing, sizeof missing, "%s/no/such/directory", dir);
  expect_failure(open_in(missing, "rx0", 0, NULL), ENOENT, "directory: does not exist", "a missing directory");

  probe = open_in(dir, "rx0", 0, "nic=eth0,queue=0");
  check(probe != NULL, "good arguments open");
  if (probe == NULL) return;
  expect_failure(open_in(dir, "rx0", 1, NULL), EEXIST, "name: a running process", "the name of a live writer");
  child = fork();
  if (child == 0) {
    /* a writer that dies without closing: its segment stays behind */
    jitterd_loop_probe *dead = open_in(dir, "rx1", 1, NULL);
    _exit(dead != NULL ? 0 : 1);
  }
  check(child > 0 && waitpid(child, NULL, 0) == child, "a child opened rx1 and exited without closing");
  snprintf(path, sizeof path, "%s/jitterd-loop.rx1", dir);
  check(access(path, F_OK) == 0, "the dead writer's segment is still there");
  second = open_in(dir, "rx1", 1, NULL);
  check(second != NULL, "a dead writer's name opens again (its segment replaced)");
  jitterd_loop_close(second);
  check(access(path, F_OK) != 0, "close removed the replacement");
  /* a writer that exited but is not reaped yet (a zombie) is dead too */
  child = fork();
  if (child == 0) _exit(open_in(dir, "rx2", 1, NULL) != NULL ? 0 : 1);
  {
    siginfo_t info; /* until the child has exited, leaving it unreaped */
    check(child > 0 && waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) == 0 && info.si_status == 0,
          "a child opened rx2 and exited, not reaped yet");
  }
  second = open_in(dir, "rx2", 1, NULL);
  check(second != NULL, "a zombie writer's name opens again");
  jitterd_loop_close(second);
  check(child > 0 && waitpid(child, NULL, 0) == child, "the zombie reaped");
  jitterd_loop_close(probe);
}

static void unwritable(const char *dir) {
  pid_t child;
  int status = 0;
  if (chmod(dir, 0555) != 0) {
    perror("chmod");
    ++failures;
    return;
  }
  if (geteuid() != 0) {
    expect_failure(open_in(dir, "rx0", 0, NULL), EACCES, "directory: this process may not",
                   "a read-only directory");
    return;
  }
  /* root writes anywhere: the open is tried by user nobody */
  child = fork();
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    expect_failure(open_in(dir, "rx0", 0, NULL), EACCES, "directory: this process may not",
                   "a read-only directory, as user nobody");
    _exit(failures == 0 ? 0 : 1);
  }
  check(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the unprivileged child saw EACCES");
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s arguments|unwritable|full DIR\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "arguments") == 0) {
    arguments(argv[2]);
  } else if (strcmp(argv[1], "unwritable") == 0) {
    unwritable(argv[2]);
  } else if (strcmp(argv[1], "full") == 0) {
    expect_failure(open_in(argv[2], "rx0", 0, NULL), ENOSPC, "no space left", "a full tmpfs");
  } else {
    fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[1]);
    return 2;
  }
  return failures == 0 ? 0 : 1;
}
