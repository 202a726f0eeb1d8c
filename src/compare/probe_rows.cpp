// SPDX-License-Identifier: Apache-2.0
#include "compare/probe_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <unordered_map>

#include "probes/probe_registry.h"
#include "report/render.h"

namespace jitterd {
namespace {

// Rows whose figures hold only while a cell stays within one slot of a rate in another (a pacer's
// lateness) or under a bound (the share of its CPU an operation had to share): the probe's row
// conditions (probes/probe_facts.h RowCondition). Such a row is shown, not tested.
std::span<const RowCondition> row_conditions(const std::string& probe) {
  const ProbeFacts* facts = probe_facts(probe);
  return facts == nullptr ? std::span<const RowCondition>() : facts->row_conditions;
}

// Why a row breaks a condition of its probe ("p99_late_ns 500000000 ns > one slot 100000 ns",
// "cpu_shared 0.512 > 0.100"), or "" when it keeps them or cannot say.
std::string broken_condition(const std::string& probe, const ProbeTable& table, const std::vector<Cell>& row) {
  const auto value = [&](std::string_view name) -> std::optional<double> {
    const auto column = std::find(table.columns.begin(), table.columns.end(), name);
    if (column == table.columns.end()) return std::nullopt;
    const Cell& cell = row[static_cast<std::size_t>(column - table.columns.begin())];
    if (!cell.is_number()) return std::nullopt;
    return cell_number(cell);
  };
  for (const RowCondition& condition : row_conditions(probe)) {
    const std::optional<double> cell = value(condition.column);
    if (cell && condition.rate_column.empty()) {
      if (*cell > condition.at_most)
        return fmt::format("{} {:.3f} > {:.3f}", condition.column, *cell, condition.at_most);
      continue;
    }
    const std::optional<double> rate = value(condition.rate_column);
    if (!rate || !cell || *rate <= 0) continue;
    const double slot_ns = 1e9 / *rate;
    if (*cell > slot_ns) return fmt::format("{} {:.0f} ns > one slot {:.0f} ns", condition.column, *cell, slot_ns);
  }
  return "";
}

std::string_view broken_what(const std::string& probe) {
  const std::span<const RowCondition> conditions = row_conditions(probe);
  return conditions.empty() ? "" : conditions.front().broken;
}

// A row's key cell matches a samples label: numbers by value (a file keeps 1000 as 1000.0), text as is.
bool label_matches(const std::string& label, const Cell& cell) {
  if (!cell.is_number()) return cell_text(cell) == label;
  char* end = nullptr;
  const double value = std::strtod(label.c_str(), &end);
  if (end == label.c_str() || *end != '\0') return false;
  return value == cell_number(cell);
}

// The samples of `probe` behind a row's `column`: every record whose labels hold all of the row's
// key cells and which backs the column, pooled, in ns.
struct Backing {
  GroupedSample values;
  double quantile = 0.5;
  std::size_t records = 0;
  std::uint64_t count = 0;
};

// A probe's sample records indexed by label, so that a row finds its records without reading
// every record (rows x records was quadratic: a c2c run has one record per pair and one row per
// pair). A label is listed under its text and, when it reads as a number, under that number too,
// which is how label_matches compares.
class SampleIndex {
 public:
  explicit SampleIndex(const BaselineProbe& probe) : probe_(probe) {
    for (std::size_t i = 0; i < probe.samples.size(); ++i)
      for (const auto& [name, value] : probe.samples[i].labels) {
        records_[entry(name, value)].push_back(i);
        char* end = nullptr;
        const double number = std::strtod(value.c_str(), &end);
        if (end != value.c_str() && *end == '\0') records_[entry(name, number)].push_back(i);
      }
  }

  std::optional<Backing> backing(const std::vector<std::pair<std::string, Cell>>& key,
                                 const std::string& column) const {
    // The records listed under the rarest of the key's cells, checked against all of them.
    const std::vector<std::size_t>* fewest = nullptr;
    for (const auto& [name, cell] : key) {
      const auto listed = records_.find(cell_entry(name, cell));
      if (listed == records_.end()) return std::nullopt;
      if (fewest == nullptr || listed->second.size() < fewest->size()) fewest = &listed->second;
    }
    if (fewest == nullptr) return std::nullopt;
    Backing out;
    for (const std::size_t i : *fewest) {
      const ProbeSamples& s = probe_.samples[i];
      const auto q = std::find_if(s.quantiles.begin(), s.quantiles.end(),
                                  [&](const auto& entry) { return entry.first == column; });
      if (q == s.quantiles.end()) continue;
      const bool matches = std::all_of(key.begin(), key.end(), [&](const auto& cell) {
        return std::any_of(s.labels.begin(), s.labels.end(), [&](const auto& label) {
          return label.first == cell.first && label_matches(label.second, cell.second);
        });
      });
      if (!matches) continue;
      out.quantile = q->second;
      ++out.records;
      for (const auto& [value, count] : s.values) {
        out.values.emplace_back(static_cast<double>(value) * s.unit_ns, count);
        out.count += count;
      }
    }
    if (out.records == 0) return std::nullopt;
    return out;
  }

 private:
  static std::string entry(const std::string& name, const std::string& text) { return name + '\0' + text; }
  static std::string entry(const std::string& name, double number) {
    return name + '\0' + '\0' + fmt::format("{}", number == 0 ? 0.0 : number);  // -0 is 0
  }
  static std::string cell_entry(const std::string& name, const Cell& cell) {
    if (!cell.is_number()) return entry(name, cell_text(cell));
    return entry(name, cell_number(cell));
  }

