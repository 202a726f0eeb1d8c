// SPDX-License-Identifier: Apache-2.0
#include "report/status_reader.h"
#include "report/stolen_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "host/text.h"
#include "probes/probe_registry.h"
#include "report/baseline_file.h"
#include "report/json_input.h"
#include "report/json_reader.h"

namespace jitterd {
namespace {

// Objects of /status.json: the top level holds 15 keys, a loop 14, the fingerprint's fields a few
// tens; room for a newer daemon's additions, still bounding what one object costs.
constexpr JsonLimits kStatusLimits{.max_depth = 64, .max_object_keys = 256};

// The reader of one document: a missing field names the daemon's version, the likely cause.
JsonReader reader_of(const Json& document, const std::string& source) {
  const auto version = document.find("jitterd_version");
  const std::string running = version != document.end() && version->is_string()
                                  ? printable_excerpt(version->get<std::string>(), 40)
                                  : std::string("an unknown version");
  return JsonReader(
      source, fmt::format(" (the daemon runs jitterd {}: one older than this jitterd, without it?)", running));
}

// A field in seconds that may be null (not known yet): nanoseconds with one decimal, or none.
Cell ns_cell(const JsonReader& r, const Json& object, const std::string& where, const char* key) {
  if (r.field(object, where, key).is_null()) return Cell();
  return Cell(r.number(object, where, key) * 1e9, 1);
}

Cell count_cell(const JsonReader& r, const Json& object, const std::string& where, const char* key) {
  return Cell(static_cast<std::int64_t>(std::min<std::uint64_t>(r.count(object, where, key), INT64_MAX)));
}

// The columns of a rolling window's figures (status_page.cpp window_fields), every one or the
// ones the text shows; a window of null (none yet) is a row of none.
std::vector<std::string> window_columns(bool display) {
  if (display)
    return {"window_s", "samples", "p50_ns", "p99_ns", "p99.9_ns", "p99.99_ns", "max_ns", "interr/s", "stolen%"};
  return {"window_seconds", "samples",       "p50_ns",
          "p99_ns",         "p99_9_ns",      "p99_99_ns",
          "max_ns",         "interruptions", "interruptions_per_second",
          "stolen_share"};
}

std::vector<Cell> window_cells(const JsonReader& r, const Json& owner, const std::string& where, bool display) {
  const Json& w = r.field(owner, where, "window");
  const std::size_t n = window_columns(display).size();
  if (w.is_null()) return std::vector<Cell>(n);
  const std::string at = where + ".window";
  std::vector<Cell> cells{Cell(r.number(w, at, "seconds"), 1), count_cell(r, w, at, "samples"),
                          ns_cell(r, w, at, "p50_seconds"),    ns_cell(r, w, at, "p99_seconds"),
                          ns_cell(r, w, at, "p99_9_seconds"),  ns_cell(r, w, at, "p99_99_seconds"),
                          ns_cell(r, w, at, "max_seconds")};
  if (!display) cells.push_back(count_cell(r, w, at, "interruptions"));
  cells.emplace_back(r.number(w, at, "interruptions_per_second"), display ? 1 : 3);
  const double stolen = r.number(w, at, "stolen_ratio");
  cells.push_back(display ? Cell(stolen * 100, 4) : Cell(stolen, 9));
  return cells;
}

StatusHeader header_of(const JsonReader& r, const Json& j) {
  StatusHeader h;
  h.source = r.source();
  h.jitterd_version = r.text(j, "", "jitterd_version");
  h.hostname = r.text(j, "", "hostname");
  h.generated = r.text(j, "", "generated");
  h.generated_unix_seconds = r.number(j, "", "generated_unix_seconds");
  const Json& window = r.field(j, "", "window");
  h.window_seconds = r.number(window, "window", "configured_seconds");
  h.window_sequence = r.count(window, "window", "sequence");
  return h;
}

ProbeTable gaps_table(const JsonReader& r, const Json& j, bool display) {
  ProbeTable table{display ? "gaps per cpu, over the daemon's rolling window" : "gaps per cpu", {"cpu"}, {}};
  if (!display) table.columns.insert(table.columns.end(), {"up", "pinned", "sampling"});
  for (std::string& c : window_columns(display)) table.columns.push_back(std::move(c));
  table.columns.insert(table.columns.end(),
                       {"floor_ns", display ? "thr_ns" : "threshold_ns", display ? "note" : "error"});
  const Json& cpus = r.array(j, "", "cpus");
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const std::string at = fmt::format("cpus[{}]", i);
    std::vector<Cell> row{count_cell(r, cpus[i], at, "cpu")};
    if (!display)
      row.insert(row.end(), {Cell(r.boolean(cpus[i], at, "up")), Cell(r.boolean(cpus[i], at, "pinned")),
                             Cell(r.boolean(cpus[i], at, "sampling"))});
    for (Cell& c : window_cells(r, cpus[i], at, display)) row.push_back(std::move(c));
    row.push_back(ns_cell(r, cpus[i], at, "loop_floor_seconds"));
    row.push_back(ns_cell(r, cpus[i], at, "interruption_threshold_seconds"));
    std::string error = r.text(cpus[i], at, "error");
    if (error.empty() && r.field(cpus[i], at, "window").is_null()) error = "no window yet";
    row.emplace_back(std::move(error));
    table.rows.push_back(std::move(row));
  }
  return table;
}

StatusTopic gaps_topic(const JsonReader& r, const Json& j, StatusTopic topic, bool display) {
  topic.tables.push_back(gaps_table(r, j, display));
  const Json& tick = r.field(j, "", "tick");
  const std::string counter =
      fmt::format("counter {} at {:.3f} MHz ({})", r.text(tick, "tick", "method"),
                  r.number(tick, "tick", "frequency_hertz") / 1e6, r.text(tick, "tick", "frequency_source"));
  if (topic.tables.back().rows.empty()) {
    topic.lines.push_back("the daemon samples no cpu (cpus: [] or none); " + counter);
    return topic;
  }
  topic.lines.push_back(fmt::format("sampled cpus over the daemon's rolling window of {:g} s (update {}); {}",
                                    topic.header.window_seconds, topic.header.window_sequence, counter));
  topic.notes.push_back(
      "percentiles are the upper edge of a histogram bucket (at most 6.25% above the true value, never above "
      "max); "
      "max is exact");
  return topic;
}

// The loops section of its own (status_page.cpp loops_json): a row per loop over its rolling window.
ProbeTable loop_window_table(const JsonReader& r, const Json& loops, double now, bool display) {
  ProbeTable table{"loops, over the daemon's rolling window", {"loop", "cpu"}, {}};
  if (!display) table.columns.insert(table.columns.end(), {"labels", "pid"});
  table.columns.insert(table.columns.end(), {"up", display ? "seen_s_ago" : "last_seen_seconds_ago"});
  for (std::string& c : window_columns(display)) table.columns.push_back(std::move(c));
  if (display) {
    table.columns.insert(table.columns.end(), {"thr_ns", "note"});
  } else {
    table.columns.insert(table.columns.end(), {"floor_ns", "threshold_ns", "gaps_total", "interruptions_total",
                                               "stolen_seconds_total", "error"});
  }
  for (std::size_t i = 0; i < loops.size(); ++i) {
    const std::string at = fmt::format("loops.loops[{}]", i);
    const Json& loop = loops[i];
    std::vector<Cell> row{Cell(r.text(loop, at, "loop")), count_cell(r, loop, at, "cpu")};
    if (!display) {
      std::string labels;
      for (const auto& [k, v] : r.string_pairs(loop, at, "labels"))
        labels += (labels.empty() ? "" : ",") + k + "=" + v;
      row.insert(row.end(), {Cell(std::move(labels)), count_cell(r, loop, at, "pid")});
    }
    row.emplace_back(r.boolean(loop, at, "up"));
    const bool seen = !r.field(loop, at, "last_seen_unix_seconds").is_null();
    row.push_back(seen ? Cell(std::max(0.0, now - r.number(loop, at, "last_seen_unix_seconds")), 1)
                       : Cell("never"));
    for (Cell& c : window_cells(r, loop, at, display)) row.push_back(std::move(c));
    if (!display) row.push_back(ns_cell(r, loop, at, "loop_floor_seconds"));
    row.push_back(ns_cell(r, loop, at, "interruption_threshold_seconds"));
    if (!display)
      row.insert(row.end(), {count_cell(r, loop, at, "gaps"), count_cell(r, loop, at, "interruptions"),
                             Cell(r.number(loop, at, "stolen_seconds"), 6)});
    row.emplace_back(r.text(loop, at, "error"));
    table.rows.push_back(std::move(row));
  }
  return table;
}

// A section of the topic's own at the top level, under the topic's name: when it lists loops (the
// loops probe's), their window figures and the segments refused; and any tables it holds.
void add_own_section(const JsonReader& r, const Json& j, StatusTopic& topic, bool display) {
  const auto it = j.find(topic.topic);
  if (it == j.end() || it->is_null()) return;
  const Json& section = *it;
  const std::string& name = topic.topic;
  if (section.is_object() && section.contains("loops")) {  // (JSON key) the loops' section (loops_json)
    const Json& loops = r.array(section, name, "loops");   // (JSON key)
    topic.lines.push_back(fmt::format("{} loop{} in {}", loops.size(), loops.size() == 1 ? "" : "s",
                                      printable(r.text(section, name, "directory"))));
    topic.tables.push_back(loop_window_table(r, loops, topic.header.generated_unix_seconds, display));
    ProbeTable refused{"segments refused", {"file", "reason", "why"}, {}};
    const Json& list = r.array(section, name, "refused");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = fmt::format("{}.refused[{}]", name, i);
      refused.rows.push_back(
          {r.text(list[i], at, "file"), r.text(list[i], at, "reason"), r.text(list[i], at, "why")});
    }
    if (!refused.rows.empty()) topic.tables.push_back(std::move(refused));
  }
  if (section.is_object() && section.contains("tables"))
    for (ProbeTable& t : tables_from_json(r, section["tables"], name + ".tables"))
      topic.tables.push_back(std::move(t));
}

