// SPDX-License-Identifier: Apache-2.0
#include "probes/probe_registry.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/cpu_list.h"
#include "probes/kernel_cost_probe.h"

namespace jitterd {

namespace {

// The plan check of a probe that takes a `cpu`: that CPU must be one jitterd may run on, and on a
// sampled CPU, whose sampler each of the probe's steps pauses (`pause` says how), `setting` (its
// value `got`) must stay at most `limit` (`within`: it does).
std::vector<SettingProblem> cpu_step_check(std::string_view probe, std::optional<int> cpu, const PlanFacts& facts,
                                           std::string_view setting, bool within, const std::string& limit,
                                           const std::string& got, std::string_view pause) {
  const std::string cpu_key = "probes." + std::string(probe) + ".cpu";
  if (cpu && !has_cpu(facts.usable, *cpu))
    return {{cpu_key,
             "cpu " + std::to_string(*cpu) +
                 " is not one jitterd may run on (online and allowed: " + describe_cpu_list(facts.usable) + ")",
             ""}};
  if (!cpu || !has_cpu(facts.sampled, *cpu) || within) return {};
  return {{"probes." + std::string(probe) + "." + std::string(setting),
           "must be at most " + limit + " when " + cpu_key + " (" + std::to_string(*cpu) +
               ") is sampled: " + std::string(pause) + "; got " + got,
           cpu_key}};
}

// --- posture and attribution: they judge the machine over time ---

constexpr ProbeFacts kPostureFacts{.report = ReportKind::checklist,
                                   .shaped_table = {"isolation checklist", TableShape::checklist}};

// Attribution drains the BPF engine's records of the sampled CPUs every interval: a reader.
constexpr ProbeFacts kAttributionFacts{.reader = true};
// A baseline's reading of the application's side: once per sub-window (a second), the whole run
// in the history and more (the reading before the samplers start, their start-up), never trimmed.
constexpr std::chrono::seconds kRecordingStep{1};
std::chrono::nanoseconds recording_history(std::chrono::nanoseconds run) {
  return 2 * run + std::chrono::minutes(1);
}

// Watch: the application's CPUs, chosen with the sampled ones (host/cpu_selection), read over time.
// Not in_baselines: a baseline records the watched CPUs with its sampled ones (its watched[], from
// the probe's application_windows, in a baseline's run as in the live download), never as a probe
// run's tables. A baseline watches the CPUs its plan chose for the whole run (watch.cpus: auto is
// not followed mid-run). On the status page beside the samplers: the CPUs that matter most.
ProbesSettings watch_recording_settings(ProbesSettings probes, std::chrono::nanoseconds run) {
  probes.watch.interval = kRecordingStep;
  probes.watch.window = recording_history(run);
  probes.watch.cpus_automatic = false;
  return probes;
}
constexpr ProbeFacts kWatchFacts{.status_heading = "Watched CPUs (the application's)",
                                 .reader = true,
                                 .recording_settings = watch_recording_settings};
// Loops: the applications' own loops (their segments in loops.directory), read over time. Not
// in_baselines: a baseline records them as its loops[], as the watched CPUs above. The status page
// shows them in a section of their own, beside the samplers.
// Its directory must be one when the configuration is taken (a missing one is a configuration
// error, not a silent probe reading nothing); one that goes later fails the probe, as data.
std::vector<SettingProblem> loops_plan_check(const ProbesSettings& probes, const PlanFacts&) {
  const std::string& directory = probes.loops.directory;
  struct stat st {};
  std::string problem;
  if (::stat(directory.c_str(), &st) != 0)
    problem = std::string(std::strerror(errno));
  else if (!S_ISDIR(st.st_mode))
    problem = "not a directory";
  if (problem.empty()) return {};
  return {{"loops.directory",
           directory + ": " + problem +
               " (the directory the applications write their loop segments in; make it first, or name another)",
           "loops"}};
}
ProbesSettings loops_recording_settings(ProbesSettings probes, std::chrono::nanoseconds run) {
  probes.loops.interval = kRecordingStep;
  probes.loops.window = recording_history(run);
  return probes;
}
constexpr ProbeFacts kLoopFacts{.plan_check = loops_plan_check,
                                .status_heading = "Loops (the applications' own)",
                                .reader = true,
                                .recording_settings = loops_recording_settings};

// --- clock ---

constexpr ProbeFacts kClockFacts{
    .in_baselines = true, .in_default_baseline = true, .comparison_heading = "Clock", .comparison_rank = 3};

// --- kernel_cost ---

// Measured in a VM: fork_wait's p99 up to 61x, thread_create_join's from 18 us to 9.9 ms (460x),
// and in CI a clock read's from 40 to 140 ns between runs.
constexpr std::string_view kKernelTailInVm =
    "not tested (in a VM the run-to-run spread of this tail is orders of magnitude: up to 460x back to back)";
// Medians: one counter step (30 or 40 ns) apart at most, spread <= 0.10 in a VM.
constexpr AllowanceRow kKernelCostAllowances[] = {
    {"median_ns", 0.20, 0.20, "", ""},
    {"median_ticks", 0.20, 0.20, "", ""},
    {"p99_ns", 0.20, std::nullopt, "", kKernelTailInVm},
    {"p99_ticks", 0.20, std::nullopt, "", kKernelTailInVm},
};

// On a sampled CPU every operation pauses that CPU's sampler: fork_wait's step is 2000 forks.
std::vector<SettingProblem> kernel_cost_plan_check(const ProbesSettings& probes, const PlanFacts& facts) {
  const KernelCostSettings& settings = probes.kernel_cost;
  constexpr std::size_t max_samples_on_sampled = 100000;
  return cpu_step_check("kernel_cost", settings.cpu, facts, "samples", settings.samples <= max_samples_on_sampled,
                        std::to_string(max_samples_on_sampled), std::to_string(settings.samples),
                        "each operation pauses its sampler");
}

// Thread create+join and fork+wait on a CPU shared with other runnable tasks measure mostly the
// scheduler's wait, whose spread between runs no allowance bounds (probes/kernel_cost_probe.h).
constexpr RowCondition kKernelCostConditions[] = {
    {"cpu_shared", "", "operation's CPU was shared with other tasks", kCpuSharedAtMost}};

constexpr ProbeFacts kKernelCostFacts{.in_baselines = true,
                                      .in_default_baseline = true,
                                      .plan_check = kernel_cost_plan_check,
                                      .allowances = kKernelCostAllowances,
                                      .row_conditions = kKernelCostConditions,
                                      .comparison_heading = "Kernel costs",
                                      .comparison_rank = 1};

// --- pinning ---

constexpr ProbeFacts kPinningFacts{.in_baselines = true, .comparison_heading = "Pinning", .comparison_rank = 4};

// --- pacing ---

constexpr std::string_view kNotIndependent =
    "not tested (late sends come in runs after one interruption: not independent samples)";
// A pacer that kept its schedule (kPacingConditions): its median lateness stayed within 1.11x back
// to back.
constexpr AllowanceRow kPacingAllowances[] = {
    {"p50_late_ns", 0.50, 0.50, "", ""},
    {"p99_late_ns", std::nullopt, std::nullopt, kNotIndependent, kNotIndependent},
};

// A pacer keeps its absolute schedule only while its p99 lateness stays within one slot (1 / target
// rate). Past it, its CPU was taken for longer than a slot and every send after that was late until
// it caught up, so the run measured that CPU's other load rather than the pacer: two runs of an
// unchanged but shared machine then differ by orders of magnitude (docs/before-and-after.md).
constexpr RowCondition kPacingConditions[] = {{"p99_late_ns", "target_per_s", "pacer fell behind its schedule"}};

// On a sampled CPU each rate pauses that CPU's sampler for the whole duration.
std::vector<SettingProblem> pacing_plan_check(const ProbesSettings& probes, const PlanFacts& facts) {
  const PacingSettings& settings = probes.pacing;
  return cpu_step_check("pacing", settings.cpu, facts, "duration", settings.duration <= facts.sampler_step_limit,
                        facts.duration_text(facts.sampler_step_limit), facts.duration_text(settings.duration),
                        "each rate pauses its sampler that long");
}

constexpr ProbeFacts kPacingFacts{.in_baselines = true,
                                  .in_default_baseline = true,
                                  .plan_check = pacing_plan_check,
                                  .allowances = kPacingAllowances,
                                  .row_conditions = kPacingConditions,
                                  .comparison_heading = "Pacing",
                                  .comparison_rank = 2};

// --- c2c ---

// Measured in a VM: a pair's p90 from 28 ns to 11 us (84x), 26 ns to 3.4 us (122x) between runs, the
// host preempting a vCPU mid-handoff.
constexpr std::string_view kC2cTailInVm =
    "not tested (in a VM the run-to-run spread of this tail is orders of magnitude: up to 122x back to back)";
// In a VM a pair's latency follows where the host runs the two vCPUs: 24 or 123 ns from one run to
// the next (spread 0.57 and 0.76 in two sets of 22 runs, 0.02 in a third), so a guest calls only a
// change past ~40x. Bare metal: medians within 0.3% while the host kept the vCPUs in place.
constexpr AllowanceRow kC2cAllowances[] = {
    {"p10_ns", 0.08, 0.80, "", ""},
    {"median_ns", 0.08, 0.80, "", ""},
    {"p90_ns", 0.08, std::nullopt, "", kC2cTailInVm},
};

// An explicit pair list is checked against this machine now, so a pair outside the probe's scope
// is a configuration error naming the entry, not a probe failure minutes later.
std::vector<SettingProblem> c2c_plan_check(const ProbesSettings& probes, const PlanFacts& facts) {
  const C2cSettings& c2c = probes.c2c;
  if (c2c.pairs.selection != PairSelection::list) return {};
  std::vector<SettingProblem> problems;
  for (const PairListError& e : plan_c2c_pairs(c2c, facts.host, facts.sampled, nullptr).errors) {
    const bool hint = !c2c.allow_unsampled && e.kind == PairListError::Kind::outside_scope;
    problems.push_back({"probes.c2c.pairs",
                        e.text + (hint ? "; set allow_unsampled to pair CPUs that are not sampled" : ""), ""});
  }
  return problems;
}

// `jitterd report c2c`, like core-to-core-latency: every pair among the given CPUs, all in one run.
ProbesSettings c2c_over_cpus(ProbesSettings settings, const std::vector<int>& cpus) {
  settings.c2c.pairs.selection = PairSelection::all;
  settings.c2c.cpus = cpus;
  return settings;
}

constexpr ProbeFacts kC2cFacts{.in_baselines = true,
                               .in_default_baseline = true,
                               .report_over_cpus = c2c_over_cpus,
                               .plan_check = c2c_plan_check,
                               .allowances = kC2cAllowances,
                               .shaped_table = {"pairs", TableShape::pair_heatmap},
                               .comparison_heading = "Core-to-core latency",
                               .comparison_rank = 0};

// --- the registry ---

struct ProbeEntry {
  std::string_view name;
  const ProbeFacts& facts;
  bool (*enabled)(const ProbesSettings&);
  std::unique_ptr<Probe> (*make)(const ProbesSettings&);
};

// One entry: the probe type, where its settings sit in ProbesSettings, and its facts.
template <typename P, auto Member>
constexpr ProbeEntry entry(std::string_view name, const ProbeFacts& facts) {
  return {name, facts, [](const ProbesSettings& s) { return (s.*Member).enabled; },
          [](const ProbesSettings& s) -> std::unique_ptr<Probe> { return std::make_unique<P>(s.*Member); }};
}

constexpr ProbeEntry kProbes[] = {
    entry<PostureProbe, &ProbesSettings::posture>("posture", kPostureFacts),
    entry<AttributionProbe, &ProbesSettings::attribution>("attribution", kAttributionFacts),
    entry<WatchProbe, &ProbesSettings::watch>("watch", kWatchFacts),
    entry<LoopsProbe, &ProbesSettings::loops>("loops", kLoopFacts),
    entry<ClockProbe, &ProbesSettings::clock>("clock", kClockFacts),
    entry<KernelCostProbe, &ProbesSettings::kernel_cost>("kernel_cost", kKernelCostFacts),
    entry<PinningProbe, &ProbesSettings::pinning>("pinning", kPinningFacts),
    entry<PacingProbe, &ProbesSettings::pacing>("pacing", kPacingFacts),
    entry<C2cProbe, &ProbesSettings::c2c>("c2c", kC2cFacts),
};

const ProbeEntry* entry_named(std::string_view name) {
  const auto* found =
      std::find_if(std::begin(kProbes), std::end(kProbes), [&](const ProbeEntry& e) { return e.name == name; });
  return found == std::end(kProbes) ? nullptr : found;
}

std::vector<std::string_view> names_where(bool (*wanted)(const ProbeFacts&)) {
  std::vector<std::string_view> out;
  for (const ProbeEntry& e : kProbes)
    if (wanted(e.facts)) out.push_back(e.name);
  return out;
}

}  // namespace

const std::vector<std::string_view>& probe_names() {
  static const std::vector<std::string_view> names = names_where([](const ProbeFacts&) { return true; });
  return names;
}

const std::vector<std::string_view>& baseline_probe_names() {
  static const std::vector<std::string_view> names =
      names_where([](const ProbeFacts& f) { return f.in_baselines; });
  return names;
}

const std::vector<std::string_view>& default_baseline_probe_names() {
  static const std::vector<std::string_view> names =
      names_where([](const ProbeFacts& f) { return f.in_default_baseline; });
  return names;
}

const std::vector<std::string_view>& comparison_probe_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out =
        names_where([](const ProbeFacts& f) { return !f.comparison_heading.empty(); });
    std::stable_sort(out.begin(), out.end(), [](std::string_view a, std::string_view b) {
      return probe_facts(a)->comparison_rank < probe_facts(b)->comparison_rank;
    });
    return out;
  }();
  return names;
}

