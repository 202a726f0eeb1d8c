// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "compare/allowances.h"
#include "fleet/fleet_report.h"

namespace jitterd {

std::string watched_allowance(const std::string& figure) {
  if (figure.rfind("interruptions_over_", 0) == 0) return "watch.tail_rates";
  if (figure == "preemptions_per_s") return "watch.preemptions_per_s";
  if (figure == "preempted_share" || figure == "stolen_share") return "watch.stolen_share";
  return "watch.interruptions_per_s";  // irqs, the tick, softirqs, paired interruptions, tick-stop failures
}

std::string loop_allowance(const std::string& figure) {
  return figure.rfind("gaps_over_", 0) == 0 ? "loop.tail_rates" : "loop." + figure;
}

namespace {

// The allowance of a sampled CPU's figure.
std::string sampled_allowance(const std::string& figure) {
  return figure.rfind("gaps_over_", 0) == 0 ? "gaps.tail_rates" : "gaps." + figure;
}

bool is_quantile(const std::string& name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, "_ns") == 0;
}

FigureSpec spec_of(const std::string& row, const std::string& figure, const std::string& allowance,
                   double range_seconds, bool guest) {
  const double cv = allowance_for(allowance, guest, {}).cv.value_or(0.5);
  // A rate or a share: one event (or second) over the range, so that a zero has a log.
  return {row, cv, is_quantile(figure) ? 0 : 1 / std::max(1.0, range_seconds)};
}

// Each of `names` twice, `prefix` before it: the host's worst and its median unit ("p99_ns (worst CPU)").
std::vector<FigureSpec> worst_and_median(const std::vector<std::string>& names, const std::string& prefix,
                                         std::string (*allowance)(const std::string&), double range_seconds,
                                         bool guest) {
  std::vector<FigureSpec> out;
  for (const std::string& name : names)
    for (const char* which : {" (worst CPU)", " (median CPU)"})
      out.push_back(spec_of(prefix + name + which, name, allowance(name), range_seconds, guest));
  return out;
}

// One application-side side's rows: `names` per unit of FleetHost::*units, reduced by `reduce`.
struct Side {
  std::vector<FigureSpec> specs;
  std::vector<std::vector<double>> values;  // per host
};

// The watched CPUs' rows: worst and median over the host's watched CPUs, as the sampled CPUs'.
Side watched_side(const FleetHistory& history, double range_seconds, bool guest) {
  Side side;
  const std::vector<std::string>& names = history.watched_figure_names;
  side.specs = worst_and_median(names, "watched ", watched_allowance, range_seconds, guest);
  for (const FleetHost& h : history.hosts) {
    FleetHost units;
    units.cpus = h.watched;
    side.values.push_back(host_values(units, names.size()));
  }
  return side;
}

// Each loop's rows: its one value per host.
Side loop_side(const FleetHistory& history, double range_seconds, bool guest) {
  Side side;
  std::vector<std::size_t> order(history.loop_names.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return history.loop_names[a] < history.loop_names[b]; });
  const std::vector<std::string>& names = history.loop_figure_names;
  for (std::size_t loop : order)
    for (const std::string& name : names)
      side.specs.push_back(spec_of(fmt::format("loop {}: {}", history.loop_names[loop], name), name,
                                   loop_allowance(name), range_seconds, guest));
  for (const FleetHost& h : history.hosts) {
    std::vector<double> values;
    for (std::size_t loop : order) {
      const auto it = h.loops.find(static_cast<int>(loop));
      for (std::size_t f = 0; f < names.size(); ++f)
        values.push_back(it != h.loops.end() && f < it->second.size() ? it->second[f] : NAN);
    }
    side.values.push_back(std::move(values));
  }
  return side;
}

std::size_t hosts_with(const FleetHistory& history, std::map<int, std::vector<double>> FleetHost::*units) {
  return static_cast<std::size_t>(std::count_if(history.hosts.begin(), history.hosts.end(),
                                                [&](const FleetHost& h) { return !(h.*units).empty(); }));
}

// What the application's side could not judge: hosts without a watch or a loop, rows no host has.
std::vector<std::string> side_reasons(const FleetHistory& history, const std::vector<std::string>& empty_watched) {
  std::vector<std::string> out;
  const std::size_t hosts = history.hosts.size(), watched = hosts_with(history, &FleetHost::watched);
  if (watched == 0)
    out.push_back(
        "watched CPUs: no host has jitterd_watch_ counters in the range (no watch: section): no watched rows");
  else if (watched < hosts)
    out.push_back(fmt::format(
        "watched CPUs: {} of {} hosts have none in the range (no watch: section): absent from the watched rows, "
        "not counted as zero",
        hosts - watched, hosts));
  if (!empty_watched.empty())
    out.push_back(
        fmt::format("watched {}: no host exports it (the bpf and tracepoints watch methods time every "
                    "cause and pair interruptions; the counts method does not): no row",
                    fmt::join(empty_watched, ", ")));
  if (history.loop_names.empty()) {
    out.push_back("loops: no host has jitterd_loop_ counters in the range (no loops: section): no loop rows");
    return out;
  }
  for (const std::string& name : history.loop_names) {
    const int index = static_cast<int>(&name - history.loop_names.data());
    const std::size_t with =
        static_cast<std::size_t>(std::count_if(history.hosts.begin(), history.hosts.end(),
                                               [&](const FleetHost& h) { return h.loops.count(index) != 0; }));
    if (with < hosts)
      out.push_back(
          fmt::format("loop {}: on {} of {} hosts; the others are absent from its rows", name, with, hosts));
  }
  return out;
}

// Drops the rows of `side` no host has a value in; their names into `dropped`.
void drop_empty_rows(Side& side, std::vector<std::string>* dropped) {
  for (std::size_t f = side.specs.size(); f-- > 0;) {
    const bool any = std::any_of(side.values.begin(), side.values.end(),
                                 [&](const std::vector<double>& v) { return f < v.size() && !std::isnan(v[f]); });
    if (any) continue;
    if (dropped != nullptr) dropped->insert(dropped->begin(), side.specs[f].name);
    side.specs.erase(side.specs.begin() + static_cast<std::ptrdiff_t>(f));
    for (std::vector<double>& v : side.values)
      if (f < v.size()) v.erase(v.begin() + static_cast<std::ptrdiff_t>(f));
  }
}

}  // namespace

FleetRows fleet_rows(const FleetHistory& history, double range_seconds, bool guest) {
  FleetRows rows;
  rows.specs = worst_and_median(history.figure_names, "", sampled_allowance, range_seconds, guest);
  for (const FleetHost& h : history.hosts) rows.values.push_back(host_values(h, history.figure_names.size()));
  Side watched = watched_side(history, range_seconds, guest), loops = loop_side(history, range_seconds, guest);
  std::vector<std::string> dropped_rows, empty_watched;
  drop_empty_rows(watched, &dropped_rows);
  for (const std::string& row : dropped_rows)  // "watched NAME (worst CPU)": each name once
    if (const std::string name = row.substr(8, row.find(" (") - 8);
        std::find(empty_watched.begin(), empty_watched.end(), name) == empty_watched.end())
      empty_watched.push_back(name);
  drop_empty_rows(loops, nullptr);
  for (Side* side : {&watched, &loops}) {
    rows.specs.insert(rows.specs.end(), side->specs.begin(), side->specs.end());
    for (std::size_t h = 0; h < rows.values.size(); ++h)
      rows.values[h].insert(rows.values[h].end(), side->values[h].begin(), side->values[h].end());
  }
  rows.not_judged = side_reasons(history, empty_watched);
  return rows;
}

}  // namespace jitterd
