// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "fleet/fleet_answers.h"
#include "fleet/fleet_rows.h"
#include "host/text.h"
#include "report/baseline_file.h"
#include "report/render.h"

namespace jitterd {

std::vector<double> host_values(const FleetHost& host, std::size_t cpu_figures) {
  std::vector<double> out;
  for (std::size_t f = 0; f < cpu_figures; ++f) {
    std::vector<double> per_cpu;
    for (const auto& [cpu, values] : host.cpus)
      if (f < values.size() && !std::isnan(values[f])) per_cpu.push_back(values[f]);
    out.push_back(per_cpu.empty() ? NAN : *std::max_element(per_cpu.begin(), per_cpu.end()));
    out.push_back(median_of(per_cpu));
  }
  return out;
}

namespace {

// Identical hardware within one cohort: the cohort comparison answers for the --by field, so a
// cohort that differs from the rest of its hardware is not a set of drifted hosts.
std::string class_key(const FleetHost& h, const FleetSelection& selection) {
  std::string key = "cpu_model=" + label_of(h.fingerprint, "cpu_model");
  if (selection.by != "cpu_model") key += "," + selection.by + "=" + label_of(h.fingerprint, selection.by);
  for (const std::string& field : selection.class_fields)
    key += "," + field + "=" + label_of(h.fingerprint, field);
  return key;
}

std::string chosen_reference(const std::map<std::string, std::vector<HostValues>>& cohorts,
                             const std::string& asked, const std::string& by) {
  if (!asked.empty()) {
    if (cohorts.count(asked) != 0) return asked;
    std::vector<std::string> values;
    for (const auto& [value, hosts] : cohorts) values.push_back("\"" + value + "\"");
    throw BaselineError(kExitFleetUsage, fmt::format("--reference \"{}\": no host has {}=\"{}\" in the range; the "
                                                     "cohorts are {}",
                                                     asked, by, asked, fmt::join(values, ", ")));
  }
  std::string largest;
  std::size_t most = 0;
  for (const auto& [value, hosts] : cohorts)
    if (hosts.size() > most) largest = value, most = hosts.size();
  return largest;
}

// Per cohort with a row of too few hosts: the most hosts any of its figures could compare.
std::vector<std::string> cohort_reasons(const FleetReport& r) {
  std::map<std::string, std::pair<std::size_t, std::size_t>> comparable;  // cohort: reference, other
  std::map<std::string, std::size_t> too_few, rows;
  for (const auto& [value, c] : r.comparisons) {
    auto& [reference, other] = comparable[value];
    reference = std::max(reference, c.test.reference);
    other = std::max(other, c.test.other);
    too_few[value] += c.finding == Finding::too_few_hosts;
    ++rows[value];
  }
  std::vector<std::string> out;
  for (const auto& [value, counts] : comparable) {
    if (too_few[value] == 0) continue;
    const std::size_t hosts = r.cohort_hosts.count(value) != 0 ? r.cohort_hosts.at(value).size() : 0;
    out.push_back(fmt::format(
        "{}=\"{}\": {} of {} figure rows not tested: {} of its {} hosts and {} of the reference's share a CPU "
        "model with the other side; a test needs {} on each side (--min-hosts)",
        r.by, value, too_few[value], rows[value], counts.second, hosts, counts.first, r.criteria.min_hosts));
  }
  return out;
}

std::vector<std::string> not_judged_reasons(const FleetReport& r) {
  std::vector<std::string> out = cohort_reasons(r);
  const std::size_t reference_hosts =
      r.cohort_hosts.count(r.reference) != 0 ? r.cohort_hosts.at(r.reference).size() : 0;
  if (r.aa.judged == 0)
    out.push_back(fmt::format(
        "A/A false alarm rate not measured: the reference cohort ({}=\"{}\", {} hosts) split in halves within "
        "each "
        "CPU model never gives both halves the {} comparable hosts a test needs (--min-hosts): it takes at least "
        "{} hosts of one CPU model",
        r.by, r.reference, reference_hosts, r.criteria.min_hosts, 2 * r.criteria.min_hosts));
  std::size_t small = 0;
  for (const HardwareClass& c : r.drift.classes) {
    if (c.judged) continue;
    if (++small <= 10)
      out.push_back(fmt::format("drift: class {}: {} host{}, fewer than the {} a class needs to be judged",
                                c.class_key, c.hosts, c.hosts == 1 ? "" : "s", r.drift_criteria.min_class));
  }
  if (small > 10)
    out.push_back(fmt::format("drift: {} more classes of too few hosts (see the classes table)", small - 10));
  return out;
}

}  // namespace

FleetReport analyse_fleet(const FleetHistory& history, const FleetSelection& selection,
                          const FleetOptions& options) {
  FleetReport r;
  r.by = selection.by;
  r.where = selection.where;
  r.range = selection.range.text;
  r.criteria = options.criteria;
  r.drift_criteria = options.drift;
  r.left_out = history.left_out;
  r.notes = history.notes;
  r.queries = history.queries;
  r.reads = history.reads;
  const bool guest = std::any_of(history.hosts.begin(), history.hosts.end(), [](const FleetHost& h) {
    return label_of(h.fingerprint, "hypervisor") == "yes";
  });
  FleetRows rows = fleet_rows(history, selection.range.end - selection.range.start, guest);
  const std::vector<FigureSpec>& figures = rows.specs;
  std::map<std::string, std::vector<HostValues>> cohorts;
  std::vector<ClassedHost> classed;
  for (std::size_t i = 0; i < history.hosts.size(); ++i) {
    const FleetHost& h = history.hosts[i];
    HostValues v{h.instance, label_of(h.fingerprint, "cpu_model"), std::move(rows.values[i])};
    cohorts[label_of(h.fingerprint, selection.by)].push_back(v);
    classed.push_back({v, class_key(h, selection), h.fingerprint});
  }
  r.reference = chosen_reference(cohorts, options.reference, selection.by);
  for (const auto& [value, hosts] : cohorts) r.cohorts.push_back({value, hosts.size(), value == r.reference});
  if (cohorts.size() < 2)
    r.notes.push_back(
        fmt::format("every host has {}=\"{}\": one cohort, nothing to compare (the drifted hosts "
                    "are still judged)",
                    selection.by, r.reference));
  for (const auto& [value, hosts] : cohorts) {
    if (value == r.reference) continue;
    for (CohortFigure& c : compare_cohort(figures, cohorts[r.reference], hosts, options.criteria))
      r.comparisons.emplace_back(value, std::move(c));
  }
  std::set<std::string> reference_models;
  for (const HostValues& h : cohorts[r.reference]) reference_models.insert(h.stratum);
  for (const auto& [value, hosts] : cohorts)
    if (value != r.reference && std::none_of(hosts.begin(), hosts.end(), [&](const HostValues& h) {
          return reference_models.count(h.stratum) != 0;
        }))
      r.notes.push_back(
          fmt::format("{}=\"{}\": no host shares a CPU model with the reference cohort, so none is "
                      "compared (like against like only)",
                      selection.by, value));
  std::vector<CohortFigure*> family;
  for (auto& [value, c] : r.comparisons) family.push_back(&c);
  judge_family(family, options.criteria);
  r.tests = static_cast<std::size_t>(std::count_if(
      family.begin(), family.end(), [](const CohortFigure* c) { return c->finding != Finding::too_few_hosts; }));
  r.aa = aa_false_alarm_rate(figures, cohorts[r.reference], options.criteria, options.aa_splits, options.aa_seed);
  r.drift = find_drifted_hosts(figures, classed, options.drift);
  r.figures = figures;
  r.cohort_hosts = std::move(cohorts);
  r.not_judged = not_judged_reasons(r);
  r.not_judged.insert(r.not_judged.end(), rows.not_judged.begin(), rows.not_judged.end());
  return r;
}

namespace {

Cell number(double v, int digits) { return std::isfinite(v) ? Cell(v, digits) : Cell(); }

// Digits enough for a figure: nanoseconds whole, rates and shares to four significant digits.
int digits_for(double v) {
  if (!std::isfinite(v) || v == 0 || std::fabs(v) >= 100) return 0;
  return std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(v)))), 0, 9);
}

}  // namespace

