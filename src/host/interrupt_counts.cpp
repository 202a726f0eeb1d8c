// SPDX-License-Identifier: Apache-2.0
#include "host/interrupt_counts.h"
#include "host/text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <span>
#include <unordered_map>

namespace jitterd {
namespace {

constexpr std::string_view blanks = " \t";

// "CPU0 CPU1 CPU3" gives {0, 1, 3}; std::nullopt if the line is not a header.
std::optional<std::vector<int>> header_cpus(std::string_view line) {
  std::vector<int> cpus;
  for (const std::string_view word : split_words(line)) {
    if (word.substr(0, 3) != "CPU") return std::nullopt;
    const std::optional<int> cpu = parse_number<int>(word.substr(3));
    if (!cpu) return std::nullopt;
    cpus.push_back(*cpu);
  }
  if (cpus.empty()) return std::nullopt;
  return cpus;
}

// The trigger field the kernel prints before the action names: "Edge"/"Level" where
// CONFIG_GENERIC_IRQ_SHOW_LEVEL is set (arm64), else "<hwirq>-<flow handler>" ("2-edge",
// "1572868-edge", "-fasteoi"), or "<chip>-<flow>" in pre-4.x x86 ("IO-APIC-edge").
bool is_trigger_word(std::string_view word) {
  if (word == "Edge" || word == "Level") return true;
  constexpr std::array<std::string_view, 7> flows = {"edge",   "level",        "fasteoi", "simple",
                                                     "percpu", "percpu_devid", "nested"};
  const std::size_t dash = word.rfind('-');
  if (dash == std::string_view::npos) return false;
  return std::find(flows.begin(), flows.end(), word.substr(dash + 1)) != flows.end();
}

// The action names of a numbered IRQ's trailer: what follows the trigger field, or where an
// architecture prints none, the last word with any ", "-joined predecessors.
std::string action_names(std::string_view trailer) {
  const std::vector<std::string_view> parts = split_words(trailer);
  std::size_t first = parts.size();
  for (std::size_t i = parts.size(); i-- > 0;) {
    if (is_trigger_word(parts[i])) {
      first = i + 1;
      break;
    }
  }
  if (first == parts.size() && !parts.empty() && !is_trigger_word(parts.back())) {
    first = parts.size() - 1;
    while (first > 0 && parts[first - 1].back() == ',') --first;
  }
  return joined_with(std::span(parts).subspan(first), " ");
}

// One "source: count count ... trailer" line; std::nullopt for a line without a source. A device's
// "  45:   0   1234 ...  IR-PCI-MSI 1572868-edge      mlx5_comp3@pci:0000:3b:00.0" holds the counts
// (one per online CPU), the chip, the hwirq with its trigger ("27 Level" on arm's GIC, "-edge"
// appended on x86), then the action names, which may hold ", ".
std::optional<InterruptRow> parse_row(std::string_view line, std::size_t cpu_count) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view source = trim(line.substr(0, colon));
  if (source.empty() || source.find_first_of(blanks) != std::string_view::npos) return std::nullopt;
  InterruptRow row{std::string(source), {}, {}, {}};
  // Take at most one count per CPU, so a trailer such as arm64's "GICv3  27 Level" is never
  // read as counts.
  // A character loop rather than a substring per field: a 1,024-CPU machine's file has a million.
  const char* const line_end = line.data() + line.size();
  const char* at = line.data() + colon + 1;
  row.counts.reserve(cpu_count);
  while (row.counts.size() < cpu_count) {
    const char* start = at;
    while (start != line_end && (*start == ' ' || *start == '\t')) ++start;
    if (start == line_end) break;
    std::uint64_t count = 0;
    const auto [stop, error] = std::from_chars(start, line_end, count);
    // The whole blank-delimited word must be the number (no "12abc", nothing out of range).
    if (error != std::errc() || (stop != line_end && *stop != ' ' && *stop != '\t')) break;
    row.counts.push_back(count);
    at = stop;
  }
  const std::size_t pos = static_cast<std::size_t>(at - line.data());
  row.description = trim(line.substr(std::min(pos, line.size())));
  if (all_digits(source))
    row.name = action_names(row.description);
  else
    row.name = row.description.empty() ? row.source : row.description;
  return row;
}

InterruptTable parse_table(std::string_view text) {
  InterruptTable table;
  bool have_header = false;
  for (const std::string_view line : split_lines(text)) {
    if (!have_header) {
      if (std::optional<std::vector<int>> cpus = header_cpus(line)) {
        table.cpus = std::move(*cpus);
        have_header = true;
      }
      continue;
    }
    if (std::optional<InterruptRow> row = parse_row(line, table.cpus.size()))
      table.rows.push_back(std::move(*row));
  }
  return table;
}

InterruptTable read_table(const HostReader& host, std::string_view file, std::vector<std::string>* problems) {
  const std::optional<std::string> text = host.read_proc(file);
  if (!text) {
    if (problems != nullptr)
      problems->push_back(host.proc_path(file).string() + ": missing; per-CPU counts from it are unknown");
    return {};
  }
  InterruptTable table = parse_table(*text);
  if (table.cpus.empty() && problems != nullptr)
    problems->push_back(host.proc_path(file).string() +
                        ": no \"CPU0 CPU1 ...\" header line; per-CPU counts from it are unknown");
  return table;
}

// For each row of `after`, the row of `before` with the same source (the first one, should a
// source repeat), or nullptr: matched once for all CPUs rather than once per CPU, since a large
// machine has a thousand rows and a thousand CPUs. Rows almost always keep their order, so the
// row at the same index is tried before the lookup.
std::vector<const InterruptRow*> earlier_rows(const InterruptTable& before, const InterruptTable& after) {
  std::unordered_map<std::string_view, const InterruptRow*> by_source;
  by_source.reserve(before.rows.size());
  for (const InterruptRow& row : before.rows) by_source.emplace(row.source, &row);
  std::vector<const InterruptRow*> out;
  out.reserve(after.rows.size());
  for (std::size_t i = 0; i < after.rows.size(); ++i) {
    const std::string& source = after.rows[i].source;
    const auto found = by_source.find(source);
    const InterruptRow* same_place = i < before.rows.size() ? &before.rows[i] : nullptr;
    // The same index holds the first row of that source unless the source repeats earlier.
    if (same_place && same_place->source == source && found->second == same_place) {
      out.push_back(same_place);
    } else {
      out.push_back(found == by_source.end() ? nullptr : found->second);
    }
  }
  return out;
}

void append_deltas(const InterruptTable& before, const InterruptTable& after,
                   const std::vector<const InterruptRow*>& earlier, int cpu, std::string_view kind,
                   std::vector<SourceDelta>& out) {
  const std::optional<std::size_t> before_column = cpu_column(before, cpu);
  const std::optional<std::size_t> after_column = cpu_column(after, cpu);
  if (!before_column || !after_column) return;
  for (std::size_t i = 0; i < after.rows.size(); ++i) {
    const InterruptRow& row = after.rows[i];
    if (row.counts.size() < after.cpus.size()) continue;  // a global counter, not per CPU
    const std::uint64_t now = row.counts[*after_column];
    std::uint64_t then = 0;
    if (const InterruptRow* old = earlier[i]) {
      if (old->counts.size() < before.cpus.size()) continue;
      then = old->counts[*before_column];
    }
    if (now > then) out.push_back({std::string(kind), row.source, row.name, now - then});
  }
}

}  // namespace

