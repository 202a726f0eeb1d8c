// SPDX-License-Identifier: Apache-2.0
// /proc/interrupts and /proc/softirqs: the parsers on literal x86 (full and with an offline CPU),
// arm64 and softirq texts, the reader on scratch proc trees, and per-CPU deltas between two
// snapshots (new sources, counters going backwards, global rows, CPUs without a baseline).
#include "host/interrupt_counts.h"

#include <catch2/catch.hpp>

#include "fixture_tree.h"

using jitterd::cpu_column;
using jitterd::InterruptRow;
using jitterd::InterruptSnapshot;
using jitterd::InterruptTable;
using jitterd::parse_proc_interrupts;
using jitterd::parse_proc_softirqs;
using jitterd::per_cpu_deltas;
using jitterd::read_interrupt_counts;
using jitterd::SourceDelta;

namespace {

using jitterd::testing::ScratchTree;
using Counts = std::vector<std::uint64_t>;

// A 4-CPU Intel server on a 6.1 kernel, trimmed.
constexpr std::string_view x86_interrupts =
    "            CPU0       CPU1       CPU2       CPU3       \n"
    "   0:         36          0          0          0   IO-APIC   2-edge      timer\n"
    "   8:          0          0          1          0   IO-APIC   8-edge      rtc0\n"
    "   9:          0          4          0          0   IO-APIC   9-fasteoi   acpi\n"
    "  16:          0          0          0          0   IO-APIC  16-fasteoi   ehci_hcd:usb1, "
    "uhci_hcd:usb2\n"
    "  24:          0          0          0          0   IO-APIC  24-fasteoi\n"
    "  45:          0          0       1234          0  IR-PCI-MSI 1572868-edge      "
    "mlx5_comp3@pci:0000:3b:00.0\n"
    " NMI:         17         18         19         20   Non-maskable interrupts\n"
    " LOC:    1234567    2345678    3456789    4567890   Local timer interrupts\n"
    " SPU:          0          0          0          0   Spurious interrupts\n"
    " PMI:         17         18         19         20   Performance monitoring interrupts\n"
    " IWI:          5          0          0          2   IRQ work interrupts\n"
    " RTR:          0          0          0          0   APIC ICR read retries\n"
    " RES:       1000       2000       3000       4000   Rescheduling interrupts\n"
    " CAL:        500        600        700        800   Function call interrupts\n"
    " TLB:         10         20         30         40   TLB shootdowns\n"
    " TRM:          0          0          0          0   Thermal event interrupts\n"
    " THR:          0          0          0          0   Threshold APIC interrupts\n"
    " DFR:          0          0          0          0   Deferred Error APIC interrupts\n"
    " MCE:          0          0          0          0   Machine check exceptions\n"
    " MCP:         12         12         12         12   Machine check polls\n"
    " HYP:          0          0          0          0   Hypervisor callback interrupts\n"
    " ERR:          0\n"
    " MIS:          0\n"
    " PIN:          0          0          0          0   Posted-interrupt notification event\n";

// An arm64 KVM guest on GICv3 with numbered IPIs.
constexpr std::string_view arm64_interrupts =
    "           CPU0       CPU1       CPU2       CPU3       \n"
    " 11:     123456     234567     345678     456789     GICv3  27 Level     arch_timer\n"
    " 14:          0          0          0          0     GICv3  30 Level     kvm guest ptimer\n"
    " 47:       1234          0          0          0     GICv3  78 Edge      virtio0\n"
    " 49:          0          0          7          0  ITS-MSI 16384 Edge      virtio1-config\n"
    "IPI0:      2000       3000       4000       5000       Rescheduling interrupts\n"
    "IPI1:       100        200        300        400       Function call interrupts\n"
    "IPI2:         0          0          0          0       CPU stop interrupts\n"
    "IPI3:         0          0          0          0       CPU stop (for crash dump) interrupts\n"
    "IPI4:         0          0          0          0       Timer broadcast interrupts\n"
    "IPI5:        10         20         30         40       IRQ work interrupts\n"
    "IPI6:         0          0          0          0       CPU wake-up interrupts\n"
    "Err:          0\n";

constexpr std::string_view softirqs =
    "                    CPU0       CPU1       CPU2       CPU3       \n"
    "          HI:          0          0          0          0\n"
    "       TIMER:     123456     234567     345678     456789\n"
    "      NET_TX:          1          2          3          4\n"
    "      NET_RX:        100        200        300        400\n"
    "       BLOCK:         10         20         30         40\n"
    "    IRQ_POLL:          0          0          0          0\n"
    "     TASKLET:          5          6          7          8\n"
    "       SCHED:      10000      20000      30000      40000\n"
    "     HRTIMER:          0          0          0          0\n"
    "         RCU:      50000      60000      70000      80000\n";

const InterruptRow& row(const InterruptTable& table, std::string_view source) {
  for (const InterruptRow& r : table.rows)
    if (r.source == source) return r;
  FAIL("no row " << source);
  static const InterruptRow none;
  return none;
}

// A table with one column per CPU in `cpus` and the given rows.
InterruptTable table(std::vector<int> cpus, std::vector<InterruptRow> rows) {
  return InterruptTable{std::move(cpus), std::move(rows)};
}

}  // namespace

