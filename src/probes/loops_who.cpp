// SPDX-License-Identifier: Apache-2.0
// The loops probe's headline and its "who took the loops' interruptions" tables (probes/loops_probe.h,
// probes/watch_glance.h, probes/watch_top.h).
#include <algorithm>
#include <map>
#include <string>

#include "host/text.h"
#include "probes/loops_probe.h"
#include "probes/watch_glance.h"

namespace jitterd {

// Each loop's headline, the first of the probe's tables and the top of its section on the status page.
void LoopsProbe::add_glance(const std::map<std::string, LoopWindowFigures>& figures, ProbeResult& out) const {
  ProbeTable glance = loop_glance_table();
  for (const auto& [file, window] : figures) {
    const LoopSegmentHeader& header = tracker_.loops().at(file).reading.header;
    const auto causes = causes_.find(file);
    const TopTallies* top = causes != causes_.end() && causes->second.top ? &*causes->second.top : nullptr;
    add_loop_glance_row(glance, header.name, static_cast<int>(header.cpu), window.figures, top);
  }
  if (out.loops) out.loops->glance = glance;
  out.tables.insert(out.tables.begin(), std::move(glance));
}

// Per loop whose interruptions are matched: who took them, over the window and since start.
void LoopsProbe::export_top(const HostReader& host, ProbeResult& out) const {
  const std::string window = duration_words(static_cast<double>(settings_.window.count()));
  ProbeTable preempters = preempters_table("who preempted the loops: the top tasks by time and by count (" +
                                               methods_ + "; window: the last " + window +
                                               "; stolen_ms: the loop's gaps; pid: while that task still runs)",
                                           {"loop", "cpu"});
  ProbeTable sources =
      sources_table("what else took the loops' interruptions: the top sources by time and by count (" + methods_ +
                        "; window: the last " + window + "; stolen_ms: the loop's gaps)",
                    {"loop", "cpu"});
  for (const auto& [file, causes] : causes_) {
    if (!causes.top) continue;
    const LoopSegmentHeader& header = tracker_.loops().at(file).reading.header;
    const std::vector<Cell> lead{Cell(header.name), Cell(header.cpu)};
    const TopTally window_preempters = top_of(causes.top->preempters_window.merged());
    add_preempter_rows(preempters, lead, "window", window_preempters, host, "(unnamed)");
    add_preempter_rows(preempters, lead, "since_start", top_of(causes.top->preempters_since), host, "(unnamed)");
    add_source_rows(sources, lead, "window", top_of(causes.top->sources_window.merged()));
    add_source_rows(sources, lead, "since_start", top_of(causes.top->sources_since));
    add_preempter_series(
        "jitterd_loop_top_preempter_seconds", "jitterd_loop_top_preempter_preemptions", "the loop",
        {{std::string(kLoopLabelLoop), header.name}, {std::string(kLoopLabelCpu), std::to_string(header.cpu)}},
        window_preempters, out.metrics);
  }
  if (std::none_of(causes_.begin(), causes_.end(), [](const auto& entry) { return entry.second.top.has_value(); }))
    return;
  if (out.loops) out.loops->who = {preempters, sources};
  out.tables.push_back(std::move(preempters));
  out.tables.push_back(std::move(sources));
}

}  // namespace jitterd
