// SPDX-License-Identifier: Apache-2.0
// The kernel side of trace_events.h: finding tracefs, opening the perf events, draining rings.
#include "host/trace_events.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "host/text.h"

namespace jitterd {

struct TraceEventReader::CpuRing {
  int cpu = -1;
  std::vector<int> fds;
  void* base = MAP_FAILED;
  std::size_t mapped_bytes = 0;
  std::size_t page_bytes = 0;

  ~CpuRing() {
    if (base != MAP_FAILED) ::munmap(base, mapped_bytes);
    for (const int fd : fds) ::close(fd);
  }
};

TraceAvailability TraceEventReader::probe(const HostReader& host, std::span<const TracepointSpec> specs) {
  TraceAvailability result;
  constexpr std::array<std::string_view, 2> candidates = {"kernel/tracing/events", "kernel/debug/tracing/events"};
  std::string_view events_dir;
  for (const std::string_view candidate : candidates) {
    // tracefs is mode 0700: tell "not mounted" from "not root", which need different fixes.
    std::error_code error;
    const auto status = std::filesystem::status(host.sys_path(candidate), error);
    if (error == std::errc::permission_denied) {
      result.reason = host.sys_path(candidate).string() + ": " + error.message() +
                      " (tracefs is root's, mode 0700: root or CAP_DAC_READ_SEARCH)";
      return result;
    }
    if (!error && std::filesystem::is_directory(status)) {
      events_dir = candidate;
      break;
    }
  }
  if (events_dir.empty()) {
    result.reason = "no tracefs: " + host.sys_path(candidates[0]).string() + " and " +
                    host.sys_path(candidates[1]).string() +
                    " are missing (mount -t tracefs nodev /sys/kernel/tracing)";
    return result;
  }
  for (const TracepointSpec& spec : specs) {
    const std::string relative = std::string(events_dir) + "/" + std::string(spec.path) + "/format";
    const auto text = host.read_sys(relative);
    if (!text) {
      if (!spec.required) {
        result.missing.emplace_back(spec.path);
        continue;
      }
      result.reason = host.sys_path(relative).string() + ": missing or unreadable";
      result.tracepoints.clear();
      return result;
    }
    Tracepoint tracepoint{std::string(spec.path), spec.kind, parse_tracepoint_format(*text)};
    std::string problem;
    if (tracepoint.format.id < 0) problem = "no \"ID:\" line";
    for (const std::string_view field : trace_fields_needed(spec.kind))
      if (problem.empty() && tracepoint.format.find(field) == nullptr)
        problem = "no field \"" + std::string(field) + "\"";
    if (!problem.empty()) {
      result.reason = host.sys_path(relative).string() + ": " + problem;
      result.tracepoints.clear();
      return result;
    }
    result.tracepoints.push_back(std::move(tracepoint));
  }
  result.available = true;
  return result;
}

namespace {

// Only the capability or the paranoid level explains a refusal; say which and what is set.
std::string open_error_hint(int error, const HostReader& host) {
  if (error != EACCES && error != EPERM) return "";
  constexpr std::string_view paranoid = "sys/kernel/perf_event_paranoid";
  // Debian's and Ubuntu's kernels add level 3 (their default), which only CAP_SYS_ADMIN passes.
  return " (CPU-wide tracepoint events with raw data need CAP_PERFMON with kernel.perf_event_paranoid at "
         "most 2, CAP_SYS_ADMIN at any level, or the level at -1; " +
         host.proc_path(paranoid).string() + " is " + host.read_proc(paranoid).value_or("unreadable") + ")";
}

bool is_required(std::span<const TracepointSpec> specs, std::string_view path) {
  return std::any_of(specs.begin(), specs.end(),
                     [&](const TracepointSpec& s) { return s.path == path && s.required; });
}

int open_tracepoint(const Tracepoint& tracepoint, int cpu, std::size_t ring_bytes, clockid_t clock) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = static_cast<std::uint64_t>(tracepoint.format.id);
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
  // The engines' records are on CLOCK_MONOTONIC (the BPF program's clock, so both engines' records
  // match a gap alike); perf's default clock is not.
  attr.use_clockid = 1;
  attr.clockid = clock;
  // Each wakeup is an irq_work interrupt on the traced CPU; nobody waits on the ring, so ask for
  // the fewest the kernel gives: one per ring's worth of data written.
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<std::uint32_t>(ring_bytes);
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

TraceEventReader::TraceEventReader(const HostReader& host, const std::vector<int>& cpus, std::size_t ring_pages,
                                   std::span<const TracepointSpec> specs, clockid_t clock) {
  if (ring_pages == 0 || (ring_pages & (ring_pages - 1)) != 0)
    throw std::runtime_error("trace ring_pages must be a power of two, got " + std::to_string(ring_pages));
  TraceAvailability availability = probe(host, specs);
  if (!availability.available) throw std::runtime_error("tracepoints unavailable: " + availability.reason);
  tracepoints_ = std::move(availability.tracepoints);
  missing_ = std::move(availability.missing);

  const auto page_bytes = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  ring_bytes_ = ring_pages * page_bytes;
  // An optional tracepoint the kernel refuses to sample is left out as missing: irq_work_exit,
  // for one, which perf refuses (TRACE_EVENT_PERF_PERM) since its own wakeups are irq_work.
  std::vector<bool> refused(tracepoints_.size(), false);
  for (const int cpu : cpus) {
    auto ring = std::make_unique<CpuRing>();
    ring->cpu = cpu;
    ring->page_bytes = page_bytes;
    for (std::size_t i = 0; i < tracepoints_.size(); ++i) {
      const Tracepoint& tracepoint = tracepoints_[i];
      if (refused[i]) continue;
      const std::string what = "tracepoint " + tracepoint.path + " (id " + std::to_string(tracepoint.format.id) +
                               ") on CPU " + std::to_string(cpu);
      const int fd = open_tracepoint(tracepoint, cpu, ring_bytes_, clock);
      if (fd < 0 && !ring->fds.empty() && !is_required(specs, tracepoint.path)) {
        refused[i] = true;
        continue;
      }
      if (fd < 0) {
        const int error = errno;
        throw std::runtime_error("perf_event_open of " + what + ": " + std::strerror(error) +
                                 open_error_hint(error, host));
      }
      ring->fds.push_back(fd);
      if (ring->fds.size() == 1) {
        // One metadata page, then the data area.
        ring->mapped_bytes = (1 + ring_pages) * page_bytes;
        ring->base = ::mmap(nullptr, ring->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (ring->base == MAP_FAILED)
          throw std::runtime_error("mmap of the " + std::to_string(1 + ring_pages) + "-page perf ring of " + what +
                                   ": " + std::strerror(errno));
      } else if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fds.front()) != 0) {
        throw std::runtime_error("PERF_EVENT_IOC_SET_OUTPUT of " + what + " into the ring of " +
                                 tracepoints_.front().path + ": " + std::strerror(errno));
      }
    }
    rings_.push_back(std::move(ring));
  }
  // Left out of the list: no record of them comes, and an event's index is into what remains.
  std::vector<Tracepoint> kept;
  for (std::size_t i = 0; i < tracepoints_.size(); ++i) {
    if (refused[i])
      missing_.push_back(tracepoints_[i].path);
    else
      kept.push_back(std::move(tracepoints_[i]));
  }
  tracepoints_ = std::move(kept);
}

TraceEventReader::~TraceEventReader() = default;

std::vector<std::uint64_t> TraceEventReader::bytes_written() const {
  std::vector<std::uint64_t> out;
  for (const auto& ring : rings_) {
    if (ring->base == MAP_FAILED) {
      out.push_back(0);
      continue;
    }
    auto* meta = static_cast<perf_event_mmap_page*>(ring->base);
    out.push_back(std::atomic_ref<__u64>(meta->data_head).load(std::memory_order_acquire));
  }
  return out;
}

std::vector<TraceEvent> TraceEventReader::drain() {
  std::vector<TraceEvent> events;
  lost_by_ring_.resize(rings_.size());
  std::size_t current = 0;
  const auto visit = [&](std::span<const std::byte> record) {
    if (auto event = decode_sample(record, tracepoints_)) {
      events.push_back(std::move(*event));
    } else if (const auto lost = decode_lost(record)) {
      lost_by_ring_[current] += *lost;
    } else if (perf_event_header header{};
               record.size() >= sizeof header &&
               (std::memcpy(&header, record.data(), sizeof header), header.type == PERF_RECORD_SAMPLE)) {
      ++undecoded_;
    }
  };
  for (; current < rings_.size(); ++current) {
    const auto& ring = rings_[current];
    if (ring->base == MAP_FAILED) continue;
    auto* meta = static_cast<perf_event_mmap_page*>(ring->base);
    // Acquire pairs with the kernel's release of data_head: the records before it are written.
    const std::uint64_t head = std::atomic_ref<__u64>(meta->data_head).load(std::memory_order_acquire);
    const std::uint64_t tail = meta->data_tail;  // only this thread writes it
    const auto* base = static_cast<const std::byte*>(ring->base);
    const std::span<const std::byte> data(base + ring->page_bytes, ring->mapped_bytes - ring->page_bytes);
    std::uint64_t new_tail = read_ring(data, tail, head, scratch_, visit);
    if (new_tail != head) {
      ++undecoded_;  // a malformed header: skip to head rather than stall on it forever
      new_tail = head;
    }
    // Release: our reads of the records finish before the kernel may overwrite them.
    std::atomic_ref<__u64>(meta->data_tail).store(new_tail, std::memory_order_release);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.time_ns < b.time_ns; });
  return events;
}

}  // namespace jitterd
