// SPDX-License-Identifier: Apache-2.0
#include "compare/comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "compare/judging.h"
#include "compare/probe_rows.h"
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
    // Every baseline is recorded with 1 s sub-windows now (report/baseline_recorder.h); a file
    // from an older jitterd has 0.5 s ones.
    const auto older = [](const Baseline& b) { return b.sub_window_seconds == 0.5; };
    refuse(
        bp, ap,
        fmt::format("different sub-windows ({} s vs {} s){}", before.sub_window_seconds, after.sub_window_seconds,
                    older(before) != older(after)
                        ? ": a file from a jitterd older than the one-second sub-windows has 0.5 s ones; take "
                          "the baseline again"
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

// Loops by name, each as a sampled CPU (compare/judging.h compare_gaps, scope "loop NAME").
void compare_loops(Comparison& out, const Baseline& before, const Baseline& after, const Judging& judging) {
  std::unordered_map<std::string, const BaselineLoop*> after_loops, before_loops;
  for (const BaselineLoop& l : after.loops) after_loops.emplace(l.name, &l);
  for (const BaselineLoop& l : before.loops) before_loops.emplace(l.name, &l);
  for (const BaselineLoop& b : before.loops) {
    const auto match = after_loops.find(b.name);
    if (match == after_loops.end()) {
      out.notes.push_back(fmt::format("loop {}: left out, recorded only in {}", b.name, out.before_path));
      continue;
    }
    const BaselineLoop& a = *match->second;
    if (!b.error.empty() || !a.error.empty() || b.samples == 0 || a.samples == 0)
      out.notes.push_back(fmt::format("loop {}: left out, no gaps recorded in one of them", b.name));
    else if (std::fabs(b.counter_hertz / a.counter_hertz - 1) > 0.01)
      out.notes.push_back(fmt::format(
          "loop {}: left out, its counter frequencies differ by more than 1% ({:.0f} Hz vs {:.0f} Hz): another "
          "counter",
          b.name, b.counter_hertz, a.counter_hertz));
    else
      compare_gaps(out, {"loop " + b.name, b.counter_hertz, a.counter_hertz, "loop"}, before, b, after, a,
                   judging);
  }
  for (const BaselineLoop& a : after.loops)
    if (before_loops.count(a.name) == 0)
      out.notes.push_back(fmt::format("loop {}: left out, recorded only in {}", a.name, out.after_path));
}

// Watched CPUs by number; the methods (bpf, tracepoints, counts) count different things, so a CPU
// watched by one method in one file and by another in the other is left out.
void compare_watched_cpus(Comparison& out, const Baseline& before, const Baseline& after, const Judging& judging) {
  std::unordered_map<int, const BaselineWatched*> after_watched, before_watched;
  for (const BaselineWatched& w : after.watched) after_watched.emplace(w.cpu, &w);
  for (const BaselineWatched& w : before.watched) before_watched.emplace(w.cpu, &w);
  for (const BaselineWatched& b : before.watched) {
    const auto match = after_watched.find(b.cpu);
    if (match == after_watched.end()) {
      out.notes.push_back(fmt::format("watched cpu {}: left out, watched only in {}", b.cpu, out.before_path));
      continue;
    }
    const BaselineWatched& a = *match->second;
    if (a.method != b.method)
      out.notes.push_back(fmt::format(
          "watched cpu {}: left out, watched by {} in {} and by {} in {} (the methods count different things)",
          b.cpu, b.method, out.before_path, a.method, out.after_path));
    else if (b.seconds <= 0 || a.seconds <= 0)
      out.notes.push_back(fmt::format("watched cpu {}: left out, not watched in one of them", b.cpu));
    else
      compare_watched(out, before, b, after, a, judging);
  }
  for (const BaselineWatched& a : after.watched)
    if (before_watched.count(a.cpu) == 0)
      out.notes.push_back(fmt::format("watched cpu {}: left out, watched only in {}", a.cpu, out.after_path));
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
        "there is too large to test are shown as not tested (docs/before-and-after.md)",
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
  compare_loops(out, before, after, judging);
  compare_watched_cpus(out, before, after, judging);
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

std::string_view verdict_html_class(std::string_view verdict) {
  if (verdict == "better") return "better";
  if (verdict == "worse") return "worse";
  if (verdict == to_string(Verdict::no_change)) return "same";
  return "";
}

Cell verdict_cell(const std::string& verdict) {
  Cell cell(verdict);
  cell.html_class = std::string(verdict_html_class(verdict));
  return cell;
}

ProbeTable changed_table(const Comparison& comparison) {
  ProbeTable table{"what changed", {"field", "before", "after"}, {}};
  for (const auto& row : comparison.changed) table.rows.push_back({row[0], row[1], row[2]});
  return table;
}

ProbeTable figures_table(const Comparison& comparison) {
  ProbeTable table{"what it did",
                   {"scope", "figure", "before", "after", "change", "p_value", "test", "p_run_to_run", "allowance",
                    "verdict", "needs"},
                   {}};
  for (const FigureComparison& f : comparison.figures) {
    const Cell change = std::isfinite(f.change) ? Cell(f.change, 3) : Cell();
    table.rows.push_back({f.scope, f.figure, Cell(f.before, 3), Cell(f.after, 3), change, Cell(f.p_value, 4),
                          f.test, f.run_to_run_p ? Cell(*f.run_to_run_p, 4) : Cell(),
                          f.allowance ? Cell(*f.allowance, 2) : Cell(), verdict_cell(f.verdict),
                          f.needs ? Cell(*f.needs, 3) : Cell()});
  }
  return table;
}

namespace {

// A figure's value in four significant digits at most ("2.5 s" reads better as 2500000000 ns
// than with three decimals, and keeps the table narrow).
Cell short_number(double v) {
  if (!std::isfinite(v)) return Cell();
  const double magnitude = std::fabs(v);
  const int digits = magnitude == 0 || magnitude >= 100
                         ? 0
                         : std::clamp(3 - static_cast<int>(std::floor(std::log10(magnitude))), 0, 6);
  return Cell(v, digits);
}

// The change as a reader says it: "+76%", "-2.5%", "x106" past a doubling, "/3.2" past a halving,
// "from 0".
std::string change_text(const FigureComparison& f) {
  if (f.before == f.after) return "0%";
  if (!std::isfinite(f.change)) return "from 0";
  const double ratio = f.after / f.before;
  if (ratio >= 2) return fmt::format("x{:.3g}", ratio);
  if (ratio > 0 && ratio <= 0.5) return fmt::format("/{:.3g}", 1 / ratio);
  // One decimal below 10%, so that a small move never reads "-0%".
  const double percent = 100 * f.change;
  if (std::fabs(percent) < 0.05) return "0.0%";
  return std::fabs(percent) < 9.95 ? fmt::format("{:+.1f}%", percent) : fmt::format("{:+.0f}%", percent);
}

// A verdict's first words: the reason in parentheses goes to a footnote.
std::string short_verdict(const std::string& verdict, std::vector<std::string>& footnotes) {
  const std::size_t open = verdict.find(" (");
  if (open == std::string::npos) return verdict;
  const auto at = std::find(footnotes.begin(), footnotes.end(), verdict);
  const std::size_t number = static_cast<std::size_t>(at - footnotes.begin()) + 1;
  if (at == footnotes.end()) footnotes.push_back(verdict);
  return fmt::format("{} [{}]", verdict.substr(0, open), number);
}

// How far a figure moved past what its allowance can call, for ranking the worst finding: the
// log of the ratio over the log of "needs".
double severity(const FigureComparison& f) {
  if (!f.needs || !(f.before > 0) || !(f.after > 0)) return std::isfinite(f.change) ? 0 : 1e9;
  return std::fabs(std::log(f.after / f.before)) / std::log(*f.needs);
}

std::string summary_line(const Comparison& c) {
  std::size_t worse = 0, better = 0, same = 0, untested = 0;
  const FigureComparison* worst = nullptr;
  for (const FigureComparison& f : c.figures) {
    if (f.verdict == "worse") {
      ++worse;
      if (!worst || worst->verdict != "worse" || severity(f) > severity(*worst)) worst = &f;
    } else if (f.verdict == "better") {
      ++better;
      if (!worst || (worst->verdict == "better" && severity(f) > severity(*worst))) worst = &f;
    } else if (f.verdict == to_string(Verdict::no_change)) {
      ++same;
    } else {
      ++untested;
    }
  }
  std::string line =
      fmt::format("summary: {} worse, {} better, {} unchanged, {} not tested", worse, better, same, untested);
  if (worst)
    line += fmt::format("; {} finding: {} {} {} -> {} ({})", worst->verdict == "worse" ? "worst" : "largest",
                        worst->scope, worst->figure, cell_text(short_number(worst->before)),
                        cell_text(short_number(worst->after)), change_text(*worst));
  return line + "\n";
}

// The table that fits 120 columns: each scope a heading row over its figures, the verdict beside
// the change ("unchanged" for no significant change), what a verdict needs, the reasons of "not
// tested" as footnotes; the p-values and tests are --wide's.
ProbeTable narrow_figures_table(const Comparison& c, std::vector<std::string>& footnotes) {
  ProbeTable table{"what it did", {"figure", "before", "after", "change", "verdict", "needs"}, {}};
  const std::string* scope = nullptr;
  for (const FigureComparison& f : c.figures) {
    if (!scope || *scope != f.scope) table.rows.push_back({f.scope, "", "", "", "", ""});
    scope = &f.scope;
    const std::string verdict = f.verdict == to_string(Verdict::no_change) ? std::string("unchanged")
                                                                           : short_verdict(f.verdict, footnotes);
    Cell verdict_text = verdict_cell(f.verdict);
    verdict_text.text = verdict;
    table.rows.push_back({"  " + f.figure, short_number(f.before), short_number(f.after), change_text(f),
                          verdict_text, f.needs ? Cell(fmt::format("x{:.2g}", *f.needs)) : Cell()});
  }
  return table;
}

}  // namespace

std::string format_comparison_table(const Comparison& c, bool wide) {
  // Paths, fingerprint fields and probe names come from the files: printable on a terminal.
  std::string out = summary_line(c);
  out +=
      fmt::format("before: {}\nafter:  {}\n\nwhat changed\n", printable(c.before_path), printable(c.after_path));
  out += c.changed.empty() ? "nothing in the fingerprint or the configuration\n" : table_text(changed_table(c));
  if (wide) {
    out +=
        "\nwhat it did (change = (after - before) / before; needs: the smallest ratio after/before its "
        "allowance can call)\n" +
        table_text(figures_table(c));
  } else {
    std::vector<std::string> footnotes;
    const std::string table = table_text(narrow_figures_table(c, footnotes));
    out +=
        "\nwhat it did (needs: the smallest change, up or down, a verdict takes at this machine's run-to-run "
        "variation)\n" +
        table;
    for (std::size_t i = 0; i < footnotes.size(); ++i)
      out += fmt::format("[{}] {}\n", i + 1, printable(footnotes[i]));
    out += "(--wide: every column, with the tests and p-values)\n";
  }
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

}  // namespace jitterd