std::string names_of(const Json& probes) {
  std::string names;
  for (const Json& p : probes)
    if (p.is_object() && p.contains("name") && p["name"].is_string())
      names += (names.empty() ? "" : ", ") + printable_excerpt(p["name"].get<std::string>(), 40);
  return names.empty() ? "none" : names;
}

// A probe's entry in "probes": when it ran, its tables and notes (status_page.cpp probes_json).
StatusTopic probe_topic(const JsonReader& r, const Json& j, StatusTopic topic, bool display) {
  const Json& probes = r.array(j, "", "probes");
  const auto entry = std::find_if(probes.begin(), probes.end(), [&](const Json& p) {
    return p.is_object() && p.contains("name") && p["name"] == topic.topic;
  });
  if (entry == probes.end())
    throw BaselineError(kExitUnavailable,
                        fmt::format("{}: the daemon runs no {} probe (its probes: {}); configure "
                                    "it there, or run jitterd report {} without --from",
                                    r.source(), topic.topic, names_of(probes), topic.topic));
  const std::string at = fmt::format("probes[{}]", entry - probes.begin());
  if (!r.boolean(*entry, at, "ran"))
    throw BaselineError(kExitUnavailable, fmt::format("{}: the daemon has not run the {} probe yet (it started "
                                                      "less than one interval ago); try again shortly",
                                                      r.source(), topic.topic));
  const bool success = r.boolean(*entry, at, "success");
  topic.lines.push_back(fmt::format("probe {}: last run {} ({:.0f} s before the page), took {:.3f} s, {}",
                                    topic.topic, utc_text(r.number(*entry, at, "last_run_unix_seconds")),
                                    r.number(*entry, at, "age_seconds"), r.number(*entry, at, "duration_seconds"),
                                    success ? "succeeded" : "failed"));
  if (!success) topic.failure = r.text(*entry, at, "error");
  add_own_section(r, j, topic, display);  // first: the window's figures
  std::vector<ProbeTable> tables = tables_from_json(r, r.array(*entry, at, "tables"), at + ".tables");
  shape_tables(topic.topic, tables);
  // The stolen-time plots (the watch's and the loops'), after the headline.
  if (entry->contains("stolen"))
    tables.insert(tables.begin() + (tables.empty() ? 0 : 1),
                  stolen_table_from_json(r, (*entry)["stolen"], at + ".stolen"));
  for (ProbeTable& t : tables) topic.tables.push_back(std::move(t));
  topic.notes = notes_from_json(r, r.array(*entry, at, "notes"), at + ".notes");
  return topic;
}

}  // namespace