ProbeTable fleet_cohorts_table(const FleetReport& r) {
  ProbeTable t{"cohorts", {r.by, "hosts", "reference"}, {}, TableShape::rows};
  for (const CohortRow& c : r.cohorts) t.rows.push_back({c.value, c.hosts, Cell(c.reference)});
  return t;
}

ProbeTable fleet_comparisons_table(const FleetReport& r) {
  ProbeTable t{"comparisons",
               {r.by, "figure", "verdict", "reference_hosts", "hosts", "reference_median", "median", "shift",
                "shift_low", "shift_high", "change_percent", "floor", "p", "adjusted_p"},
               {},
               TableShape::rows};
  for (const auto& [value, c] : r.comparisons) {
    const double change = c.reference_median != 0 ? 100 * c.test.shift / c.reference_median : NAN;
    Cell verdict{std::string(to_string(c.finding))};
    if (c.finding == Finding::worse || c.finding == Finding::better) verdict.html_class = verdict.text;
    t.rows.push_back({value, c.figure, verdict, c.test.reference, c.test.other,
                      number(c.reference_median, digits_for(c.reference_median)),
                      number(c.other_median, digits_for(c.other_median)),
                      number(c.test.shift, digits_for(c.test.shift)), number(c.test.low, digits_for(c.test.low)),
                      number(c.test.high, digits_for(c.test.high)), number(change, 1),
                      number(c.floor, digits_for(c.floor)), number(c.test.p, 6), number(c.adjusted_p, 6)});
  }
  return t;
}

