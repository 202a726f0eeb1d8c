// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// What the watch's SMI reader (watch_smi.bpf.h) and its loader (watch/bpf_watch.cpp) share: a
// watched CPU's System Management Interrupt count as its own local timer interrupts read it, and
// the last few tick-to-tick intervals in which it grew, so an unexplained gap can be placed
// inside one. Plain C, included by the BPF program and by C++.
#ifndef JITTERD_WATCH_SMI_SHARED_H
#define JITTERD_WATCH_SMI_SHARED_H

#include "watch_bpf.h"

// Intervals kept per CPU (a power of two): SMIs are rare, and the loader reads every second.
#define JD_SMI_WINDOWS 16

// The shortest time between two reads of a CPU's counter: a read is an rdmsr, which in a KVM guest
// is a VM exit (microseconds) inside the watched CPU's tick; at most 100 a second, not one every
// tick (1,000 a second at HZ=1000). So an interval in which the count grew is at least this long.
#define JD_SMI_READ_PERIOD_NS 10000000ULL

// An interval between two reads (two local timer interrupts, JD_SMI_READ_PERIOD_NS or more apart)
// in which the count grew.
struct jd_smi_window {
  jd_u64 from_ns;  // bpf_ktime_get_ns (CLOCK_MONOTONIC) of the read before
  jd_u64 to_ns;    // of the read that saw the count grow
  jd_u64 smis;     // by how much
};

// One read of a CPU's APERF and MPERF.
struct jd_cycle_pair {
  jd_u64 actual;     // APERF (counts from when the loader opened it)
  jd_u64 reference;  // MPERF at the same read
};

// One CPU's reader state (a per-CPU array of one entry): its SMI counter and, where the loader
// opened them, its APERF and MPERF counters, read together at most every JD_SMI_READ_PERIOD_NS.
struct jd_smi_state {
  jd_u64 count;            // the SMI counter at the last read (counts from when the loader opened it)
  jd_u64 reads;            // SMI reads that succeeded
  jd_u64 read_errors;      // reads the kernel refused (no counter of this CPU in an array)
  jd_u64 last_read_ns;     // when the last read was (0: none yet)
  jd_u64 windows_written;  // intervals ever written: the latest is windows[(windows_written - 1) % JD_SMI_WINDOWS]
  struct jd_smi_window windows[JD_SMI_WINDOWS];
  jd_u64 smi_read_ns;  // when the last SMI read that succeeded was (a window's from_ns)
  // Reads of APERF and MPERF that succeeded; read n's pair is in cycles[n % 2], written before the
  // count is raised (an ordered add), so the loader's copy of this state, taken while the CPU may
  // be writing read n + 1 into the other slot, never pairs two reads.
  jd_u64 cycle_reads;
  struct jd_cycle_pair cycles[2];
};

#endif
