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
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "host/attribution.h"
#include "host/text.h"

namespace jitterd {
namespace {

// The decimal number after `key` ("offset:") in `text`, up to the next ';'.
std::optional<std::size_t> number_after(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t from = at + key.size();
  const std::string_view digits = trim(text.substr(from, text.find(';', from) - from));
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

// "field:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;" with "field:" removed.
std::optional<TraceField> parse_field(std::string_view line) {
  const auto semicolon = line.find(';');
  if (semicolon == std::string_view::npos) return std::nullopt;
  const std::string_view declaration = trim(line.substr(0, semicolon));
  const std::string_view rest = line.substr(semicolon + 1);
  TraceField field;
  field.data_loc = declaration.substr(0, 10) == "__data_loc";
  const auto space = declaration.find_last_of(" \t");
  std::string_view name = space == std::string_view::npos ? declaration
                                                           : declaration.substr(space + 1);
  name = name.substr(0, name.find('['));  // "prev_comm[16]" is prev_comm
  const auto offset = number_after(rest, "offset:");
  const auto size = number_after(rest, "size:");
  if (name.empty() || !offset || !size) return std::nullopt;
  field.name = std::string(name);
  field.offset = *offset;
  field.size = *size;
  field.is_signed = number_after(rest, "signed:").value_or(0) != 0;
  return field;
}

template <typename T>
T load(std::span<const std::byte> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

std::optional<std::int64_t> read_integer(std::span<const std::byte> raw, const TraceField* field) {
  if (field == nullptr || field->offset + field->size > raw.size()) return std::nullopt;
  switch (field->size) {
    case 1:
      return field->is_signed ? std::int64_t{load<std::int8_t>(raw, field->offset)}
                              : std::int64_t{load<std::uint8_t>(raw, field->offset)};
    case 2:
      return field->is_signed ? std::int64_t{load<std::int16_t>(raw, field->offset)}
                              : std::int64_t{load<std::uint16_t>(raw, field->offset)};
    case 4:
      return field->is_signed ? std::int64_t{load<std::int32_t>(raw, field->offset)}
                              : std::int64_t{load<std::uint32_t>(raw, field->offset)};
    case 8:
      return load<std::int64_t>(raw, field->offset);
    default:
      return std::nullopt;
  }
}

// A char[N] field, or a __data_loc string; either stops at the first NUL.
std::optional<std::string> read_string(std::span<const std::byte> raw, const TraceField* field) {
  if (field == nullptr || field->offset + field->size > raw.size()) return std::nullopt;
  std::size_t offset = field->offset;
  std::size_t length = field->size;
  if (field->data_loc) {
    if (field->size != 4) return std::nullopt;
    const auto loc = load<std::uint32_t>(raw, field->offset);
    offset = loc & 0xffff;
    length = loc >> 16;
    if (offset + length > raw.size()) return std::nullopt;
  }
  const auto* text = reinterpret_cast<const char*>(raw.data() + offset);
  return std::string(text, ::strnlen(text, length));
}

// The names of the softirq vectors, as the softirq_entry format's print fmt lists them.
constexpr std::array<std::string_view, 10> softirq_names = {
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"};

std::string_view vector_description(TraceEventKind kind) {
  switch (kind) {
    case TraceEventKind::local_timer: return "local timer";
    case TraceEventKind::reschedule_ipi: return "rescheduling interrupt";
    case TraceEventKind::call_function_ipi: return "function call interrupt";
    case TraceEventKind::call_function_single_ipi: return "single function call interrupt";
    default: return "irq work";
  }
}

// Fills number, name and detail from the raw entry; false when a field is missing.
bool decode_payload(std::span<const std::byte> raw, const Tracepoint& tracepoint,
                    TraceEvent& event) {
  const TracepointFormat& format = tracepoint.format;
  switch (tracepoint.kind) {
    case TraceEventKind::irq: {
      const auto irq = read_integer(raw, format.find("irq"));
      auto name = read_string(raw, format.find("name"));
      if (!irq || !name) return false;
      event.number = static_cast<int>(*irq);
      event.name = std::move(*name);
      event.detail = "irq " + std::to_string(event.number) + " " + event.name;
      return true;
    }
    case TraceEventKind::softirq: {
      const auto vec = read_integer(raw, format.find("vec"));
      if (!vec) return false;
      event.number = static_cast<int>(*vec);
      event.name = *vec >= 0 && *vec < std::int64_t{softirq_names.size()}
                       ? std::string(softirq_names[static_cast<std::size_t>(*vec)])
                       : "softirq " + std::to_string(*vec);
      event.detail = event.name;
      return true;
    }
    case TraceEventKind::sched_switch: {
      const auto pid = read_integer(raw, format.find("next_pid"));
      auto comm = read_string(raw, format.find("next_comm"));
      if (!pid || !comm) return false;
      event.number = static_cast<int>(*pid);
      event.name = std::move(*comm);
      event.detail = "switch to " + event.name;
      return true;
    }
    default: {
      const auto vector = read_integer(raw, format.find("vector"));
      if (!vector) return false;
      event.number = static_cast<int>(*vector);
      event.detail = std::string(vector_description(tracepoint.kind));
      return true;
    }
  }
}

// The fields decode_payload() reads, checked by probe() so that decoding cannot fail later.
std::vector<std::string_view> fields_needed(TraceEventKind kind) {
  switch (kind) {
    case TraceEventKind::irq: return {"irq", "name"};
    case TraceEventKind::softirq: return {"vec"};
    case TraceEventKind::sched_switch: return {"next_comm", "next_pid"};
    default: return {"vector"};
  }
}

void copy_out(std::span<const std::byte> ring, std::uint64_t position, std::byte* out,
              std::size_t length) {
  const std::size_t offset = position & (ring.size() - 1);
  const std::size_t first = std::min(length, ring.size() - offset);
  std::memcpy(out, ring.data() + offset, first);
  std::memcpy(out + first, ring.data(), length - first);
}

constexpr std::size_t header_bytes = sizeof(perf_event_header);
constexpr std::size_t raw_offset = 36;  // see decode_sample() in the header

}  // namespace

const TraceField* TracepointFormat::find(std::string_view name) const {
  for (const TraceField& field : fields)
    if (field.name == name) return &field;
  return nullptr;
}

TracepointFormat parse_tracepoint_format(std::string_view format_text) {
  TracepointFormat format;
  while (!format_text.empty()) {
    const auto newline = format_text.find('\n');
    const std::string_view line = trim(format_text.substr(0, newline));
    format_text = newline == std::string_view::npos ? "" : format_text.substr(newline + 1);
    if (line.substr(0, 3) == "ID:") {
      int id = -1;
      const std::string_view digits = trim(line.substr(3));
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
      if (ec == std::errc() && end == digits.data() + digits.size()) format.id = id;
    } else if (line.substr(0, 6) == "field:") {
      if (auto field = parse_field(line.substr(6))) format.fields.push_back(std::move(*field));
    }
  }
  return format;
}

std::optional<TraceEvent> decode_sample(std::span<const std::byte> record,
                                        const std::vector<Tracepoint>& tracepoints) {
  if (record.size() < raw_offset) return std::nullopt;
  if (load<std::uint32_t>(record, 0) != PERF_RECORD_SAMPLE) return std::nullopt;
  const std::size_t size = load<std::uint16_t>(record, 6);
  if (size < raw_offset || size > record.size()) return std::nullopt;
  const std::size_t raw_size = load<std::uint32_t>(record, 32);
  if (raw_offset + raw_size > size || raw_size < 2) return std::nullopt;
  const std::span<const std::byte> raw = record.subspan(raw_offset, raw_size);

  const int type = load<std::uint16_t>(raw, 0);  // common_type, the tracepoint's ID
  const auto tracepoint = std::find_if(tracepoints.begin(), tracepoints.end(),
                                       [&](const Tracepoint& t) { return t.format.id == type; });
  if (tracepoint == tracepoints.end()) return std::nullopt;

  TraceEvent event;
  event.tid = static_cast<int>(load<std::uint32_t>(record, 12));
  event.time_ns = load<std::uint64_t>(record, 16);
  event.cpu = static_cast<int>(load<std::uint32_t>(record, 24));
  event.kind = tracepoint->kind;
  if (!decode_payload(raw, *tracepoint, event)) return std::nullopt;
  return event;
}

std::optional<std::uint64_t> decode_lost(std::span<const std::byte> record) {
  if (record.size() < header_bytes + 16) return std::nullopt;
  if (load<std::uint32_t>(record, 0) != PERF_RECORD_LOST) return std::nullopt;
  return load<std::uint64_t>(record, header_bytes + 8);
}

std::uint64_t read_ring(std::span<const std::byte> ring, std::uint64_t tail, std::uint64_t head,
                        std::vector<std::byte>& scratch,
                        const std::function<void(std::span<const std::byte>)>& visit) {
  while (head - tail >= header_bytes) {
    std::byte header[header_bytes];
    copy_out(ring, tail, header, header_bytes);
    const std::size_t size = load<std::uint16_t>(header, 6);
    if (size < header_bytes || size > head - tail) break;
    const std::size_t offset = tail & (ring.size() - 1);
    if (offset + size <= ring.size()) {
      visit(ring.subspan(offset, size));
    } else {
      scratch.resize(size);
      copy_out(ring, tail, scratch.data(), size);
      visit(scratch);
    }
    tail += size;
  }
  return tail;
}

std::vector<EventRange> match_interruptions(const std::vector<TimedInterval>& intervals,
                                            const std::vector<TraceEvent>& events,
                                            std::uint64_t slack_ns) {
  std::vector<EventRange> matches;
  matches.reserve(intervals.size());
  std::size_t low = 0;   // first event not before the current window; only moves forward
  std::size_t high = 0;  // first event after the previous window
  std::uint64_t previous_to = 0;
  for (const TimedInterval& interval : intervals) {
    const std::uint64_t from = interval.start_ns > slack_ns ? interval.start_ns - slack_ns : 0;
    const std::uint64_t to = interval.end_ns + slack_ns;
    while (low < events.size() && events[low].time_ns < from) ++low;
    // A window ending before the previous one (nested intervals) rescans from `low`.
    if (to < previous_to || high < low) high = low;
    while (high < events.size() && events[high].time_ns <= to) ++high;
    previous_to = to;
    matches.push_back({low, high});
  }
  return matches;
}

std::string_view cause_of_event(const TraceEvent& event) {
  switch (event.kind) {
    case TraceEventKind::irq: return cause_of("irq", std::to_string(event.number), event.name);
    case TraceEventKind::softirq: return cause_of("softirq", event.name, event.name);
    case TraceEventKind::sched_switch: return preempted_cause;
    case TraceEventKind::local_timer: return cause_names[0];     // timer
    case TraceEventKind::reschedule_ipi: return cause_names[1];  // ipi_resched
    case TraceEventKind::call_function_ipi:
    case TraceEventKind::call_function_single_ipi: return cause_names[2];  // ipi_call
    case TraceEventKind::irq_work: return cause_names[5];                  // other_irq
  }
  return cause_names[5];
}

// ---- the reader ----

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

TraceAvailability TraceEventReader::probe(const HostReader& host) {
  TraceAvailability result;
  constexpr std::array<std::string_view, 2> candidates = {"kernel/tracing/events",
                                                          "kernel/debug/tracing/events"};
  std::string_view events_dir;
  for (const std::string_view candidate : candidates) {
    // tracefs is mode 0700: tell "not mounted" from "not root", which need different fixes.
    std::error_code error;
    const auto status = std::filesystem::status(host.sys_path(candidate), error);
    if (error == std::errc::permission_denied) {
      result.reason = host.sys_path(candidate).string() + ": " + error.message() +
                      " (tracefs is readable by root only)";
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
  result.events_dir = host.sys_path(events_dir);
  for (const TracepointSpec& spec : traced_tracepoints) {
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
    for (const std::string_view field : fields_needed(spec.kind))
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
  return " (CPU-wide tracepoint events with raw data need CAP_PERFMON or CAP_SYS_ADMIN, or "
         "kernel.perf_event_paranoid at -1; " +
         host.proc_path(paranoid).string() + " is " +
         host.read_proc(paranoid).value_or("unreadable") + ")";
}

int open_tracepoint(const Tracepoint& tracepoint, int cpu, std::size_t ring_bytes) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = static_cast<std::uint64_t>(tracepoint.format.id);
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
  // The samplers' interruptions are placed on CLOCK_MONOTONIC_RAW; perf's default clock is not.
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC_RAW;
  // Each wakeup is an irq_work interrupt on the traced CPU; nobody waits on the ring, so ask for
  // the fewest the kernel gives: one per ring's worth of data written.
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<std::uint32_t>(ring_bytes);
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
                                    PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

TraceEventReader::TraceEventReader(const HostReader& host, const std::vector<int>& cpus,
                                   std::size_t ring_pages) {
  if (ring_pages == 0 || (ring_pages & (ring_pages - 1)) != 0)
    throw std::runtime_error("trace ring_pages must be a power of two, got " +
                             std::to_string(ring_pages));
  TraceAvailability availability = probe(host);
  if (!availability.available)
    throw std::runtime_error("kernel tracepoints unavailable: " + availability.reason);
  tracepoints_ = std::move(availability.tracepoints);

  const auto page_bytes = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  for (const int cpu : cpus) {
    auto ring = std::make_unique<CpuRing>();
    ring->cpu = cpu;
    ring->page_bytes = page_bytes;
    for (const Tracepoint& tracepoint : tracepoints_) {
      const std::string what = "tracepoint " + tracepoint.path + " (id " +
                               std::to_string(tracepoint.format.id) + ") on CPU " +
                               std::to_string(cpu);
      const int fd = open_tracepoint(tracepoint, cpu, ring_pages * page_bytes);
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
          throw std::runtime_error("mmap of the " + std::to_string(1 + ring_pages) +
                                   "-page perf ring of " + what + ": " + std::strerror(errno));
      } else if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fds.front()) != 0) {
        throw std::runtime_error("PERF_EVENT_IOC_SET_OUTPUT of " + what + " into the ring of " +
                                 tracepoints_.front().path + ": " + std::strerror(errno));
      }
    }
    rings_.push_back(std::move(ring));
  }
}

TraceEventReader::~TraceEventReader() = default;

std::vector<TraceEvent> TraceEventReader::drain() {
  std::vector<TraceEvent> events;
  const auto visit = [&](std::span<const std::byte> record) {
    if (auto event = decode_sample(record, tracepoints_)) {
      events.push_back(std::move(*event));
    } else if (const auto lost = decode_lost(record)) {
      lost_ += *lost;
    } else if (load<std::uint32_t>(record, 0) == PERF_RECORD_SAMPLE) {
      ++undecoded_;
    }
  };
  for (const auto& ring : rings_) {
    if (ring->base == MAP_FAILED) continue;
    auto* meta = static_cast<perf_event_mmap_page*>(ring->base);
    // Acquire pairs with the kernel's release of data_head: the records before it are written.
    const std::uint64_t head =
        std::atomic_ref<__u64>(meta->data_head).load(std::memory_order_acquire);
    const std::uint64_t tail = meta->data_tail;  // only this thread writes it
    const auto* base = static_cast<const std::byte*>(ring->base);
    const std::span<const std::byte> data(base + ring->page_bytes,
                                          ring->mapped_bytes - ring->page_bytes);
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
