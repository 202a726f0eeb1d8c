// SPDX-License-Identifier: Apache-2.0
#include "report/baseline_reader.h"

#include <fmt/format.h>

#include <unordered_map>

#include "probes/probe_registry.h"
#include "report/json_input.h"
#include "report/json_reader.h"

namespace jitterd {
namespace {

using Reader = JsonReader;

// "1.0" -> (1, 0). Each part is a decimal number of at most 4 digits without a sign, a blank or a
// leading zero ("01.1", "+1.1", " 1.1" and "1.1 " are refused, not read as 1.1).
std::pair<int, int> parse_version(const Reader& r, const std::string& version) {
  const auto part = [](std::string_view text) {
    const bool digits = !text.empty() && text.size() <= 4 &&
                        text.find_first_not_of("0123456789") == std::string_view::npos &&
                        (text.size() == 1 || text[0] != '0');
    return digits ? std::stoi(std::string(text)) : -1;
  };
  const std::size_t dot = version.find('.');
  const int major = dot == std::string::npos ? -1 : part(std::string_view(version).substr(0, dot));
  const int minor = dot == std::string::npos ? -1 : part(std::string_view(version).substr(dot + 1));
  if (major < 0 || minor < 0)
    r.fail("format_version",
           fmt::format("must be MAJOR.MINOR (two whole numbers such as 1.1), got \"{}\"", version.substr(0, 40)));
  return {major, minor};
}

HistogramSnapshot histogram_from(const Reader& r, const Json& buckets, const std::string& where) {
  HistogramSnapshot histogram;
  std::vector<bool> seen(kHistogramBuckets);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    if (!buckets[i].is_array() || buckets[i].size() != 2) r.fail(at, "must be [bucket index, count]");
    const std::uint64_t index = r.unsigned_value(buckets[i][0], at + "[0]");
    if (index >= kHistogramBuckets) r.fail(at, fmt::format("bucket index must be below {}", kHistogramBuckets));
    if (seen[index]) r.fail(at, fmt::format("bucket {} is given twice", index));
    seen[index] = true;
    histogram.counts[index] = r.unsigned_value(buckets[i][1], at + "[1]");
  }
  return histogram;
}

SubWindow sub_window_from(const Reader& r, const Json& j, const std::string& where, std::size_t thresholds) {
  SubWindow w;
  w.sampled_seconds = r.number(j, where, "seconds");
  w.samples = r.count(j, where, "samples");
  w.p50_ns = r.number(j, where, "p50_ns");
  w.p99_ns = r.number(j, where, "p99_ns");
  w.p999_ns = r.number(j, where, "p99_9_ns");
  w.p9999_ns = r.number(j, where, "p99_99_ns");
  w.interruptions = r.count(j, where, "interruptions");
  w.stolen_seconds = r.number(j, where, "stolen_seconds");
  const Json& over = r.array(j, where, "over_threshold");
  if (over.size() != thresholds)
    r.fail(where + ".over_threshold", fmt::format("must have one count per tail threshold ({})", thresholds));
  for (std::size_t i = 0; i < over.size(); ++i)
    w.over_threshold.push_back(r.unsigned_value(over[i], fmt::format("{}.over_threshold[{}]", where, i)));
  return w;
}

int cpu_number(const Reader& r, const Json& j, const std::string& where) {
  const std::uint64_t cpu = r.count(j, where, "cpu");
  if (cpu > 1u << 20) r.fail(where + ".cpu", "must be a CPU number");
  return static_cast<int>(cpu);
}

BaselineCpu cpu_from(const Reader& r, const Json& j, const std::string& where, std::size_t thresholds) {
  BaselineCpu c;
  c.cpu = cpu_number(r, j, where);
  c.error = r.text(j, where, "error");
  c.samples = r.count(j, where, "samples");
  c.sampled_seconds = r.number(j, where, "sampled_seconds");
  c.stolen_seconds = r.number(j, where, "stolen_seconds");
  c.interruptions = r.count(j, where, "interruptions");
  c.floor_ns = r.number(j, where, "floor_ns");
  c.threshold_ns = r.number(j, where, "threshold_ns");
  c.max_ns = r.number(j, where, "max_ns");
  c.histogram = histogram_from(r, r.array(j, where, "histogram_ticks"), where + ".histogram_ticks");
  if (c.histogram.total() != c.samples)
    r.fail(where, fmt::format("the histogram holds {} gaps but samples is {}", c.histogram.total(), c.samples));
  const Json& windows = r.array(j, where, "sub_windows");
  for (std::size_t i = 0; i < windows.size(); ++i)
    c.sub_windows.push_back(
        sub_window_from(r, windows[i], fmt::format("{}.sub_windows[{}]", where, i), thresholds));
  return c;
}

BaselineLoop loop_from(const Reader& r, const Json& j, const std::string& where, std::size_t thresholds) {
  BaselineLoop l;
  static_cast<BaselineCpu&>(l) = cpu_from(r, j, where, thresholds);
  l.name = r.text(j, where, "name");
  if (l.name.empty() || l.name.size() > 255) r.fail(where + ".name", "must be a loop's name (1 to 255 bytes)");
  l.counter_hertz = r.number(j, where, "counter_hertz");
  if (l.counter_hertz <= 0) r.fail(where + ".counter_hertz", "must be above 0");
  return l;
}

// `counts` measures no lengths: its longest and tail counts are always unknown.
WatchedFigures watched_figures_from(const Reader& r, const Json& j, const std::string& where,
                                    std::size_t thresholds, bool lengths_measured) {
  WatchedFigures f;
  f.seconds = r.number(j, where, "seconds");
  f.interruptions = r.count(j, where, "interruptions");
  f.preemptions = r.count(j, where, "preemptions");
  f.stolen_seconds = r.number(j, where, "stolen_seconds");
  if (!r.field(j, where, "longest_ns").is_null()) f.longest_ns = r.number(j, where, "longest_ns");
  const Json& over = r.array(j, where, "over_threshold");
  if (over.size() != thresholds)
    r.fail(where + ".over_threshold",
           fmt::format("must have one count (or null: unknown) per tail threshold ({})", thresholds));
  for (std::size_t i = 0; i < over.size(); ++i) {
    const std::string at = fmt::format("{}.over_threshold[{}]", where, i);
    if (over[i].is_null()) {
      f.over_threshold.emplace_back();
      continue;
    }
    if (!lengths_measured) r.fail(at, "must be null: the counts method measures no lengths");
    f.over_threshold.emplace_back(r.unsigned_value(over[i], at));
  }
  if (!lengths_measured && f.longest_ns)
    r.fail(where + ".longest_ns", "must be null: the counts method measures no lengths");
  return f;
}

BaselineWatched watched_from(const Reader& r, const Json& j, const std::string& where, std::size_t thresholds) {
  BaselineWatched w;
  w.cpu = cpu_number(r, j, where);
  w.method = r.text(j, where, "method");
  if (!known_watch_method(w.method))
    r.fail(where + ".method", fmt::format("must be \"{}\", \"{}\" or \"{}\", got \"{}\"", kWatchMethodBpf,
                                          kWatchMethodTracepoints, kWatchMethodCounts, w.method.substr(0, 40)));
  const bool lengths = watch_method_pairs(w.method);
  static_cast<WatchedFigures&>(w) = watched_figures_from(r, j, where, thresholds, lengths);
  w.outlier_threshold_ns = r.number(j, where, "outlier_threshold_ns");
  w.tail_unknown = r.text(j, where, "tail_unknown");
  const Json& windows = r.array(j, where, "sub_windows");
  for (std::size_t i = 0; i < windows.size(); ++i)
    w.sub_windows.push_back(
        watched_figures_from(r, windows[i], fmt::format("{}.sub_windows[{}]", where, i), thresholds, lengths));
  return w;
}

BaselineProbe probe_from(const Reader& r, const Json& j, const std::string& where) {
  BaselineProbe p;
  p.name = r.text(j, where, "name");
  p.success = r.boolean(j, where, "success");
  p.error = r.text(j, where, "error");
  p.tables = tables_from_json(r, r.array(j, where, "tables"), where + ".tables");
  shape_tables(p.name, p.tables);  // a file keeps the cells; the probe's facts say how they render
  p.notes = notes_from_json(r, r.array(j, where, "notes"), where + ".notes");
  p.has_samples = j.contains("samples");
  if (!p.has_samples) return p;  // format 1.0
  const Json& samples = r.array(j, where, "samples");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string at = fmt::format("{}.samples[{}]", where, i);
    ProbeSamples s;
    s.labels = r.string_pairs(samples[i], at, "labels");
    const Json& quantiles = r.field(samples[i], at, "quantiles");
    if (!quantiles.is_object()) r.fail(at + ".quantiles", "must be an object of column: quantile");
    for (const auto& [column, q] : quantiles.items()) {
      if (!q.is_number() || !(q.get<double>() > 0 && q.get<double>() < 1))
        r.fail(at + ".quantiles." + column, "must be a number between 0 and 1");
      s.quantiles.emplace_back(column, q.get<double>());
    }
    s.unit_ns = r.number(samples[i], at, "unit_ns");
    if (s.unit_ns <= 0) r.fail(at + ".unit_ns", "must be above 0");
    const Json& values = r.array(samples[i], at, "values");
    for (std::size_t v = 0; v < values.size(); ++v) {
      const std::string value_at = fmt::format("{}.values[{}]", at, v);
      if (!values[v].is_array() || values[v].size() != 2) r.fail(value_at, "must be [value, count]");
      s.values.emplace_back(r.unsigned_value(values[v][0], value_at + "[0]"),
                            r.unsigned_value(values[v][1], value_at + "[1]"));
    }
    p.samples.push_back(std::move(s));
  }
  return p;
}

