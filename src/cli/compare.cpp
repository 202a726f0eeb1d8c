#include "cli/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <unordered_map>

#include "cli/html_report.h"
#include "cli/prometheus_history.h"
#include "host/text.h"
#include "report/render.h"

namespace jitterd {
namespace {

[[noreturn]] void refuse(const std::string& before_path, const std::string& after_path, const std::string& why) {
  throw BaselineError(kExitBadBaseline,
                      fmt::format("{} and {}: cannot be compared: {}", before_path, after_path, why));
}

// Another machine, another counter or other sub-windows make every figure incomparable.
void check_comparable(const Baseline& before, const std::string& bp, const Baseline& after,
                      const std::string& ap) {
  for (const char* key : {"hostname", "cpu_model"}) {
    const std::string b = field_value(before.fingerprint, key), a = field_value(after.fingerprint, key);
    if (b != a) refuse(bp, ap, fmt::format("different machines ({} \"{}\" vs \"{}\")", key, b, a));
  }
  if (before.tick_method != after.tick_method)
    refuse(bp, ap, fmt::format("different tick sources ({} vs {})", before.tick_method, after.tick_method));
  if (std::fabs(before.counter_hertz / after.counter_hertz - 1) > 0.01)
    refuse(bp, ap,
           fmt::format("counter frequencies differ by more than 1% ({:.0f} Hz vs {:.0f} Hz): another tick source",
                       before.counter_hertz, after.counter_hertz));
  if (before.sub_window_seconds != after.sub_window_seconds) {
    const auto from_daemon = [](const Baseline& b) {
      return field_value(b.configuration, "source").rfind("jitterd daemon", 0) == 0;
    };
    refuse(
        bp, ap,
        fmt::format("different sub-windows ({} s vs {} s){}", before.sub_window_seconds, after.sub_window_seconds,
                    from_daemon(before) != from_daemon(after)
                        ? ": a baseline downloaded from the daemon's /baseline.json has the 1 s steps of its "
                          "rolling window; compare it with another download"
                        : ""));
  }
  if (before.tail_thresholds_ns != after.tail_thresholds_ns) refuse(bp, ap, "different tail thresholds");
  const double ratio = std::max(before.duration_seconds, after.duration_seconds) /
                       std::max(1e-9, std::min(before.duration_seconds, after.duration_seconds));
  if (ratio > 2)
    refuse(bp, ap,
           fmt::format("durations more than 2x apart ({} s vs {} s): take both for the same duration",
                       before.duration_seconds, after.duration_seconds));
}

// A fingerprint field only one file records (one written by a jitterd that did not record it yet)
// is noted, not called a change of the machine; a configuration key is compared either way.
void add_changes(Comparison& out, const std::string& group,
                 const std::vector<std::pair<std::string, std::string>>& before, const std::string& before_path,
                 const std::vector<std::pair<std::string, std::string>>& after, const std::string& after_path,
                 bool note_fields_in_one_file) {
  const auto has = [](const std::vector<std::pair<std::string, std::string>>& fields, const std::string& key) {
    return std::any_of(fields.begin(), fields.end(), [&](const auto& field) { return field.first == key; });
  };
  std::vector<std::string> keys;
  for (const auto& [k, v] : before) keys.push_back(k);
  for (const auto& [k, v] : after)
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  for (const std::string& key : keys) {
    if (note_fields_in_one_file && has(before, key) != has(after, key)) {
      out.notes.push_back(
          fmt::format("{}.{}: recorded only in {} (\"{}\"; a file from an older jitterd lacks "
                      "it): not compared",
                      group, key, has(before, key) ? before_path : after_path,
                      field_value(has(before, key) ? before : after, key)));
      continue;
    }
    const std::string b = field_value(before, key), a = field_value(after, key);
    if (b != a) out.changed.push_back({group + "." + key, b, a});
  }
}

std::vector<double> per_window(const BaselineCpu& cpu, const std::function<double(const SubWindow&)>& figure) {
  std::vector<double> values;
  for (const SubWindow& w : cpu.sub_windows)
    if (w.seconds > 0) values.push_back(figure(w));
  return values;
}

std::string rank_test_name(std::size_t before, std::size_t after) {
  return fmt::format("mann-whitney ({} vs {} sub-windows)", before, after);
}

// How figures are judged in one comparison: the criteria, whether either run was in a guest, and
// the --allowance settings.
struct Judging {
  ChangeCriteria criteria;
  bool guest = false;
  std::vector<AllowanceSetting> settings;
};

// A figure judged against its allowance (cli/allowances.h `allowance`), or shown "not tested" with
// the reason the allowance gives (the within-run test's name and p are then not shown).
FigureComparison judged(const Judging& judging, const std::string& allowance, std::string scope,
                        std::string figure, double before, double after, std::string test, double p) {
  const AppliedAllowance applied = allowance_for(allowance, judging.guest, judging.settings);
  if (!applied.cv) {
    std::string why = applied.source == "guest" ? "none (its run-to-run spread in a VM)" : "none (see verdict)";
    return {
        std::move(scope), std::move(figure), before,      after, relative_change(before, after), std::move(why), 1,
        applied.untested, std::nullopt,      std::nullopt};
  }
  ChangeCriteria criteria = judging.criteria;
  criteria.run_to_run_cv = *applied.cv;
  return {std::move(scope),
          std::move(figure),
          before,
          after,
          relative_change(before, after),
          std::move(test),
          p,
          std::string(to_string(judge(before, after, p, criteria))),
          run_to_run_p(before, after, *applied.cv),
          applied.cv};
}

// The percentiles, interruptions and stolen share: the whole run's figure is shown, the sub-windows
// are tested. Tail rates above fixed thresholds by the rate test; the max by the highest of them.
void compare_cpu(Comparison& out, const Baseline& before_run, const BaselineCpu& before, const Baseline& after_run,
                 const BaselineCpu& after, const Judging& judging) {
  const std::string scope = fmt::format("cpu {}", before.cpu);
  struct Quantile {
    const char* name;
    double q;
    double SubWindow::*field;
  };
  for (const Quantile& quantile :
       {Quantile{"p50_ns", 0.5, &SubWindow::p50_ns}, Quantile{"p99_ns", 0.99, &SubWindow::p99_ns},
        Quantile{"p99_9_ns", 0.999, &SubWindow::p999_ns}, Quantile{"p99_99_ns", 0.9999, &SubWindow::p9999_ns}}) {
    const auto field = [&](const SubWindow& w) { return w.*quantile.field; };
    const std::vector<double> b = per_window(before, field), a = per_window(after, field);
    out.figures.push_back(judged(judging, std::string("gaps.") + quantile.name, scope, quantile.name,
                                 baseline_quantile_ns(before_run, before, quantile.q),
                                 baseline_quantile_ns(after_run, after, quantile.q),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  const auto per_second = [](double value, double seconds) { return seconds > 0 ? value / seconds : 0.0; };
  {
    const auto rate = [&](const SubWindow& w) {
      return per_second(static_cast<double>(w.interruptions), w.seconds);
    };
    const std::vector<double> b = per_window(before, rate), a = per_window(after, rate);
    out.figures.push_back(judged(judging, "gaps.interruptions_per_s", scope, "interruptions_per_s",
                                 per_second(static_cast<double>(before.interruptions), before.sampled_seconds),
                                 per_second(static_cast<double>(after.interruptions), after.sampled_seconds),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  {
    const auto share = [&](const SubWindow& w) { return per_second(w.stolen_seconds, w.seconds); };
    const std::vector<double> b = per_window(before, share), a = per_window(after, share);
    out.figures.push_back(judged(judging, "gaps.stolen_share", scope, "stolen_share",
                                 per_second(before.stolen_seconds, before.sampled_seconds),
                                 per_second(after.stolen_seconds, after.sampled_seconds),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  std::string max_verdict = std::string(to_string(Verdict::no_change));
  std::string max_test = "rate of gaps above the highest threshold reached";
  double max_p = 1;
  std::optional<double> max_run_to_run_p, max_allowance;
  for (std::size_t t = 0; t < before_run.tail_thresholds_ns.size(); ++t) {
    const auto count = [&](const SubWindow& w) { return static_cast<double>(w.over_threshold[t]); };
    const std::vector<double> b = per_window(before, count), a = per_window(after, count);
    double b_total = 0, a_total = 0, b_seconds = 0, a_seconds = 0;
    for (const SubWindow& w : before.sub_windows) b_total += count(w), b_seconds += w.seconds;
    for (const SubWindow& w : after.sub_windows) a_total += count(w), a_seconds += w.seconds;
    const double dispersion = count_dispersion(b, a);
    const double p = rate_ratio_p(static_cast<std::uint64_t>(b_total), b_seconds,
                                  static_cast<std::uint64_t>(a_total), a_seconds, dispersion);
    const double threshold_us = before_run.tail_thresholds_ns[t] / 1000;
    FigureComparison row =
        judged(judging, "gaps.tail_rates", scope, fmt::format("gaps_over_{}us_per_s", threshold_us),
               per_second(b_total, b_seconds), per_second(a_total, a_seconds),
               fmt::format("rate (dispersion {:.2f})", dispersion), p);
    if (std::max(before.max_ns, after.max_ns) >= before_run.tail_thresholds_ns[t]) {
      max_verdict = row.verdict;
      max_test = fmt::format("as gaps_over_{}us_per_s", threshold_us);
      max_p = p;
      max_run_to_run_p = row.run_to_run_p;
      max_allowance = row.allowance;
    }
    out.figures.push_back(std::move(row));
  }
  out.figures.push_back({scope, "max_ns", before.max_ns, after.max_ns,
                         relative_change(before.max_ns, after.max_ns), max_test, max_p, max_verdict,
                         max_run_to_run_p, max_allowance});
}

// Rows of a probe's table whose figures hold only while one cell stays within one slot of a rate
// in another: a pacer keeps its absolute schedule only while its p99 lateness stays within one slot
// (1 / target rate). Past it, its CPU was taken for longer than a slot and every send after that
// was late until it caught up, so the run measured that CPU's other load rather than the pacer:
// two runs of an unchanged but shared machine then differ by orders of magnitude (README "Before
// and after"). Such a row is shown, not tested.
struct RowCondition {
  std::string_view probe, column, rate_column, broken;
};
constexpr RowCondition kRowConditions[] = {
    {"pacing", "p99_late_ns", "target_per_s", "pacer fell behind its schedule"}};

// Why a row breaks a condition of its probe ("the pacer ...: p99_late_ns 5e8 > one slot 1e5 ns"),
// or "" when it keeps them or cannot say.
std::string broken_condition(const std::string& probe, const ProbeTable& table, const std::vector<Cell>& row) {
  const auto value = [&](std::string_view name) -> std::optional<double> {
    const auto column = std::find(table.columns.begin(), table.columns.end(), name);
    if (column == table.columns.end()) return std::nullopt;
    const Cell& cell = row[static_cast<std::size_t>(column - table.columns.begin())];
    if (!cell.is_number()) return std::nullopt;
    return cell.kind == Cell::Kind::integer ? static_cast<double>(cell.integer) : cell.number;
  };
  for (const RowCondition& condition : kRowConditions) {
    if (condition.probe != probe) continue;
    const std::optional<double> rate = value(condition.rate_column), cell = value(condition.column);
    if (!rate || !cell || *rate <= 0) continue;
    const double slot_ns = 1e9 / *rate;
    if (*cell > slot_ns) return fmt::format("{} {:.0f} ns > one slot {:.0f} ns", condition.column, *cell, slot_ns);
  }
  return "";
}

std::string_view broken_what(const std::string& probe) {
  for (const RowCondition& condition : kRowConditions)
    if (condition.probe == probe) return condition.broken;
  return "";
}

// A row's key cell matches a samples label: numbers by value (a file keeps 1000 as 1000.0), text as is.
bool label_matches(const std::string& label, const Cell& cell) {
  if (!cell.is_number()) return cell_text(cell) == label;
  char* end = nullptr;
  const double value = std::strtod(label.c_str(), &end);
  if (end == label.c_str() || *end != '\0') return false;
  const double number = cell.kind == Cell::Kind::integer ? static_cast<double>(cell.integer) : cell.number;
  return value == number;
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
    return entry(name, cell.kind == Cell::Kind::integer ? static_cast<double>(cell.integer) : cell.number);
  }

  const BaselineProbe& probe_;
  std::unordered_map<std::string, std::vector<std::size_t>> records_;  // (label, value) -> records, in order
};

// Probe tables hold one value per run (a median, a ratio): each numeric cell is shown before and
// after. A quantile whose individual samples both runs kept (format 1.1: a c2c pair or relation
// class, a kernel operation, a pacer's lateness) is tested like a gap figure: the quantile test on
// the samples, then the probe's run-to-run allowance and the practical effect. Every other cell
// is "not tested"; with a baseline older than samples, "not tested (baseline without samples)".
void compare_probe(Comparison& out, const BaselineProbe& before, const BaselineProbe& after,
                   const Judging& judging) {
  const std::string scope = "probe " + before.name;
  const bool without_samples = !before.has_samples || !after.has_samples;
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
        const double b = row[c].number, a = (*match->second)[c].number;
        const std::string figure = fmt::format("{}: {} {}", b_table.title.substr(0, b_table.title.find(' ')),
                                               key_of(row), b_table.columns[c]);
        const std::optional<Backing> b_samples = before_samples.backing(key_cells(row), b_table.columns[c]);
        const std::optional<Backing> a_samples =
            after_samples.backing(key_cells(*match->second), b_table.columns[c]);
        const std::string allowance = before.name + "." + b_table.columns[c];
        if (!broken.empty() && b_samples && a_samples &&
            allowance_for(allowance, judging.guest, judging.settings).cv) {
          const std::string_view what = broken_what(before.name);
          out.figures.push_back({scope, figure, b, a, relative_change(b, a),
                                 fmt::format("none (the {}; {})", what, broken), 1,
                                 fmt::format("not tested ({})", what), std::nullopt, std::nullopt});
          continue;
        }
        const auto too_few = [](const Backing& side) {
          // (less a rounding margin: 100 samples at q = 0.9 are 10 a side, not 9.999...)
          return static_cast<double>(side.count) * std::min(side.quantile, 1 - side.quantile) <
                 kProbeSamplesPerSide - 1e-6;
        };
        if (b_samples && a_samples && (too_few(*b_samples) || too_few(*a_samples))) {
          out.figures.push_back({scope, figure, b, a, relative_change(b, a),
                                 fmt::format("none ({} vs {} samples: too few for quantile {})", b_samples->count,
                                             a_samples->count, b_samples->quantile),
                                 1, "not tested", std::nullopt, std::nullopt});
        } else if (b_samples && a_samples) {
          const std::string pooled =
              b_samples->records > 1 || a_samples->records > 1
                  ? fmt::format("; pooled {} vs {} records", b_samples->records, a_samples->records)
                  : "";
          out.figures.push_back(
              judged(judging, allowance, scope, figure, b, a,
                     fmt::format("quantile {} ({} vs {} samples{})", b_samples->quantile, b_samples->count,
                                 a_samples->count, pooled),
                     quantile_test_p(b_samples->values, a_samples->values, b_samples->quantile)));
        } else if (without_samples && (b_samples || a_samples || (!before.has_samples && !after.has_samples))) {
          out.figures.push_back({scope, figure, b, a, relative_change(b, a),
                                 "none (baseline without samples: format 1.0)", 1,
                                 "not tested (baseline without samples)", std::nullopt, std::nullopt});
        } else {
          out.figures.push_back({scope, figure, b, a, relative_change(b, a), "none (one value per run)", 1,
                                 "not tested", std::nullopt, std::nullopt});
        }
      }
    }
  }
}

}  // namespace

bool ran_under_hypervisor(const Baseline& baseline) {
  return field_value(baseline.fingerprint, "hypervisor").rfind("yes", 0) == 0;
}

Comparison compare_baselines(const Baseline& before, const std::string& bp, const Baseline& after,
                             const std::string& ap, const ChangeCriteria& criteria,
                             const std::vector<AllowanceSetting>& allowances) {
  check_comparable(before, bp, after, ap);
  Comparison out{bp, ap, {}, {}, {}};
  const Judging judging{criteria, ran_under_hypervisor(before) || ran_under_hypervisor(after), allowances};
  if (judging.guest) {
    const std::string which = ran_under_hypervisor(before) && ran_under_hypervisor(after) ? "both"
                              : ran_under_hypervisor(before)                              ? bp
                                                                                          : ap;
    out.notes.push_back(fmt::format(
        "in a VM ({} ran under a hypervisor: fingerprint.hypervisor): each figure is judged against its "
        "allowance for a guest, where the probes' run-to-run spread is larger, and the figures whose spread "
        "there is too large to test are shown as not tested (README \"Before and after\")",
        which));
  }
  if (!allowances.empty()) {
    std::string given;
    for (const AllowanceSetting& s : allowances)
      given += fmt::format("{}{}={}", given.empty() ? "" : ",", s.name, s.cv);
    out.notes.push_back(fmt::format("allowances set with --allowance {} (in place of the measured ones)", given));
  }
  add_changes(out, "fingerprint", before.fingerprint, bp, after.fingerprint, ap, true);
  add_changes(out, "configuration", before.configuration, bp, after.configuration, ap, false);
  // CPUs and probes are matched by index (linear; a file holds each once, baseline_file.h).
  std::unordered_map<int, const BaselineCpu*> after_cpus, before_cpus;
  for (const BaselineCpu& c : after.cpus) after_cpus.emplace(c.cpu, &c);
  for (const BaselineCpu& c : before.cpus) before_cpus.emplace(c.cpu, &c);
  bool any_cpu = before.cpus.empty() && after.cpus.empty();
  for (const BaselineCpu& b : before.cpus) {
    const auto match = after_cpus.find(b.cpu);
    if (match == after_cpus.end()) {
      out.notes.push_back(fmt::format("cpu {}: left out, sampled only in {}", b.cpu, bp));
      continue;
    }
    const BaselineCpu& a = *match->second;
    if (!b.error.empty() || !a.error.empty() || b.samples == 0 || a.samples == 0) {
      out.notes.push_back(fmt::format("cpu {}: left out, not sampled in one of them", b.cpu));
    } else {
      compare_cpu(out, before, b, after, a, judging);
      any_cpu = true;
    }
  }
  for (const BaselineCpu& a : after.cpus)
    if (before_cpus.count(a.cpu) == 0)
      out.notes.push_back(fmt::format("cpu {}: left out, sampled only in {}", a.cpu, ap));
  if (!any_cpu) refuse(bp, ap, "no sampled CPU in common");
  std::unordered_map<std::string, const BaselineProbe*> after_probes;
  for (const BaselineProbe& p : after.probes) after_probes.emplace(p.name, &p);
  for (const BaselineProbe& b : before.probes) {
    const auto a = after_probes.find(b.name);
    if (a == after_probes.end() || !a->second->success || !b.success)
      out.notes.push_back(fmt::format("probe {}: left out, not run or failed in one of them", b.name));
    else
      compare_probe(out, b, *a->second, judging);
  }
  return out;
}

ProbeTable changed_table(const Comparison& comparison) {
  ProbeTable table{"what changed", {"field", "before", "after"}, {}};
  for (const auto& row : comparison.changed) table.rows.push_back({row[0], row[1], row[2]});
  return table;
}

ProbeTable figures_table(const Comparison& comparison) {
  ProbeTable table{
      "what it did",
      {"scope", "figure", "before", "after", "change", "p_value", "test", "p_run_to_run", "allowance", "verdict"},
      {}};
  for (const FigureComparison& f : comparison.figures) {
    const Cell change = std::isfinite(f.change) ? Cell(f.change, 3) : Cell();
    table.rows.push_back({f.scope, f.figure, Cell(f.before, 3), Cell(f.after, 3), change, Cell(f.p_value, 4),
                          f.test, f.run_to_run_p ? Cell(*f.run_to_run_p, 4) : Cell(),
                          f.allowance ? Cell(*f.allowance, 2) : Cell(), f.verdict});
  }
  return table;
}

std::string format_comparison_table(const Comparison& c) {
  // Paths, fingerprint fields and probe names come from the files: printable on a terminal.
  std::string out =
      fmt::format("before: {}\nafter:  {}\n\nwhat changed\n", printable(c.before_path), printable(c.after_path));
  out += c.changed.empty() ? "nothing in the fingerprint or the configuration\n" : table_text(changed_table(c));
  out += "\nwhat it did (change = (after - before) / before)\n" + table_text(figures_table(c));
  for (const std::string& note : c.notes) out += "note: " + printable(note) + "\n";
  return out;
}

std::string format_comparison_csv(const Comparison& c) {
  return table_csv(changed_table(c)) + "\n" + table_csv(figures_table(c));
}

std::string format_comparison_json(const Comparison& c) {
  return json_text(Json{{"before", c.before_path},
                        {"after", c.after_path},
                        {"changed", table_records(changed_table(c))},
                        {"figures", table_records(figures_table(c))},
                        {"notes", c.notes}});
}

namespace {

// The two runs and their comparison: the HTML report plots the runs' histograms.
struct ComparedRuns {
  Baseline before, after;
  Comparison comparison;
};

ComparedRuns compare_files(const CommandLine& cl) {
  ComparedRuns runs{read_baseline(cl.compare_before), read_baseline(cl.compare_after), {}};
  runs.comparison =
      compare_baselines(runs.before, cl.compare_before, runs.after, cl.compare_after, {}, cl.compare_allowances);
  return runs;
}

// The sub-window: as given, else two scrape intervals (each sub-window holds whole scrapes), at
// least 1/120 of the shorter range (as many as a 60 s baseline file has), in whole milliseconds.
double history_sub_window(const CommandLine& cl, const RangeSamples& before, const RangeSamples& after) {
  const double scrape = std::max(scrape_interval_seconds(before), scrape_interval_seconds(after));
  if (cl.prometheus_sub_window) {
    const double given = std::chrono::duration<double>(*cl.prometheus_sub_window).count();
    if (given < scrape * 0.99)
      throw BaselineError(kExitBadBaseline,
                          fmt::format("{}: --sub-window {} s is shorter than the scrape interval ({} s): a "
                                      "sub-window must hold at least one scrape",
                                      cl.prometheus_url, given, scrape));
    return given;
  }
  const double shorter = std::min(before.range.end - before.range.start, after.range.end - after.range.start);
  return std::ceil(std::max(2 * scrape, shorter / 120) * 1000) / 1000;
}

std::string bounds_text(const std::vector<double>& bounds_ns) {
  std::string text;
  for (double ns : bounds_ns)
    text += (text.empty() ? "" : " ") + (ns >= 1e6   ? fmt::format("{}ms", ns / 1e6)
                                         : ns >= 1e3 ? fmt::format("{}us", ns / 1e3)
                                                     : fmt::format("{}ns", ns));
  return text;
}

ComparedRuns compare_history(const CommandLine& cl) {
  std::string error;
  const TimeRange before_range = *parse_time_range(cl.prometheus_before, &error);
  const TimeRange after_range = *parse_time_range(cl.prometheus_after, &error);
  const PrometheusClient client({cl.prometheus_url, cl.prometheus_bearer_token_file, cl.prometheus_basic_auth_user,
                                 cl.prometheus_basic_auth_password_file,
                                 std::chrono::duration<double>(cl.prometheus_timeout).count(),
                                 cl.prometheus_max_bytes.value_or(kPrometheusMaxBytes)});
  const RangeSamples before_samples = read_range(client, cl.prometheus_instance, before_range);
  const RangeSamples after_samples = read_range(client, cl.prometheus_instance, after_range);
  const double sub_window = history_sub_window(cl, before_samples, after_samples);
  const HistoryBaseline before = baseline_from_samples(before_samples, sub_window);
  const HistoryBaseline after = baseline_from_samples(after_samples, sub_window);
  Comparison comparison = compare_baselines(before.baseline, before_samples.source, after.baseline,
                                            after_samples.source, {}, cl.compare_allowances);
  std::vector<std::string> notes{fmt::format(
      "read from Prometheus at the resolution of the exported buckets, not jitterd's fine histogram: a "
      "quantile or max is the upper bound (le) of the bucket holding it, of {} (beyond the last: that bound, "
      "and the max the largest window max scraped); tails are counted above {}; {} s sub-windows",
      bounds_text(before.baseline.histogram_bounds_ns), bounds_text(before.baseline.tail_thresholds_ns),
      sub_window)};
  const std::size_t fewest =
      std::min(before.baseline.duration_seconds, after.baseline.duration_seconds) / sub_window;
  if (fewest < 8)
    notes.push_back(
        fmt::format("about {} sub-windows per range: the rank tests cannot reach p < 0.001 with fewer "
                    "than 8 a side; take longer ranges or a shorter --sub-window",
                    fewest));
  notes.insert(notes.end(), before.notes.begin(), before.notes.end());
  notes.insert(notes.end(), after.notes.begin(), after.notes.end());
  comparison.notes.insert(comparison.notes.begin(), notes.begin(), notes.end());
  return {before.baseline, after.baseline, std::move(comparison)};
}

}  // namespace

int run_compare(const CommandLine& cl) {
  const ComparedRuns runs = cl.prometheus_url.empty() ? compare_files(cl) : compare_history(cl);
  const Comparison& comparison = runs.comparison;
  switch (cl.report_format) {
    case ReportFormat::table:
    case ReportFormat::script:  // not offered by compare's --format
      std::cout << format_comparison_table(comparison);
      break;
    case ReportFormat::csv:
      std::cout << format_comparison_csv(comparison);
      break;
    case ReportFormat::json:
      std::cout << format_comparison_json(comparison);
      break;
    case ReportFormat::html:
      std::cout << comparison_html(comparison, runs.before, runs.after);
      break;
  }
  return 0;
}

}  // namespace jitterd
