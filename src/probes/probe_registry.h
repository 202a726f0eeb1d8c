// SPDX-License-Identifier: Apache-2.0
// Every periodic probe, listed once: its name (as in metrics, probe="...", and as the topic of
// `jitterd report <probe>`), its settings inside ProbesSettings, how to build it, and every other
// fact kept per probe (probes/probe_facts.h: one-shot runs, plan checks, compare's allowances and
// row conditions, how its tables render). The configuration's `probes:` section fills a
// ProbesSettings with the probes' own settings types. There is no self-registration and no second
// list: code above probes/ asks here rather than testing a probe's name. Pure; safe from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string_view>
#include <vector>

#include "probes/probe_facts.h"
#include "probes/probes_settings.h"

namespace jitterd {

// The probe names in the order the scheduler first runs them (cheap, machine-wide ones first).
const std::vector<std::string_view>& probe_names();

// Those a baseline may run (`jitterd baseline --probes`): the probes that measure once and give
// figures to compare; not posture or attribution, which judge the machine over time.
const std::vector<std::string_view>& baseline_probe_names();

// Those `jitterd baseline` runs without --probes, in probe_names() order.
const std::vector<std::string_view>& default_baseline_probe_names();

// The probes with a section on the comparison page (a comparison_heading), in its order
// (comparison_rank): also the order of compare's allowance groups.
const std::vector<std::string_view>& comparison_probe_names();

// One probe's facts by name; nullptr for an unknown name.
const ProbeFacts* probe_facts(std::string_view name);

// Whether the probe is a reader (ProbeFacts::reader): run apart from the active probes so it keeps
// its cadence. False for an unknown name.
bool is_reader(std::string_view name);

// One probe by name, enabled or not (for `jitterd report`); nullptr for an unknown name.
std::unique_ptr<Probe> make_probe(std::string_view name, const ProbesSettings& settings);

// The enabled probes, in probe_names() order.
std::vector<std::unique_ptr<Probe>> make_enabled_probes(const ProbesSettings& settings);

// The enabled probes that read the application's side (ProbeFacts::recording_settings), built with
// the settings for a baseline of `run`, in probe_names() order.
std::vector<std::unique_ptr<Probe>> make_recording_probes(const ProbesSettings& settings,
                                                          std::chrono::nanoseconds run);

// Every enabled probe's plan check, in probe_names() order: the problems found.
std::vector<SettingProblem> plan_problems(const ProbesSettings& settings, const PlanFacts& facts);

// Sets the shape of each of `probe`'s tables its facts name (shaped_table), as run_probe does for a
// fresh result: for tables read back from a baseline file, which keeps cells, not shapes.
void shape_tables(std::string_view probe, std::vector<ProbeTable>& tables);

}  // namespace jitterd
