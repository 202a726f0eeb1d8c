// SPDX-License-Identifier: Apache-2.0
#include "host/trace_format.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>

#include "host/softirqs.h"
#include "host/text.h"

namespace jitterd {
namespace {

// The decimal number after `key` ("offset:") in `text`, up to the next ';'.
std::optional<std::size_t> number_after(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t from = at + key.size();
  const std::string_view digits = trim(text.substr(from, text.find(';', from) - from));
  return parse_number<std::size_t>(digits);
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
  std::string_view name = space == std::string_view::npos ? declaration : declaration.substr(space + 1);
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
#define JD_SOFTIRQ_NAME(vector, cause) #vector,
constexpr std::array<std::string_view, JD_SOFTIRQ_COUNT> softirq_names = {JD_SOFTIRQS(JD_SOFTIRQ_NAME)};
#undef JD_SOFTIRQ_NAME

// An x86 vector's event name from its tracepoint's path ("irq_vectors/local_timer_entry":
// "local_timer"), as host/x86_vectors.h names it.
std::string vector_event(std::string_view path) {
  path.remove_prefix(std::min(path.size(), path.find('/') + 1));
  return std::string(path.substr(0, path.rfind('_')));
}

// Fills number, name and detail from the raw entry; false when a field is missing.
bool decode_payload(std::span<const std::byte> raw, const Tracepoint& tracepoint, TraceEvent& event) {
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
      const auto prev = read_integer(raw, format.find("prev_pid"));
      const auto state = read_integer(raw, format.find("prev_state"));
      if (!pid || !comm || !prev || !state) return false;
      event.number = static_cast<int>(*pid);
      event.name = std::move(*comm);
      event.prev_tid = static_cast<int>(*prev);
      event.value = *state;
      event.detail = "switch to " + event.name;
      return true;
    }
    case TraceEventKind::irq_exit:
    case TraceEventKind::softirq_exit: {
      const auto number =
          read_integer(raw, format.find(tracepoint.kind == TraceEventKind::irq_exit ? "irq" : "vec"));
      if (!number) return false;
      event.number = static_cast<int>(*number);
      return true;
    }
    case TraceEventKind::nmi: {
      const auto delta = read_integer(raw, format.find("delta_ns"));
      if (!delta) return false;
      event.value = *delta;
      return true;
    }
    case TraceEventKind::tlb_flush: {
      const auto reason = read_integer(raw, format.find("reason"));
      if (!reason) return false;
      event.number = static_cast<int>(*reason);
      return true;
    }
    case TraceEventKind::tick_stop: {
      const auto success = read_integer(raw, format.find("success"));
      const auto dependency = read_integer(raw, format.find("dependency"));
      if (!success || !dependency) return false;
      event.number = static_cast<int>(*success);
      event.value = *dependency;
      return true;
    }
    default: {
      const auto vector = read_integer(raw, format.find("vector"));
      if (!vector) return false;
      event.number = static_cast<int>(*vector);
      event.name = vector_event(tracepoint.path);
      event.detail = event.name;
      std::replace(event.detail.begin(), event.detail.end(), '_', ' ');
      return true;
    }
  }
}

void copy_out(std::span<const std::byte> ring, std::uint64_t position, std::byte* out, std::size_t length) {
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
      if (const auto id = parse_number<int>(trim(line.substr(3)))) format.id = *id;
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
  event.tracepoint = static_cast<std::size_t>(tracepoint - tracepoints.begin());
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

std::vector<TimedInterval> timed_intervals(std::span<const Interruption> interruptions,
                                           const std::optional<TickToClock>& to_clock) {
  std::vector<TimedInterval> intervals;
  intervals.reserve(interruptions.size());
  for (const Interruption& i : interruptions) {
    const std::uint64_t end = i.start_tick + i.duration_ticks;
    intervals.push_back(to_clock ? TimedInterval{(*to_clock)(i.start_tick), (*to_clock)(end)}
                                 : TimedInterval{i.start_tick, end});
  }
  return intervals;
}

std::vector<std::string_view> trace_fields_needed(TraceEventKind kind) {
  switch (kind) {
    case TraceEventKind::irq:
      return {"irq", "name"};
    case TraceEventKind::softirq:
      return {"vec"};
    case TraceEventKind::sched_switch:
      return {"next_comm", "next_pid", "prev_pid", "prev_state"};
    case TraceEventKind::irq_exit:
      return {"irq"};
    case TraceEventKind::softirq_exit:
      return {"vec"};
    case TraceEventKind::nmi:
      return {"delta_ns"};
    case TraceEventKind::tlb_flush:
      return {"reason"};
    case TraceEventKind::tick_stop:
      return {"success", "dependency"};
    default:
      return {"vector"};
  }
}

}  // namespace jitterd