ProbeTable fleet_hosts_table(const FleetReport& r) {
  ProbeTable t{"hosts", {"host", r.by, "cpu_model"}, {}, TableShape::rows};
  for (const FigureSpec& f : r.figures) t.columns.push_back(f.name);
  for (const auto& [cohort, hosts] : r.cohort_hosts)
    for (const HostValues& h : hosts) {
      std::vector<Cell> row{h.host, cohort, h.stratum};
      for (double v : h.values) row.push_back(number(v, digits_for(v)));
      t.rows.push_back(std::move(row));
    }
  return t;
}

ProbeTable fleet_drift_table(const FleetReport& r) {
  ProbeTable t{"drifted hosts",
               {"host", "class", "figure", "value", "class_median", "ratio", "differs_in"},
               {},
               TableShape::rows};
  for (const DriftedHost& h : r.drift.hosts)
    for (const DriftedFigure& f : h.figures)
      t.rows.push_back({h.host, h.class_key, f.figure, number(f.value, digits_for(f.value)),
                        number(f.class_median, digits_for(f.class_median)), number(f.ratio, 2),
                        fmt::format("{}", fmt::join(h.differing_fields, " "))});
  return t;
}

ProbeTable fleet_classes_table(const FleetReport& r) {
  ProbeTable t{"classes", {"class", "hosts", "judged"}, {}, TableShape::rows};
  for (const HardwareClass& c : r.drift.classes) t.rows.push_back({c.class_key, c.hosts, Cell(c.judged)});
  return t;
}

std::string fleet_aa_line(const FleetReport& r) {
  if (r.aa.judged == 0)
    return fmt::format(
        "A/A: not measured: no halving of the reference cohort ({}=\"{}\") holds {} comparable hosts a side, "
        "so there is no false alarm rate to state (see \"Not judged\")",
        r.by, r.reference, r.criteria.min_hosts);
  return fmt::format(
      "A/A: {} of {} random halvings of the reference cohort ({}=\"{}\") gave a verdict: a false alarm rate of "
      "{:.1f}% on this fleet's own data (alpha {} after {} over {} tests)",
      r.aa.with_verdict, r.aa.splits, r.by, r.reference, 100 * r.aa.rate(), r.criteria.alpha,
      to_string(r.criteria.adjustment), r.tests);
}

namespace {

std::string drift_lines(const FleetReport& r) {
  std::string text;
  for (const DriftedHost& h : r.drift.hosts) {
    std::vector<std::string> parts;
    for (const DriftedFigure& f : h.figures)
      parts.push_back(fmt::format("{} {:.3g}x its class", f.figure, f.ratio));
    text += fmt::format("  {}: {}; {}\n", h.host, fmt::join(parts, ", "),
                        h.differing_fields.empty()
                            ? std::string("differs from its class's majority in no field")
                            : fmt::format("differs in {}", fmt::join(h.differing_fields, ", ")));
  }
  return text;
}

}  // namespace

ProbeTable fleet_reads_table(const FleetReport& r) {
  ProbeTable t{"read_in_full", {"host", "why"}, {}, TableShape::rows};
  for (const FleetRead& read : r.reads.in_full) t.rows.push_back({read.instance, read.why});
  return t;
}

std::string fleet_reads_line(const FleetReport& r) {
  return fmt::format(
      "{} hosts read at the range's two ends ({} of them started inside it, counted from zero), {} read in full "
      "(increase over the range); scrape interval {:.3g} s (inferred), lookback {:.3g} s; {} queries",
      r.reads.at_ends, r.reads.started_inside, r.reads.in_full.size(), r.reads.scrape_interval, r.reads.lookback,
      r.queries);
}