// The file's own fields: format and version, the machine, the configuration and the thresholds.
void header_from(const Reader& r, const Json& j, Baseline& b) {
  if (!j.is_object() || !j.contains("format") || j["format"] != kBaselineFormatName)
    r.fail("format", fmt::format("not a jitterd baseline (no \"format\": \"{}\")", kBaselineFormatName));
  b.format_version = r.text(j, "", "format_version");
  const auto [major, minor] = parse_version(r, b.format_version);
  if (major > kBaselineFormatMajor)
    r.fail("format_version",
           fmt::format("version {} is newer than this jitterd reads ({}.x); compare it with a newer jitterd",
                       b.format_version, kBaselineFormatMajor));
  (void)minor;  // a newer minor only adds fields, which are ignored
  b.created = r.text(j, "", "created");
  b.jitterd_version = r.text(j, "", "jitterd_version");
  b.fingerprint = r.string_pairs(j, "", "fingerprint");
  b.configuration = r.string_pairs(j, "", "configuration");
  b.tick_method = r.text(j, "", "tick_method");
  b.counter_hertz = r.number(j, "", "counter_hertz");
  if (b.counter_hertz <= 0) r.fail("counter_hertz", "must be above 0");
  b.duration_seconds = r.number(j, "", "duration_seconds");
  b.sub_window_seconds = r.number(j, "", "sub_window_seconds");
  b.tail_thresholds_ns.clear();
  const Json& thresholds = r.array(j, "", "tail_thresholds_ns");
  for (const Json& t : thresholds) {
    if (!t.is_number() || t.get<double>() <= 0) r.fail("tail_thresholds_ns", "must be numbers above 0");
    b.tail_thresholds_ns.push_back(t.get<double>());
  }
}