TEST_CASE("parse_proc_interrupts reads an x86 table", "[interrupt_counts]") {
  const InterruptTable t = parse_proc_interrupts(x86_interrupts);
  CHECK(t.cpus == std::vector<int>{0, 1, 2, 3});
  REQUIRE(t.rows.size() == 24);

  const InterruptRow& mlx = row(t, "45");
  CHECK(mlx.counts == Counts{0, 0, 1234, 0});
  CHECK(mlx.name == "mlx5_comp3@pci:0000:3b:00.0");
  CHECK(mlx.description == "IR-PCI-MSI 1572868-edge      mlx5_comp3@pci:0000:3b:00.0");
  CHECK(row(t, "0").name == "timer");
  CHECK(row(t, "9").name == "acpi");
  // Shared IRQ: every action, as the kernel joins them.
  CHECK(row(t, "16").name == "ehci_hcd:usb1, uhci_hcd:usb2");
  // No handler (a chained IRQ): no name, the trailer kept as description.
  CHECK(row(t, "24").name.empty());
  CHECK(row(t, "24").description == "IO-APIC  24-fasteoi");

  const InterruptRow& loc = row(t, "LOC");
  CHECK(loc.counts == Counts{1234567, 2345678, 3456789, 4567890});
  CHECK(loc.name == "Local timer interrupts");
  CHECK(row(t, "RES").name == "Rescheduling interrupts");
  CHECK(row(t, "PIN").name == "Posted-interrupt notification event");
  // Global counters print one number and no description.
  CHECK(row(t, "ERR").counts == Counts{0});
  CHECK(row(t, "MIS").name == "MIS");
  CHECK(row(t, "MIS").description.empty());
}

TEST_CASE("parse_proc_interrupts keeps the CPU numbers of a sparse header", "[interrupt_counts]") {
  // CPU 2 offline: the kernel prints only online CPUs' columns.
  const InterruptTable t = parse_proc_interrupts(
      "           CPU0       CPU1       CPU3       \n"
      "  45:         10         20         30  IR-PCI-MSI 1572868-edge      mlx5_comp3\n"
      " LOC:        100        200        300   Local timer interrupts\n"
      " ERR:          0\n");
  CHECK(t.cpus == std::vector<int>{0, 1, 3});
  CHECK(row(t, "45").counts == Counts{10, 20, 30});
  CHECK(row(t, "LOC").counts == Counts{100, 200, 300});
  CHECK(cpu_column(t, 3) == std::optional<std::size_t>(2));
  CHECK_FALSE(cpu_column(t, 2).has_value());
}

TEST_CASE("parse_proc_interrupts reads arm64 GICv3 and IPI rows", "[interrupt_counts]") {
  const InterruptTable t = parse_proc_interrupts(arm64_interrupts);
  CHECK(t.cpus == std::vector<int>{0, 1, 2, 3});
  REQUIRE(t.rows.size() == 12);
  // The GIC's hwirq ("27") after the counts is not read as a fifth count.
  CHECK(row(t, "11").counts == Counts{123456, 234567, 345678, 456789});
  CHECK(row(t, "11").name == "arch_timer");
  CHECK(row(t, "11").description == "GICv3  27 Level     arch_timer");
  CHECK(row(t, "14").name == "kvm guest ptimer");
  CHECK(row(t, "49").name == "virtio1-config");
  CHECK(row(t, "IPI0").counts == Counts{2000, 3000, 4000, 5000});
  CHECK(row(t, "IPI0").name == "Rescheduling interrupts");
  CHECK(row(t, "IPI3").name == "CPU stop (for crash dump) interrupts");
  CHECK(row(t, "Err").counts == Counts{0});
}

TEST_CASE("parse_proc_interrupts tolerates odd text", "[interrupt_counts]") {
  CHECK(parse_proc_interrupts("").rows.empty());
  // No header: nothing can be attributed to a CPU.
  const InterruptTable headless = parse_proc_interrupts(" LOC: 1 2 Local timer interrupts\n");
  CHECK(headless.cpus.empty());
  CHECK(headless.rows.empty());
  // Lines without a source are skipped; a short row keeps what it has.
  const InterruptTable t = parse_proc_interrupts(
      "  CPU0 CPU1\n"
      "garbage line\n"
      " LOC: 5\n"
      "  7: 1 2 PCI-MSI-edge eth0\n");  // pre-4.x x86 "<chip>-<flow>" field
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].counts == Counts{5});
  CHECK(t.rows[1].name == "eth0");
}

