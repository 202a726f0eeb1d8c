// SPDX-License-Identifier: Apache-2.0
#include "compare/judging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <tuple>

#include "report/baseline_recorder.h"

namespace jitterd {
namespace {

// The figures of a sampled CPU or a loop (CpuFigures, seconds sampled_seconds) and of a watched CPU
// (WatchedFigures, seconds seconds) are judged by one skeleton: `F` is the figures type, `W` its
// sub-windows' type (F or derived from it), `seconds` the time a figure is a rate over.

// `figure` of each sub-window that saw time.
template <class F, class W>
std::vector<double> per_window(const std::vector<W>& windows, double F::*seconds,
                               const std::function<double(const W&)>& figure) {
  std::vector<double> values;
  for (const W& w : windows)
    if (w.*seconds > 0) values.push_back(figure(w));
  return values;
}

std::string rank_test_name(std::size_t before, std::size_t after) {
  return fmt::format("mann-whitney ({} vs {} sub-windows)", before, after);
}

double per_second(double value, double seconds) { return seconds > 0 ? value / seconds : 0.0; }

// A count or a time as a rate: the whole run's shown, the sub-windows' tested by rank.
template <class F>
struct RateFigure {
  std::string figure;
  std::string allowance;
  std::function<double(const F&)> value;  // over the figures' seconds
};

template <class F, class W>
void judge_rates(Comparison& out, const Judging& judging, const std::string& scope, const F& before,
                 const std::vector<W>& before_windows, const F& after, const std::vector<W>& after_windows,
                 double F::*seconds, const std::vector<RateFigure<F>>& rates) {
  for (const RateFigure<F>& rate : rates) {
    const auto in_window = [&](const F& f) { return per_second(rate.value(f), f.*seconds); };
    const std::function<double(const W&)> of_window = in_window;
    const std::vector<double> b = per_window(before_windows, seconds, of_window),
                              a = per_window(after_windows, seconds, of_window);
    out.figures.push_back(judged(judging, rate.allowance, scope, rate.figure, in_window(before), in_window(after),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
}

// The rate of gaps (or interruptions) above one tail threshold: `count` per sub-window, by the
// tail's test (the rate test with the dispersion seen between sub-windows, and the rank test).
template <class F, class W>
FigureComparison tail_rate(const Judging& judging, const std::string& allowance, const std::string& scope,
                           const std::string& figure, const std::vector<W>& before, const std::vector<W>& after,
                           double F::*seconds, const std::function<double(const W&)>& count) {
  const std::function<double(const W&)> length = [&](const W& w) { return w.*seconds; };
  const std::vector<double> b = per_window(before, seconds, count), a = per_window(after, seconds, count);
  const TailCountTest test =
      tail_count_test(b, per_window(before, seconds, length), a, per_window(after, seconds, length));
  return judged(judging, allowance, scope, figure, test.before_rate, test.after_rate,
                fmt::format("rate+rank (dispersion {:.2f})", test.dispersion), test.p);
}

}  // namespace

FigureComparison judged(const Judging& judging, const std::string& allowance, std::string scope,
                        std::string figure, double before, double after, std::string test, double p) {
  const AppliedAllowance applied = allowance_for(allowance, judging.guest, judging.settings);
  if (!applied.cv)
    return untested_figure(
        std::move(scope), std::move(figure), before, after,
        applied.source == "guest" ? "none (its run-to-run spread in a VM)" : "none (see verdict)",
        applied.untested);
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
          applied.cv,
          smallest_called_ratio(criteria)};
}

FigureComparison untested_figure(std::string scope, std::string figure, double before, double after,
                                 std::string test, std::string verdict) {
  return {std::move(scope),
          std::move(figure),
          before,
          after,
          relative_change(before, after),
          std::move(test),
          1,
          std::move(verdict),
          std::nullopt,
          std::nullopt,
          std::nullopt};
}

namespace {

// The max (or the longest) takes the verdict of the highest tail threshold either run reached, but
// never against its own direction: one stall of seconds raises the max while the rate above that
// threshold can fall (fewer gaps of a millisecond), and "better" beside a max 100x higher misleads.
// Then the max is one draw of an extreme the tail rate contradicts: no verdict, said in its test.
FigureComparison max_row(const std::string& scope, const char* figure, double before, double after,
                         const FigureComparison& tail) {
  FigureComparison row = tail;  // the tail's test, p, verdict, run-to-run p, allowance and needs
  row.scope = scope;
  row.figure = figure;
  row.before = before;
  row.after = after;
  row.change = relative_change(before, after);
  const bool against = (row.verdict == to_string(Verdict::better) && after > before) ||
                       (row.verdict == to_string(Verdict::worse) && after < before);
  if (against) {
    row.test += fmt::format(" (that rate {}, the max {}: not called)", row.verdict == "better" ? "fell" : "rose",
                            after > before ? "rose" : "fell");
    row.verdict = std::string(to_string(Verdict::no_change));
  }
  return row;
}

// The share of the run a CPU's sampler was meant to sample: its duty cycle as the run's
// configuration gives it ("continuous", a ratio, or per CPU "1:0.1 2:0.1"); 1 where it says none
// or something else.
double planned_duty_cycle(const Baseline& run, int cpu) {
  const std::string value = per_cpu_value(field_value(run.configuration, "duty_cycle"), cpu);
  char* end = nullptr;
  const double ratio = std::strtod(value.c_str(), &end);
  return !value.empty() && *end == '\0' && ratio > 0 && ratio < 1 ? ratio : 1.0;
}

}  // namespace

// The percentiles, interruptions and stolen share: the whole run's figure is shown, the sub-windows
// are tested. Tail rates above fixed thresholds by the rate test; the max by the highest of them.
void compare_cpu(Comparison& out, const Baseline& before_run, const BaselineCpu& before, const Baseline& after_run,
                 const BaselineCpu& after, const Judging& judging) {
  compare_gaps(out, {fmt::format("cpu {}", before.cpu), before_run.counter_hertz, after_run.counter_hertz},
               before_run, before, after_run, after, judging);
  // A CPU offline for part of a run (or its sampler taken off it) was not sampled meanwhile: the
  // file holds no sub-window for that time (baseline_recorder.h add_sub_window), so the run's
  // sampled seconds fall short of its duration (times the duty cycle of a sampler in bursts).
  // Said on that CPU, beside its figures.
  for (const auto& [run, cpu, path] :
       {std::tuple{&before_run, &before, &out.before_path}, std::tuple{&after_run, &after, &out.after_path}}) {
    const double missing = run->duration_seconds * planned_duty_cycle(*run, cpu->cpu) - cpu->sampled_seconds;
    if (missing > std::max(2 * run->sub_window_seconds, 0.05 * run->duration_seconds))
      out.notes.push_back(
          fmt::format("cpu {}: not sampled for {:.1f} s of the {:.0f} s of {} (offline for that time, or its "
                      "sampler taken off "
                      "it): its figures cover the {:.1f} s sampled (a max_ns of seconds may span the CPU's going)",
                      cpu->cpu, missing, run->duration_seconds, *path, cpu->sampled_seconds));
  }
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
    const std::function<double(const SubWindow&)> field = [&](const SubWindow& w) { return w.*quantile.field; };
    const std::vector<double> b = per_window(before.sub_windows, &CpuFigures::sampled_seconds, field),
                              a = per_window(after.sub_windows, &CpuFigures::sampled_seconds, field);
    out.figures.push_back(judged(judging, gap_scope.allowances + "." + quantile.name, scope, quantile.name,
                                 baseline_quantile_ns(before_run, before, quantile.q, gap_scope.before_hertz),
                                 baseline_quantile_ns(after_run, after, quantile.q, gap_scope.after_hertz),
                                 rank_test_name(b.size(), a.size()), mann_whitney_p(b, a)));
  }
  judge_rates<CpuFigures, SubWindow>(out, judging, scope, before, before.sub_windows, after, after.sub_windows,
                                     &CpuFigures::sampled_seconds,
                                     {{"interruptions_per_s", gap_scope.allowances + ".interruptions_per_s",
                                       [](const CpuFigures& f) { return static_cast<double>(f.interruptions); }},
                                      {"stolen_share", gap_scope.allowances + ".stolen_share",
                                       [](const CpuFigures& f) { return f.stolen_seconds; }}});
  // What the max row takes when no tail row is there to judge it: a test's name and a verdict.
  FigureComparison tail = untested_figure(scope, "", 0, 0, "rate of gaps above the highest threshold reached",
                                          std::string(to_string(Verdict::no_change)));
  for (std::size_t t = 0; t < before_run.tail_thresholds_ns.size(); ++t) {
    const double threshold_us = before_run.tail_thresholds_ns[t] / 1000;
    FigureComparison row = tail_rate<CpuFigures, SubWindow>(
        judging, gap_scope.allowances + ".tail_rates", scope, fmt::format("gaps_over_{}us_per_s", threshold_us),
        before.sub_windows, after.sub_windows, &CpuFigures::sampled_seconds,
        [&](const SubWindow& w) { return static_cast<double>(w.over_threshold[t]); });
    if (std::max(before.max_ns, after.max_ns) >= before_run.tail_thresholds_ns[t]) {
      tail = row;
      tail.test = fmt::format("as gaps_over_{}us_per_s", threshold_us);
    }
    out.figures.push_back(std::move(row));
  }
  out.figures.push_back(max_row(scope, "max_ns", before.max_ns, after.max_ns, tail));
}

namespace {

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
  judge_rates<WatchedFigures, WatchedFigures>(
      out, judging, scope, before, before.sub_windows, after, after.sub_windows, &WatchedFigures::seconds,
      {{"interruptions_per_s", "watch.interruptions_per_s",
        [](const WatchedFigures& f) { return static_cast<double>(f.interruptions); }},
       {"preemptions_per_s", "watch.preemptions_per_s",
        [](const WatchedFigures& f) { return static_cast<double>(f.preemptions); }},
       {"stolen_share", "watch.stolen_share", [](const WatchedFigures& f) { return f.stolen_seconds; }}});
  FigureComparison tail =
      untested_figure(scope, "", 0, 0, "rate of interruptions above the highest threshold reached",
                      "not tested (no tail count known above the longest)");
  const double before_longest = before.longest_ns.value_or(0), after_longest = after.longest_ns.value_or(0);
  for (std::size_t t = 0; t < before_run.tail_thresholds_ns.size(); ++t) {
    const double threshold_us = before_run.tail_thresholds_ns[t] / 1000;
    const std::string figure = fmt::format("interruptions_over_{}us_per_s", threshold_us);
    const bool reached = std::max(before_longest, after_longest) >= before_run.tail_thresholds_ns[t];
    if (!tail_known(before, t) || !tail_known(after, t)) {
      const BaselineWatched& unknown = tail_known(before, t) ? after : before;
      if (reached)
        tail = untested_figure(scope, "", 0, 0, fmt::format("as {}", figure),
                               fmt::format("not tested ({} is unknown)", figure));
      out.notes.push_back(fmt::format("{}: {} left out, its count is unknown in {}: {}", scope, figure,
                                      &unknown == &before ? out.before_path : out.after_path,
                                      unknown.tail_unknown.empty() ? "no count recorded" : unknown.tail_unknown));
      continue;
    }
    FigureComparison row = tail_rate<WatchedFigures, WatchedFigures>(
        judging, "watch.tail_rates", scope, figure, before.sub_windows, after.sub_windows,
        &WatchedFigures::seconds,
        [&](const WatchedFigures& f) { return static_cast<double>(*f.over_threshold[t]); });
    if (reached) {
      tail = row;
      tail.test = fmt::format("as {}", figure);
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
    tail.verdict = std::string(to_string(Verdict::no_change));
  out.figures.push_back(max_row(scope, "longest_ns", before_longest, after_longest, tail));
}

}  // namespace jitterd
