// SPDX-License-Identifier: Apache-2.0
#include "host/cpu_counter.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace jitterd {

CpuCounter::~CpuCounter() {
  if (fd_ >= 0) ::close(fd_);
}

CpuCounter::CpuCounter(CpuCounter&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

CpuCounter& CpuCounter::operator=(CpuCounter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

CpuCounter CpuCounter::open(const PmuEvent& event, int cpu, std::string* why) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = event.type;
  attr.config = event.config;
  // Counting only: no sample period, no ring, so the counter itself never interrupts its CPU.
  const long fd = ::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    if (why) {
      const int err = errno;
      *why = "perf_event_open(type " + std::to_string(event.type) + ", config " + std::to_string(event.config) +
             ", cpu " + std::to_string(cpu) + "): " + std::strerror(err);
      if (err == EACCES || err == EPERM) *why += " (needs CAP_PERFMON or kernel.perf_event_paranoid <= 0)";
    }
    return CpuCounter{};
  }
  return CpuCounter(static_cast<int>(fd));
}

std::optional<std::uint64_t> CpuCounter::read() const {
  if (fd_ < 0) return std::nullopt;
  std::uint64_t value = 0;
  if (::read(fd_, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) return std::nullopt;
  return value;
}

std::optional<CycleCounts> CycleCounters::read() const {
  const std::optional<std::uint64_t> a = actual.read(), r = reference.read();
  if (!a || !r) return std::nullopt;
  return CycleCounts{*a, *r};
}

CycleCounters open_cycle_counters(const PmuEvent& aperf, const PmuEvent& mperf, int cpu, std::string* why) {
  CycleCounters counters;
  counters.actual = CpuCounter::open(aperf, cpu, why);
  if (counters.actual.is_open()) counters.reference = CpuCounter::open(mperf, cpu, why);
  if (!counters.reference.is_open()) counters.actual = CpuCounter{};
  return counters;
}

}  // namespace jitterd