  const BaselineProbe& probe_;
  std::unordered_map<std::string, std::vector<std::size_t>> records_;  // (label, value) -> records, in order
};
// One numeric cell of a row both runs have, `b` before and `a` after: tested on its samples when
// both runs kept enough of them and the row keeps its probe's conditions, else "not tested" and why.
FigureComparison probe_figure(const Judging& judging, const BaselineProbe& before, const BaselineProbe& after,
                              const std::string& column, const std::string& broken, const std::string& figure,
                              double b, double a, const std::optional<Backing>& b_samples,
                              const std::optional<Backing>& a_samples) {
  const std::string scope = "probe " + before.name;
  const bool without_samples = !before.has_samples || !after.has_samples;
  const std::string allowance = before.name + "." + column;
  if (!broken.empty() && b_samples && a_samples && allowance_for(allowance, judging.guest, judging.settings).cv) {
    const std::string_view what = broken_what(before.name);
    return untested_figure(scope, figure, b, a, fmt::format("none (the {}; {})", what, broken),
                           fmt::format("not tested ({})", what));
  }
  const auto too_few = [](const Backing& side) {
    // (less a rounding margin: 100 samples at q = 0.9 are 10 a side, not 9.999...)
    return static_cast<double>(side.count) * std::min(side.quantile, 1 - side.quantile) <
           kProbeSamplesPerSide - 1e-6;
  };
  if (b_samples && a_samples && (too_few(*b_samples) || too_few(*a_samples)))
    return untested_figure(scope, figure, b, a,
                           fmt::format("none ({} vs {} samples: too few for quantile {})", b_samples->count,
                                       a_samples->count, b_samples->quantile),
                           "not tested");
  if (b_samples && a_samples) {
    const std::string pooled =
        b_samples->records > 1 || a_samples->records > 1
            ? fmt::format("; pooled {} vs {} records", b_samples->records, a_samples->records)
            : "";
    return judged(judging, allowance, scope, figure, b, a,
                  fmt::format("quantile {} ({} vs {} samples{})", b_samples->quantile, b_samples->count,
                              a_samples->count, pooled),
                  quantile_test_p(b_samples->values, a_samples->values, b_samples->quantile));
  }
  if (without_samples && (b_samples || a_samples || (!before.has_samples && !after.has_samples)))
    return untested_figure(scope, figure, b, a, "none (baseline without samples: format 1.0)",
                           "not tested (baseline without samples)");
  return untested_figure(scope, figure, b, a, "none (one value per run)", "not tested");
}

}  // namespace

void compare_probe(Comparison& out, const BaselineProbe& before, const BaselineProbe& after,
                   const Judging& judging) {
  const SampleIndex before_samples(before), after_samples(after);
  std::unordered_map<std::string, const ProbeTable*> after_tables;  // the first of each title
  for (const ProbeTable& t : after.tables) after_tables.emplace(t.title, &t);
  for (const ProbeTable& b_table : before.tables) {
    const auto a_match = after_tables.find(b_table.title);
    if (a_match == after_tables.end() || a_match->second->columns != b_table.columns) continue;
    const ProbeTable* a_table = a_match->second;
    // A row's key: the cells that name what was measured (the op, the pair, the method and rate).
    const auto is_key = [&](std::size_t column) {
      static const std::vector<std::string> kKeyColumns{
          "op", "cpu", "cpu_a", "cpu_b", "relation", "method", "target_per_s", "requested_us", "current"};
      return column == 0 ||
             std::find(kKeyColumns.begin(), kKeyColumns.end(), b_table.columns[column]) != kKeyColumns.end();
    };
    const auto key_of = [&](const std::vector<Cell>& row) {
      std::string key;
      for (std::size_t c = 0; c < row.size(); ++c)
        if (is_key(c)) key += (key.empty() ? "" : " ") + b_table.columns[c] + "=" + cell_text(row[c]);
      return key;
    };
    const auto key_cells = [&](const std::vector<Cell>& row) {
      std::vector<std::pair<std::string, Cell>> cells;
      for (std::size_t c = 0; c < row.size(); ++c)
        if (is_key(c)) cells.emplace_back(b_table.columns[c], row[c]);
      return cells;
    };
    std::map<std::string, const std::vector<Cell>*> after_rows;
    for (const auto& row : a_table->rows) after_rows[key_of(row)] = &row;
    for (const auto& row : b_table.rows) {
      const auto match = after_rows.find(key_of(row));
      if (match == after_rows.end()) continue;
      std::string broken;
      const std::string b_broken = broken_condition(before.name, b_table, row);
      const std::string a_broken = broken_condition(before.name, *a_table, *match->second);
      if (!b_broken.empty()) broken = "before: " + b_broken;
      if (!a_broken.empty()) broken += (broken.empty() ? "after: " : "; after: ") + a_broken;
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (is_key(c) || row[c].kind != Cell::Kind::number || (*match->second)[c].kind != Cell::Kind::number)
          continue;
        const std::string figure = fmt::format("{}: {} {}", b_table.title.substr(0, b_table.title.find(' ')),
                                               key_of(row), b_table.columns[c]);
        out.figures.push_back(probe_figure(judging, before, after, b_table.columns[c], broken, figure,
                                           row[c].number, (*match->second)[c].number,
                                           before_samples.backing(key_cells(row), b_table.columns[c]),
                                           after_samples.backing(key_cells(*match->second), b_table.columns[c])));
      }
    }
  }
}

}  // namespace jitterd
