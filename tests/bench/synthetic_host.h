// SPDX-License-Identifier: Apache-2.0
// Synthetic machine trees for the scale benchmark (jitterd_scale_bench) and its unit test: the
// sysfs and procfs files a real x86 server of 2-8 sockets with SMT and several L3 domains per
// socket has, at the size such a machine has them (a /proc/interrupts of 1,000 IRQs by 1,024
// columns is about 11 MB), written into a scratch directory so that jitterd's real readers
// (HostReader rooted at it, the topology, cache, posture, interrupt and task readers) parse them.
// The counters can be advanced (write_counters) so that two readings differ as on a live machine.
// Not thread-safe; one thread builds and rewrites a tree.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "host/host_reader.h"

namespace jitterd::synthetic {

// CPU numbering as x86 Linux enumerates it: the first thread of every core, socket by socket and
// L3 domain by L3 domain, then the second threads in the same order (cpu N and N + cores are
// siblings).
struct HostShape {
  int sockets = 4;
  int l3_per_socket = 8;  // L3 domains (AMD CCX / CCD) per socket
  int cores_per_l3 = 16;
  int threads_per_core = 2;
  int device_irqs = 1000;  // numbered IRQs in /proc/interrupts and /proc/irq
  // Per-CPU kernel threads in /proc (cpuhp, migration, ksoftirqd, kworker/N:0H, ...).
  int kthreads_per_cpu = 4;
};

int shape_cores(const HostShape& shape);
int shape_cpus(const HostShape& shape);

struct CpuPlace {
  int socket = 0, l3 = 0, core = 0, thread = 0;  // l3 and core numbered machine-wide
};
CpuPlace place_of(const HostShape& shape, int cpu);

// The CPUs a tuned machine isolates (isolcpus=, nohz_full=): all but the two threads of the
// first core of each socket.
std::vector<int> isolated_cpus(const HostShape& shape);
// The others: housekeeping.
std::vector<int> housekeeping_cpus(const HostShape& shape);

class SyntheticHost {
 public:
  // Writes the whole tree under a new directory in `parent` (the system's temporary directory by
  // default); removed by the destructor.
  explicit SyntheticHost(HostShape shape, std::filesystem::path parent = std::filesystem::temp_directory_path());
  ~SyntheticHost();
  SyntheticHost(const SyntheticHost&) = delete;
  SyntheticHost& operator=(const SyntheticHost&) = delete;

  const HostShape& shape() const { return shape_; }
  HostReader reader() const { return HostReader(root_ / "sys", root_ / "proc"); }
  const std::filesystem::path& root() const { return root_; }

  // Rewrites /proc/interrupts, /proc/softirqs and /proc/stat with the counts of `generation`
  // (0 at construction): each generation adds a second's worth of ticks, IPIs, device interrupts
  // and softirqs.
  void write_counters(std::uint64_t generation);

  // Adds /proc/<pid>/task/<tid>/{stat,status,schedstat} for a process's threads pinned one per CPU (a
  // daemon's samplers): `tids[i]` runs on `cpus[i]`.
  void add_pinned_threads(pid_t pid, const std::string& comm, const std::vector<int>& cpus,
                          const std::vector<pid_t>& tids);

  // Bytes of /proc/interrupts as last written.
  std::uintmax_t interrupts_bytes() const;

 private:
  void write(const std::string& relative, const std::string& text) const;
  void write_sysfs() const;
  void write_cpu(int cpu) const;
  void write_procfs() const;
  void write_irq_dirs() const;
  void write_kthreads() const;

  HostShape shape_;
  std::filesystem::path root_;
};

}  // namespace jitterd::synthetic
