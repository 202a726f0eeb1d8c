// SPDX-License-Identifier: Apache-2.0
#include "compare/judging.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace jitterd {
namespace {

std::vector<double> per_window(const BaselineCpu& cpu, const std::function<double(const SubWindow&)>& figure) {
  std::vector<double> values;
  for (const SubWindow& w : cpu.sub_windows)
    if (w.sampled_seconds > 0) values.push_back(figure(w));
  return values;
}

std::string rank_test_name(std::size_t before, std::size_t after) {
  return fmt::format("mann-whitney ({} vs {} sub-windows)", before, after);
}

}  // namespace

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
  compare_gaps(out, {fmt::format("cpu {}", before.cpu), before_run.counter_hertz, after_run.counter_hertz},
               before_run, before, after_run, after, judging);
}

void compare_gaps(Comparison& out, const GapScope& gap_scope, const Baseline& before_run,
                  const BaselineCpu& before, const Baseline& after_run, const BaselineCpu& after,
                  const Judging& judging) {
  const std::string& scope = gap_scope.scope;
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
    out.figures.push_back(judged(judging, gap_scope.allowances + "." + quantile.name, scope, quantile.name,
                                 baseline_quantile_ns(before_run, before, quantile.q, gap_scope.before_hertz),
                                 baseline_quantile_ns(after_run, after, quantile.q, gap_scope.after_hertz),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  const auto per_second = [](double value, double seconds) { return seconds > 0 ? value / seconds : 0.0; };
  {
    const auto rate = [&](const SubWindow& w) {
      return per_second(static_cast<double>(w.interruptions), w.sampled_seconds);
    };
    const std::vector<double> b = per_window(before, rate), a = per_window(after, rate);
    out.figures.push_back(judged(judging, gap_scope.allowances + ".interruptions_per_s", scope,
                                 "interruptions_per_s",
                                 per_second(static_cast<double>(before.interruptions), before.sampled_seconds),
                                 per_second(static_cast<double>(after.interruptions), after.sampled_seconds),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  {
    const auto share = [&](const SubWindow& w) { return per_second(w.stolen_seconds, w.sampled_seconds); };
    const std::vector<double> b = per_window(before, share), a = per_window(after, share);
    out.figures.push_back(judged(judging, gap_scope.allowances + ".stolen_share", scope, "stolen_share",
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
    for (const SubWindow& w : before.sub_windows) b_total += count(w), b_seconds += w.sampled_seconds;
    for (const SubWindow& w : after.sub_windows) a_total += count(w), a_seconds += w.sampled_seconds;
    const double dispersion = count_dispersion(b, a);
    const double p = rate_ratio_p(static_cast<std::uint64_t>(b_total), b_seconds,
                                  static_cast<std::uint64_t>(a_total), a_seconds, dispersion);
    const double threshold_us = before_run.tail_thresholds_ns[t] / 1000;
    FigureComparison row =
        judged(judging, gap_scope.allowances + ".tail_rates", scope,
               fmt::format("gaps_over_{}us_per_s", threshold_us), per_second(b_total, b_seconds),
               per_second(a_total, a_seconds), fmt::format("rate (dispersion {:.2f})", dispersion), p);
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

namespace {

std::vector<double> per_watched_window(const BaselineWatched& w,
                                       const std::function<double(const WatchedFigures&)>& figure) {
  std::vector<double> values;
  for (const WatchedFigures& f : w.sub_windows)
    if (f.seconds > 0) values.push_back(figure(f));
  return values;
}

// Whether every sub-window of `w` knows its count above tail threshold t.
bool tail_known(const BaselineWatched& w, std::size_t t) {
  return std::all_of(w.sub_windows.begin(), w.sub_windows.end(),
                     [&](const WatchedFigures& f) { return f.over_threshold.size() > t && f.over_threshold[t]; });
}

}  // namespace

void compare_watched(Comparison& out, const Baseline& before_run, const BaselineWatched& before,
                     const Baseline& after_run, const BaselineWatched& after, const Judging& judging) {
  (void)after_run;  // check_comparable made the thresholds the same
  const std::string scope = fmt::format("watched cpu {}", before.cpu);
  const auto per_second = [](double value, double seconds) { return seconds > 0 ? value / seconds : 0.0; };
  struct Rate {
    const char* figure;
    const char* allowance;
    std::function<double(const WatchedFigures&)> value;
  };
  const Rate rates[] = {
      {"interruptions_per_s", "watch.interruptions_per_s",
       [](const WatchedFigures& f) { return static_cast<double>(f.interruptions); }},
      {"preemptions_per_s", "watch.preemptions_per_s",
       [](const WatchedFigures& f) { return static_cast<double>(f.preemptions); }},
      {"stolen_share", "watch.stolen_share", [](const WatchedFigures& f) { return f.stolen_seconds; }},
  };
  for (const Rate& rate : rates) {
    const auto in_window = [&](const WatchedFigures& f) { return per_second(rate.value(f), f.seconds); };
    const std::vector<double> b = per_watched_window(before, in_window), a = per_watched_window(after, in_window);
    out.figures.push_back(judged(judging, rate.allowance, scope, rate.figure, in_window(before), in_window(after),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  std::string max_verdict = "not tested (no tail count known above the longest)";
  std::string max_test = "rate of interruptions above the highest threshold reached";
  double max_p = 1;
  std::optional<double> max_run_to_run_p, max_allowance;
  const double before_longest = before.longest_ns.value_or(0), after_longest = after.longest_ns.value_or(0);
  for (std::size_t t = 0; t < before_run.tail_thresholds_ns.size(); ++t) {
    const double threshold_us = before_run.tail_thresholds_ns[t] / 1000;
    const std::string figure = fmt::format("interruptions_over_{}us_per_s", threshold_us);
    const bool reached = std::max(before_longest, after_longest) >= before_run.tail_thresholds_ns[t];
    if (!tail_known(before, t) || !tail_known(after, t)) {
      const BaselineWatched& unknown = tail_known(before, t) ? after : before;
      if (reached) {
        max_verdict = fmt::format("not tested ({} is unknown)", figure);
        max_test = fmt::format("as {}", figure);
        max_p = 1;
        max_run_to_run_p.reset();
        max_allowance.reset();
      }
      out.notes.push_back(fmt::format("{}: {} left out, its count is unknown in {}: {}", scope, figure,
                                      &unknown == &before ? out.before_path : out.after_path,
                                      unknown.tail_unknown.empty() ? "no count recorded" : unknown.tail_unknown));
      continue;
    }
    const auto count = [&](const WatchedFigures& f) { return static_cast<double>(*f.over_threshold[t]); };
    const std::vector<double> b = per_watched_window(before, count), a = per_watched_window(after, count);
    double b_total = 0, a_total = 0, b_seconds = 0, a_seconds = 0;
    for (const WatchedFigures& f : before.sub_windows) b_total += count(f), b_seconds += f.seconds;
    for (const WatchedFigures& f : after.sub_windows) a_total += count(f), a_seconds += f.seconds;
    const double dispersion = count_dispersion(b, a);
    const double p = rate_ratio_p(static_cast<std::uint64_t>(b_total), b_seconds,
                                  static_cast<std::uint64_t>(a_total), a_seconds, dispersion);
    FigureComparison row =
        judged(judging, "watch.tail_rates", scope, figure, per_second(b_total, b_seconds),
               per_second(a_total, a_seconds), fmt::format("rate (dispersion {:.2f})", dispersion), p);
    if (reached) {
      max_verdict = row.verdict;
      max_test = fmt::format("as {}", figure);
      max_p = p;
      max_run_to_run_p = row.run_to_run_p;
      max_allowance = row.allowance;
    }
    out.figures.push_back(std::move(row));
  }
  if (!before.longest_ns || !after.longest_ns) {
    out.notes.push_back(fmt::format("{}: longest_ns left out, unknown in {}", scope,
                                    before.longest_ns ? out.after_path : out.before_path));
    return;
  }
  // Both longest below every threshold: no tail rate is reached, and none changed.
  if (std::max(before_longest, after_longest) < before_run.tail_thresholds_ns.front())
    max_verdict = std::string(to_string(Verdict::no_change));
  out.figures.push_back({scope, "longest_ns", before_longest, after_longest,
                         relative_change(before_longest, after_longest), max_test, max_p, max_verdict,
                         max_run_to_run_p, max_allowance});
}

}  // namespace jitterd