// How an entry's key shows in a message: a CPU as its number, a name quoted (its first 60 bytes).
std::string entry_key_text(int cpu) { return std::to_string(cpu); }
std::string entry_key_text(const std::string& name) { return "\"" + name.substr(0, 60) + "\""; }

// The entries of list `list`, each read by `read(entry, "LIST[i]")` into `out`; an entry whose key
// (its member `key`: a CPU or a name) an earlier entry has is refused at LIST[i].FIELD: "WHAT KEY
// is given twice (also LIST[first])".
template <class T, class Key, class Read>
void list_entries_from(const Reader& r, const Json& entries, const std::string& list, std::vector<T>& out,
                       Read read, Key T::*key, const char* field, const char* what) {
  std::unordered_map<Key, std::size_t> first_at;  // key -> its entry
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", list, i);
    out.push_back(read(entries[i], at));
    const auto [first, inserted] = first_at.emplace(out.back().*key, i);
    if (!inserted)
      r.fail(at + "." + field, fmt::format("{} {} is given twice (also {}[{}])", what,
                                           entry_key_text(first->first), list, first->second));
  }
}

void cpus_from(const Reader& r, const Json& j, Baseline& b) {
  const Json& cpus = r.array(j, "", "cpus");
  if (cpus.size() > kBaselineMaxCpus)
    r.fail("cpus", fmt::format("{} CPUs, more than the limit of {} (x86-64's largest NR_CPUS)", cpus.size(),
                               kBaselineMaxCpus));
  const std::size_t thresholds = b.tail_thresholds_ns.size();
  const auto read = [&](const Json& e, const std::string& at) { return cpu_from(r, e, at, thresholds); };
  list_entries_from(r, cpus, "cpus", b.cpus, read, &BaselineCpu::cpu, "cpu", "cpu");
}