std::string fleet_text(const FleetReport& r) {
  std::string text = fmt::format("jitterd fleet: {}, cohorts by {}{}; reference {}=\"{}\"\n", r.range, r.by,
                                 r.where.empty() ? "" : " where " + r.where, r.by, r.reference);
  text += fleet_aa_line(r) + "\n\n";
  text += "Cohorts\n" + table_text(fleet_cohorts_table(r)) + "\n";
  std::size_t verdicts = 0;
  for (const auto& [value, c] : r.comparisons)
    verdicts += c.finding == Finding::worse || c.finding == Finding::better;
  const std::size_t untested = r.comparisons.size() - r.tests;
  text += fmt::format(
      "Comparisons with the reference ({} verdicts{}; hosts as the unit, the worst and the median CPU "
      "of each; shift: Hodges-Lehmann, cohort - reference, {:.0f}% interval)\n",
      verdicts,
      r.tests == 0 && !r.comparisons.empty() ? ": none could be tested, too few hosts"
      : untested > 0 ? fmt::format(", {} of {} rows not tested: too few hosts", untested, r.comparisons.size())
                     : std::string(),
      100 * r.criteria.confidence);
  text += table_text(fleet_comparisons_table(r)) + "\n";
  const std::size_t judged = static_cast<std::size_t>(std::count_if(
      r.drift.classes.begin(), r.drift.classes.end(), [](const HardwareClass& c) { return c.judged; }));
  if (judged == 0)
    text += fmt::format("Drifted hosts: not judged: no class has the {} hosts drift needs (see \"Not judged\")\n",
                        r.drift_criteria.min_class);
  else
    text += fmt::format(
        "Drifted hosts ({}) in the {} of {} classes judged: beyond {} robust standard deviations of their class "
        "(median, MAD)\n",
        r.drift.hosts.size(), judged, r.drift.classes.size(), r.drift_criteria.k);
  text += drift_lines(r);
  if (!r.drift.hosts.empty()) text += table_text(fleet_drift_table(r));
  text += "\nClasses\n" + table_text(fleet_classes_table(r));
  text += "\nReads: " + fleet_reads_line(r) + "\n";
  if (!r.reads.in_full.empty()) text += "Read in full\n" + table_text(fleet_reads_table(r));
  if (!r.not_judged.empty())
    text += "\nNot judged\n  " + fmt::format("{}", fmt::join(r.not_judged, "\n  ")) + "\n";
  if (!r.left_out.empty()) text += "\nLeft out\n  " + fmt::format("{}", fmt::join(r.left_out, "\n  ")) + "\n";
  if (!r.notes.empty()) text += "\nNotes\n  " + fmt::format("{}", fmt::join(r.notes, "\n  ")) + "\n";
  // Host names, cohort values and fingerprint fields come from Prometheus's answers: every line
  // printable on a terminal (the tables already are; printable leaves them as they are).
  return printable_lines(text);
}

std::string fleet_csv(const FleetReport& r) {
  return table_csv(fleet_cohorts_table(r)) + "\n" + table_csv(fleet_comparisons_table(r)) + "\n" +
         table_csv(fleet_drift_table(r)) + "\n" + table_csv(fleet_classes_table(r)) + "\n" +
         table_csv(fleet_reads_table(r));
}

std::string fleet_json(const FleetReport& r) {
  return json_text(Json{{"range", r.range},
                        {"by", r.by},
                        {"where", r.where},
                        {"reference", r.reference},
                        {"alpha", r.criteria.alpha},
                        {"adjustment", std::string(to_string(r.criteria.adjustment))},
                        {"tests", r.tests},
                        {"aa", Json{{"splits", r.aa.splits},
                                    {"with_verdict", r.aa.with_verdict},
                                    {"rate", r.aa.rate()},
                                    {"judged", r.aa.judged}}},
                        {"cohorts", table_records(fleet_cohorts_table(r))},
                        {"comparisons", table_records(fleet_comparisons_table(r))},
                        {"drifted_hosts", table_records(fleet_drift_table(r))},
                        {"classes", table_records(fleet_classes_table(r))},
                        {"hosts", table_records(fleet_hosts_table(r))},
                        {"left_out", r.left_out},
                        {"notes", r.notes},
                        {"not_judged", r.not_judged},
                        {"queries", r.queries},
                        {"reads", Json{{"scrape_interval_seconds", r.reads.scrape_interval},
                                       {"lookback_seconds", r.reads.lookback},
                                       {"at_ends", r.reads.at_ends},
                                       {"started_inside", r.reads.started_inside},
                                       {"in_full", table_records(fleet_reads_table(r))}}}});
}

}  // namespace jitterd