TEST_CASE("parse_proc_softirqs reads every softirq row", "[interrupt_counts]") {
  const InterruptTable t = parse_proc_softirqs(softirqs);
  CHECK(t.cpus == std::vector<int>{0, 1, 2, 3});
  std::vector<std::string> sources;
  for (const InterruptRow& r : t.rows) sources.push_back(r.source);
  CHECK(sources == std::vector<std::string>{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
                                            "SCHED", "HRTIMER", "RCU"});
  CHECK(row(t, "NET_RX").counts == Counts{100, 200, 300, 400});
  CHECK(row(t, "NET_RX").name == "NET_RX");
  CHECK(row(t, "RCU").description.empty());
}

TEST_CASE("read_interrupt_counts reads both files and names the missing one", "[interrupt_counts]") {
  ScratchTree tree;
  tree.write("proc/interrupts", std::string(x86_interrupts));
  std::vector<std::string> problems;
  const InterruptSnapshot s = read_interrupt_counts(tree.reader(), &problems);
  CHECK(s.interrupts.rows.size() == 24);
  CHECK(s.softirqs.rows.empty());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == (tree.root() / "proc/softirqs").string() + ": missing; per-CPU counts from it are unknown");

  tree.write("proc/softirqs", std::string(softirqs));
  tree.write("proc/interrupts", "not a table\n");
  problems.clear();
  const InterruptSnapshot again = read_interrupt_counts(tree.reader(), &problems);
  CHECK(again.softirqs.rows.size() == 10);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find((tree.root() / "proc/interrupts").string() + ": no \"CPU0") == 0);
  CHECK_NOTHROW(read_interrupt_counts(tree.reader(), nullptr));
}

TEST_CASE("per_cpu_deltas lists what one CPU counted, interrupts then softirqs", "[interrupt_counts]") {
  InterruptSnapshot before{parse_proc_interrupts(x86_interrupts), parse_proc_softirqs(softirqs)};
  InterruptSnapshot after = before;
  for (InterruptRow& r : after.interrupts.rows) {
    if (r.source == "LOC") r.counts[2] += 250;
    if (r.source == "45") r.counts[2] += 40;
    if (r.source == "RES") r.counts[1] += 9;  // another CPU
  }
  for (InterruptRow& r : after.softirqs.rows)
    if (r.source == "NET_RX") r.counts[2] += 38;
  CHECK(per_cpu_deltas(before, after, {2}).at(2) ==
        std::vector<SourceDelta>{{"irq", "45", "mlx5_comp3@pci:0000:3b:00.0", 40},
                                 {"irq", "LOC", "Local timer interrupts", 250},
                                 {"softirq", "NET_RX", "NET_RX", 38}});
  CHECK(per_cpu_deltas(before, after, {1}).at(1) ==
        std::vector<SourceDelta>{{"irq", "RES", "Rescheduling interrupts", 9}});
  CHECK(per_cpu_deltas(before, before, {0}).at(0).empty());
}

TEST_CASE("per_cpu_deltas counts new sources from 0 and ignores counters going backwards", "[interrupt_counts]") {
  const InterruptSnapshot before{
      table({0, 1}, {{"45", "eth0", "", {100, 500}}, {"LOC", "Local timer interrupts", "", {7, 8}}}), {}};
  const InterruptSnapshot after{
      table({0, 1}, {{"45", "nvme0q1", "", {100, 20}},  // IRQ 45 freed and reused: went back
                     {"46", "nvme0q2", "", {0, 3}},     // allocated during the window
                     {"LOC", "Local timer interrupts", "", {9, 8}}}),
      {}};
  CHECK(per_cpu_deltas(before, after, {1}).at(1) == std::vector<SourceDelta>{{"irq", "46", "nvme0q2", 3}});
  CHECK(per_cpu_deltas(before, after, {0}).at(0) ==
        std::vector<SourceDelta>{{"irq", "LOC", "Local timer interrupts", 2}});
}

TEST_CASE("per_cpu_deltas skips global rows and CPUs without a baseline", "[interrupt_counts]") {
  // CPU 2 came online during the window: its counts are since boot, not since `before`.
  const InterruptSnapshot before{
      table({0, 1, 3}, {{"LOC", "Local timer interrupts", "", {1, 1, 1}}, {"ERR", "ERR", "", {0}}}), {}};
  const InterruptSnapshot after{
      table({0, 1, 2, 3}, {{"LOC", "Local timer interrupts", "", {2, 1, 900, 4}}, {"ERR", "ERR", "", {5}}}), {}};
  CHECK(per_cpu_deltas(before, after, {2}).at(2).empty());
  // CPU 3 moved from column 2 to column 3; ERR's one number is not CPU 0's.
  CHECK(per_cpu_deltas(before, after, {3}).at(3) ==
        std::vector<SourceDelta>{{"irq", "LOC", "Local timer interrupts", 3}});
  CHECK(per_cpu_deltas(before, after, {0}).at(0) ==
        std::vector<SourceDelta>{{"irq", "LOC", "Local timer interrupts", 1}});
  // A file unreadable at `before` is no baseline either.
  CHECK(per_cpu_deltas(InterruptSnapshot{}, after, {0}).at(0).empty());
}
