// SPDX-License-Identifier: Apache-2.0
// /status.json (export/status_page.h status_json): the status page's figures for scripts and for
// `jitterd report TOPIC --from URL` (report/status_reader.h reads it back).
#include <algorithm>

#include "export/status_page.h"
#include "export/status_snapshot_views.h"
#include "host/text.h"
#include "report/stolen_plot.h"

namespace jitterd {
namespace {

// Window figures in the JSON, a sampled CPU's and a loop's alike.
Json window_fields(const CpuFigures& f) {
  return {{"seconds", f.span_seconds},
          {"samples", f.samples},
          {"p50_seconds", ns_to_seconds(f.p50_ns)},
          {"p99_seconds", ns_to_seconds(f.p99_ns)},
          {"p99_9_seconds", ns_to_seconds(f.p999_ns)},
          {"p99_99_seconds", ns_to_seconds(f.p9999_ns)},
          {"max_seconds", ns_to_seconds(f.max_ns)},
          {"interruptions", f.interruptions},
          {"interruptions_per_second", per_window_second(static_cast<double>(f.interruptions), f)},
          {"stolen_ratio", per_window_second(f.stolen_seconds, f)}};
}

// A loop's window figures: none before a window of some length.
Json window_json(const CpuFigures& f) {
  if (!f.valid || f.span_seconds <= 0) return nullptr;
  return window_fields(f);
}

Json loops_json(const LoopsReading& reading) {
  Json loops = Json::array();
  for (const LoopView& loop : reading.loops) {
    Json labels = Json::object();
    for (const auto& [k, v] : loop.labels) labels[k] = v;
    loops.push_back(
        {{"loop", loop.loop},
         {"file", loop.file},
         {"cpu", loop.cpu},
         {"labels", std::move(labels)},
         {"pid", loop.pid},
         {"up", loop.up},
         {"error", loop.up ? std::string() : loop.why},
         {"last_seen_unix_seconds", loop.last_seen_unix_seconds > 0 ? Json(loop.last_seen_unix_seconds) : Json()},
         {"loop_floor_seconds", loop.warmed_up ? Json(ns_to_seconds(loop.window.floor_ns)) : Json()},
         {"interruption_threshold_seconds",
          loop.warmed_up ? Json(ns_to_seconds(loop.window.threshold_ns)) : Json()},
         {"gaps", loop.gaps},
         {"interruptions", loop.interruptions},
         {"stolen_seconds", loop.stolen_seconds},
         {"window", window_json(loop.window)}});
  }
  Json refused = Json::array();
  for (const RefusedLoopSegment& r : reading.refused)
    refused.push_back({{"file", r.file}, {"reason", r.reason}, {"why", r.why}});
  return {{"directory", reading.directory},
          {"loops", std::move(loops)},  // (JSON key)
          {"refused", std::move(refused)}};
}

// A sampled CPU in the JSON: how its sampler runs and its window figures.
Json sampler_json(const SamplerReading& r) {
  const CpuFigures f = window_figures(r);
  Json c{{"cpu", r.settings.cpu},
         {"up", r.up},
         {"pinned", r.startup.pinned && !r.off_cpu},
         {"memory_locked", r.startup.memory_locked},
         {"realtime_priority", r.startup.realtime_priority},
         {"sampling", r.sampling},
         {"error", sampler_problem(r)},
         {"cpu_losses", r.cpu_losses},
         {"loop_floor_seconds", r.sampling ? Json(ns_to_seconds(f.floor_ns)) : Json()},
         {"interruption_threshold_seconds", r.sampling ? Json(ns_to_seconds(f.threshold_ns)) : Json()}};
  c["window"] = f.valid ? window_fields(f) : Json(nullptr);
  return c;
}

// Each probe in the JSON: whether and when it ran, how, and its tables and notes.
Json probes_json(const StatusSnapshot& s) {
  Json probes = Json::array();
  for (const ProbeStatus& p : statuses_of(s)) {
    Json o{{"name", p.name}, {"ran", p.ran}};
    if (p.ran) {
      o["success"] = p.success;
      o["last_run_unix_seconds"] = p.last_run_unix_seconds;
      o["age_seconds"] = std::max(0.0, s.unix_seconds - p.last_run_unix_seconds);
      o["duration_seconds"] = p.duration_seconds;
      o["error"] = p.error;
      o["tables"] = json_array(p.result.tables, table_json);
      o["notes"] = p.result.notes;
      if (!p.result.stolen.empty()) o["stolen"] = json_array(p.result.stolen, stolen_plot_json);
    }
    probes.push_back(std::move(o));
  }
  return probes;
}

// The machine's fingerprint in the JSON, null while the posture probe has not read it.
Json fingerprint_json(const StatusSnapshot& s) {
  const FingerprintView f = fingerprint_of(s);
  if (!f.known) return nullptr;
  Json fields = Json::object();
  for (const auto& [k, v] : f.fields) fields[k] = v;
  return {{"fields", std::move(fields)},
          {"since_unix_seconds", f.since_unix_seconds},
          {"since", utc_text(f.since_unix_seconds)},
          {"changes", f.changes}};
}

}  // namespace

Json status_json(const StatusSnapshot& s, std::string_view telemetry_path) {
  Json j;
  j["format"] = "jitterd-status";
  j["format_version"] = "1.0";
  j["jitterd_version"] = s.build.version;
  j["revision"] = s.build.revision;
  j["hostname"] = s.hostname;
  j["generated_unix_seconds"] = s.unix_seconds;
  j["generated"] = utc_text(s.unix_seconds);
  j["telemetry_path"] = telemetry_path;
  j["tick"] = {{"method", std::string(to_string(s.method))},
               {"frequency_hertz", s.frequency.hertz},
               {"frequency_source", s.frequency.source}};
  j["config"] = {{"last_reload_successful", s.last_reload_ok},
                 {"last_reload_success_unix_seconds", s.last_reload_success}};
  j["window"] = {
      {"sequence", window_sequence(s)},
      {"updated_unix_seconds", window_end(s)},
      {"configured_seconds",
       s.samplers.empty() ? 0.0 : std::chrono::duration<double>(s.samplers.front().settings.window).count()}};
  j["cpus"] = json_array(s.samplers, sampler_json);
  j["probes"] = probes_json(s);
  const LoopsReading* loops = loops_reading(s);
  j["loops"] = loops ? loops_json(*loops) : Json();  // (JSON key)
  j["fingerprint"] = fingerprint_json(s);
  return j;
}

}  // namespace jitterd