Json parse_status_document(std::string_view text, const std::string& source) {
  Json document;
  try {
    document = parse_json_input(text, kStatusLimits);
  } catch (const JsonInputError& e) {
    if (e.syntax())
      throw BaselineError(kExitBadBaseline,
                          fmt::format("{}: not JSON, so not a jitterd's /status.json ({}): \"{}\"", source,
                                      e.what(), printable_excerpt(text, 80)));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: {}", source, e.what()));
  }
  const JsonReader r(source);
  if (!document.is_object() || !document.contains("format") || document["format"] != kStatusFormatName)
    r.fail("format", fmt::format("not a jitterd's /status.json (no \"format\": \"{}\"): \"{}\"", kStatusFormatName,
                                 printable_excerpt(text, 80)));
  const std::string version = reader_of(document, source).text(document, "", "format_version");
  int major = -1;
  const auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), major);
  if (error != std::errc() || end == version.data() + version.size() || *end != '.')
    r.fail("format_version", fmt::format("must be MAJOR.MINOR, got \"{}\"", printable_excerpt(version, 40)));
  if (major > kStatusFormatMajor)
    r.fail("format_version", fmt::format("version {} is newer than this jitterd reads ({}.x); use a newer jitterd",
                                         printable_excerpt(version, 40), kStatusFormatMajor));
  return document;
}