void probes_from(const Reader& r, const Json& j, Baseline& b) {
  const auto read = [&](const Json& e, const std::string& at) { return probe_from(r, e, at); };
  list_entries_from(r, r.array(j, "", "probes"), "probes", b.probes, read, &BaselineProbe::name, "name", "probe");
}

// Format 1.2; an older file has none.
void loops_from(const Reader& r, const Json& j, Baseline& b) {
  if (!j.contains("loops")) return;             // (JSON key)
  const Json& loops = r.array(j, "", "loops");  // (JSON key)
  if (loops.size() > kBaselineMaxLoops)
    r.fail("loops",  // (JSON key)
           fmt::format("{} loops, more than the limit of {} (the loops probe reads at most {} segments)",
                       loops.size(), kBaselineMaxLoops, kBaselineMaxLoops));
  const std::size_t thresholds = b.tail_thresholds_ns.size();
  const auto read = [&](const Json& e, const std::string& at) { return loop_from(r, e, at, thresholds); };
  list_entries_from(r, loops, "loops", b.loops, read, &BaselineLoop::name, "name", "loop");  // (JSON key)
}

// Format 1.2; an older file has none.
void watched_list_from(const Reader& r, const Json& j, Baseline& b) {
  if (!j.contains("watched")) return;
  const Json& watched = r.array(j, "", "watched");
  if (watched.size() > kBaselineMaxCpus)
    r.fail("watched", fmt::format("{} watched CPUs, more than the limit of {} (x86-64's largest NR_CPUS)",
                                  watched.size(), kBaselineMaxCpus));
  const std::size_t thresholds = b.tail_thresholds_ns.size();
  const auto read = [&](const Json& e, const std::string& at) { return watched_from(r, e, at, thresholds); };
  list_entries_from(r, watched, "watched", b.watched, read, &BaselineWatched::cpu, "cpu", "watched cpu");
}

}  // namespace

Baseline baseline_from_json(const Json& j, const std::string& source) {
  const Reader r(source);
  Baseline b;
  header_from(r, j, b);
  cpus_from(r, j, b);
  probes_from(r, j, b);
  loops_from(r, j, b);
  watched_list_from(r, j, b);
  return b;
}

Baseline parse_baseline(std::string_view text, const std::string& source) {
  Json document;
  try {
    document = parse_json_input(text);
  } catch (const JsonInputError& e) {
    if (e.syntax())
      throw BaselineError(kExitBadBaseline,
                          fmt::format("{}: not valid JSON (truncated or edited?) {}", source, e.what()));
    throw BaselineError(kExitBadBaseline, fmt::format("{}: {}", source, e.what()));
  }
  return baseline_from_json(document, source);
}

}  // namespace jitterd