InterruptTable parse_proc_interrupts(std::string_view text) { return parse_table(text); }

InterruptTable parse_proc_softirqs(std::string_view text) { return parse_table(text); }

std::optional<std::size_t> cpu_column(const InterruptTable& table, int cpu) {
  const auto found = std::find(table.cpus.begin(), table.cpus.end(), cpu);
  if (found == table.cpus.end()) return std::nullopt;
  return static_cast<std::size_t>(found - table.cpus.begin());
}

InterruptSnapshot read_interrupt_counts(const HostReader& host, std::vector<std::string>* problems) {
  return {read_table(host, "interrupts", problems), read_table(host, "softirqs", problems)};
}

std::map<int, std::vector<SourceDelta>> per_cpu_deltas(const InterruptSnapshot& before,
                                                       const InterruptSnapshot& after,
                                                       const std::vector<int>& cpus) {
  const std::vector<const InterruptRow*> irq_rows = earlier_rows(before.interrupts, after.interrupts);
  const std::vector<const InterruptRow*> softirq_rows = earlier_rows(before.softirqs, after.softirqs);
  std::map<int, std::vector<SourceDelta>> out;
  for (int cpu : cpus) {
    std::vector<SourceDelta>& deltas = out[cpu];
    append_deltas(before.interrupts, after.interrupts, irq_rows, cpu, "irq", deltas);
    append_deltas(before.softirqs, after.softirqs, softirq_rows, cpu, "softirq", deltas);
  }
  return out;
}

std::map<int, std::map<int, std::uint64_t>> numbered_irq_deltas(const InterruptTable& before,
                                                                const InterruptTable& after) {
  std::map<int, std::map<int, std::uint64_t>> fired;
  const std::vector<const InterruptRow*> rows = earlier_rows(before, after);
  std::vector<SourceDelta> deltas;
  for (int cpu : after.cpus) {
    deltas.clear();
    append_deltas(before, after, rows, cpu, "irq", deltas);
    for (const SourceDelta& d : deltas) {
      // IRQ numbers are below 2^31; nine digits always fit in an int.
      if (all_digits(d.source) && d.source.size() < 10) fired[std::stoi(d.source)][cpu] = d.delta;
    }
  }
  return fired;
}

}  // namespace jitterd