Json status_document_from_answer(long status, std::string_view body, const std::string& url) {
  if (status == 401)
    throw BaselineError(
        kExitUnavailable,
        fmt::format("{}: HTTP status 401: the daemon asks for credentials (its web configuration's "
                    "basic_auth_users); give --from-basic-auth-user and --from-basic-auth-password-file",
                    url));
  if (status == 404)
    throw BaselineError(kExitUnavailable,
                        fmt::format("{}: HTTP status 404: no status page there (not a jitterd, a jitterd without "
                                    "/status.json, or a path that is not the daemon's): \"{}\"",
                                    url, printable_excerpt(body, 80)));
  if (status < 200 || status >= 300)
    throw BaselineError(kExitUnavailable,
                        fmt::format("{}: HTTP status {}: \"{}\"", url, status, printable_excerpt(body, 80)));
  return parse_status_document(body, url);
}

StatusTopic status_topic(const Json& document, const std::string& source, std::string_view name, bool display) {
  const JsonReader r = reader_of(document, source);
  StatusTopic topic;
  topic.header = header_of(r, document);
  topic.topic = std::string(name);
  if (name == "gaps") return gaps_topic(r, document, std::move(topic), display);
  return probe_topic(r, document, std::move(topic), display);
}

}  // namespace jitterd
