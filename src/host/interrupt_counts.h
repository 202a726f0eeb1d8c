// SPDX-License-Identifier: Apache-2.0
// Per-CPU interrupt and softirq counters from /proc/interrupts and /proc/softirqs, and the
// per-CPU differences between two readings: the raw material for explaining a window's gaps
// ("CPU 3 took 40 local timer interrupts and 12 from mlx5_comp3 while it lost 52 samples").
// Pure parse functions over the kernel's text, a thin read through HostReader so tests use
// fixture trees, and a pure delta. Everything returns plain values: safe from any thread, and a
// snapshot may be shared read-only once built. Reading costs two procfs reads that walk every
// IRQ, so callers run it on a housekeeping CPU, never from a sampler.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

struct InterruptRow {
  // "45" for a numbered IRQ; "LOC", "RES", "IPI0", "Err" for a named one; "NET_RX" in softirqs.
  std::string source;
  // Numbered IRQ: the action names ("mlx5_comp3@pci:0000:3b:00.0", or "ehci_hcd:usb1,
  // uhci_hcd:usb2" when shared), empty when no handler is attached (a chained IRQ).
  // Named row: its description ("Local timer interrupts"), or the source itself when the
  // kernel prints none (ERR, MIS, every softirq).
  std::string name;
  // Everything after the counts, trimmed: "IR-PCI-MSI 1572868-edge      mlx5_comp3@pci:...".
  std::string description;
  // counts[i] belongs to InterruptTable::cpus[i]. Shorter than cpus for the global counters the
  // kernel prints as a single number (x86 ERR and MIS, arm64 Err).
  std::vector<std::uint64_t> counts;
};

struct InterruptTable {
  // The CPU numbers of the header's columns, in order. Offline CPUs have no column, so this
  // can be sparse: {0, 1, 3} while CPU 2 is offline.
  std::vector<int> cpus;
  std::vector<InterruptRow> rows;  // in the kernel's order
};

// Parses /proc/interrupts text (x86, arm64 and other architectures' layouts). Tolerant: lines
// before the "CPU0 CPU1 ..." header and lines without "source:" are skipped; a row keeps the
// counts it has. Text without a header gives an empty table.
InterruptTable parse_proc_interrupts(std::string_view text);

// Parses /proc/softirqs text: the same header, then rows such as "NET_RX: 1 2 3 4".
InterruptTable parse_proc_softirqs(std::string_view text);

// The column of `cpu` in the table's header, or std::nullopt when it has none.
std::optional<std::size_t> cpu_column(const InterruptTable& table, int cpu);

struct InterruptSnapshot {
  InterruptTable interrupts;
  InterruptTable softirqs;
};

// Reads <procfs>/interrupts and <procfs>/softirqs. A missing file, or one without a CPU header,
// leaves its table empty and adds a line naming the full path to `problems` (which may be null).
InterruptSnapshot read_interrupt_counts(const HostReader& host, std::vector<std::string>* problems);

struct SourceDelta {
  std::string kind;    // "irq" (from /proc/interrupts) or "softirq"
  std::string source;  // as InterruptRow::source
  std::string name;    // as InterruptRow::name, taken from the later snapshot
  std::uint64_t delta = 0;

  bool operator==(const SourceDelta&) const = default;
};

// What each of `cpus` counted between two snapshots (every one gets an entry, empty when nothing
// counted): one entry per source whose count rose, interrupts first, each in the kernel's order.
// Rows are matched by source. A source only in `after` counts from 0 (an IRQ allocated during the
// window). A count that went backwards (an IRQ number freed and reused) gives no entry. Global
// single-number rows (ERR, MIS) are not per CPU and are skipped. A table in which a CPU has no
// column in either snapshot gives it nothing: without a baseline (CPU offline or file unreadable
// at `before`) its counts since boot are not a delta. The rows of the two snapshots are matched
// once for all CPUs: a 1,024-CPU machine's attribution window in one pass rather than a thousand.
std::map<int, std::vector<SourceDelta>> per_cpu_deltas(const InterruptSnapshot& before,
                                                       const InterruptSnapshot& after,
                                                       const std::vector<int>& cpus);

// The numbered IRQs (devices, not LOC, RES or other named rows) that fired between two readings
// of /proc/interrupts, by IRQ and then CPU: count > 0 only. Same matching rules as per_cpu_deltas.
std::map<int, std::map<int, std::uint64_t>> numbered_irq_deltas(const InterruptTable& before,
                                                                const InterruptTable& after);

}  // namespace jitterd