bool is_reader(std::string_view name) {
  const ProbeFacts* facts = probe_facts(name);
  return facts != nullptr && facts->reader;
}

const ProbeFacts* probe_facts(std::string_view name) {
  const ProbeEntry* e = entry_named(name);
  return e == nullptr ? nullptr : &e->facts;
}

std::unique_ptr<Probe> make_probe(std::string_view name, const ProbesSettings& settings) {
  const ProbeEntry* e = entry_named(name);
  return e == nullptr ? nullptr : e->make(settings);
}

std::vector<std::unique_ptr<Probe>> make_enabled_probes(const ProbesSettings& settings) {
  std::vector<std::unique_ptr<Probe>> probes;
  for (const ProbeEntry& e : kProbes) {
    if (e.enabled(settings)) probes.push_back(e.make(settings));
  }
  return probes;
}

std::vector<std::unique_ptr<Probe>> make_recording_probes(const ProbesSettings& settings,
                                                          std::chrono::nanoseconds run) {
  std::vector<std::unique_ptr<Probe>> probes;
  for (const ProbeEntry& e : kProbes)
    if (e.facts.recording_settings != nullptr && e.enabled(settings))
      probes.push_back(e.make(e.facts.recording_settings(settings, run)));
  return probes;
}

std::vector<SettingProblem> plan_problems(const ProbesSettings& settings, const PlanFacts& facts) {
  std::vector<SettingProblem> problems;
  for (const ProbeEntry& e : kProbes) {
    if (!e.enabled(settings) || e.facts.plan_check == nullptr) continue;
    for (SettingProblem& p : e.facts.plan_check(settings, facts)) problems.push_back(std::move(p));
  }
  return problems;
}

void shape_tables(std::string_view probe, std::vector<ProbeTable>& tables) {
  const ProbeFacts* facts = probe_facts(probe);
  if (facts == nullptr || facts->shaped_table.title_prefix.empty()) return;
  for (ProbeTable& t : tables)
    if (t.title.rfind(facts->shaped_table.title_prefix, 0) == 0) t.shape = facts->shaped_table.shape;
}

}  // namespace jitterd
