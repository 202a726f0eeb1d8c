// SPDX-License-Identifier: Apache-2.0
// The flags of `jitterd fleet` (docs/fleet.md) and their checks: everything a bad value can be
// told from before Prometheus is asked.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "cli/verb_flags.h"
#include "compare/time_range.h"
#include "host/text.h"

namespace jitterd {

CLI::App* add_fleet_verb(CLI::App& app, CommandLine& cl, ReportFlags& flags, FleetFlags& fleet_flags) {
  CLI::App& fleet = *app.add_subcommand(
      "fleet",
      "compare cohorts of hosts (the values of one fingerprint field) over one range of Prometheus history, "
      "and list the hosts that drifted from their class");
  fleet.add_option("--prometheus", cl.prometheus.url, "the Prometheus that scraped the fleet's jitterd instances")
      ->type_name("URL");
  fleet
      .add_option("--range", cl.fleet_range,
                  "START/END, each RFC 3339 (2026-11-25T10:00:00Z), unix seconds, now or now-DURATION; or "
                  "DURATION alone (24h, -1h: the last one, ending now)")
      ->type_name("RANGE");
  fleet
      .add_option("--by", cl.fleet_selection.by,
                  "the fingerprint field whose values are the cohorts (a label of jitterd_fingerprint_info: "
                  "kernel, microcode, bios_version, ...)")
      ->type_name("FIELD");
  fleet
      .add_option("--where", cl.fleet_selection.where,
                  "only the hosts whose jitterd_fingerprint_info matches these PromQL label matchers, e.g. "
                  "'cpu_model=~\".*6342.*\"'")
      ->type_name("MATCHERS");
  fleet.add_option("--reference", cl.fleet_options.reference, "the reference cohort (default: the largest)")
      ->type_name("VALUE");
  fleet
      .add_option("--class", fleet_flags.classes,
                  "fingerprint fields that, with cpu_model, make a class of identical hosts for the drift "
                  "check (comma-separated)")
      ->type_name("FIELD,...");
  fleet.add_option("--alpha", fleet_flags.alpha, "the level of a verdict after adjustment (0.0001..0.2)")
      ->type_name("P")
      ->capture_default_str();
  fleet
      .add_option("--min-hosts", fleet_flags.min_hosts,
                  "the fewest comparable hosts a cohort needs for a verdict (3..1000)")
      ->type_name("N")
      ->capture_default_str();
  fleet
      .add_option("--adjustment", fleet_flags.adjustment,
                  "over every figure and cohort: holm (family-wise) or bh (Benjamini-Hochberg, false discoveries)")
      ->type_name("holm|bh")
      ->capture_default_str();
  fleet
      .add_option("--aa-splits", fleet_flags.aa_splits,
                  "how many random halvings of the reference cohort measure the A/A false alarm rate (10..10000)")
      ->type_name("N")
      ->capture_default_str();
  add_format_flag(fleet, flags, "how to print the answer");
  add_prometheus_connection_flags(fleet, cl, flags);
  return &fleet;
}

namespace {

// A number in [low, high], or nullopt.
std::optional<double> number_in(const std::string& text, double low, double high) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= low && v <= high)) return std::nullopt;
  return v;
}

bool label_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
         std::string::npos;
}

}  // namespace

void check_fleet(CommandLine& cl, const CLI::App& fleet, const ReportFlags& flags, const FleetFlags& fleet_flags) {
  const std::string hint = "see jitterd fleet --help";
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--prometheus", &cl.prometheus.url},
                                    {"--range", &cl.fleet_range},
                                    {"--by", &cl.fleet_selection.by}})
    if (value->empty()) throw UsageError(std::string("fleet: ") + flag + " is needed", hint);
  if (cl.prometheus.url.rfind("http://", 0) != 0 && cl.prometheus.url.rfind("https://", 0) != 0)
    throw UsageError("--prometheus: must be an http:// or https:// URL, got \"" + cl.prometheus.url + "\"", hint);
  const TimeRange range = checked_time_range("--range", cl.fleet_range, hint);
  // The counters are read at END: an END still to come would read them as they are now, a shorter
  // range than the one asked for.
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (range.end > now + 1)
    throw UsageError(
        fmt::format("--range: END {} is in the future (now {}): the range is not over; end it at now or "
                    "earlier",
                    utc_text(range.end), utc_text(now)),
        hint);
  cl.fleet_selection.range = range;
  if (!label_name(cl.fleet_selection.by))
    throw UsageError("--by: \"" + cl.fleet_selection.by + "\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", hint);
  if (fleet.count("--class") > 0)
    for (const std::string& field : comma_separated(fleet_flags.classes)) {
      if (!label_name(field))
        throw UsageError("--class: \"" + field + "\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", hint);
      cl.fleet_selection.class_fields.push_back(field);
    }
  if (cl.fleet_selection.where.find_first_of("{}\n") != std::string::npos)
    throw UsageError(
        "--where: label matchers as inside {...} (name=\"value\", name=~\"regex\", comma-separated), "
        "without braces or newlines; got \"" +
            cl.fleet_selection.where + "\"",
        hint);
  FleetCriteria& criteria = cl.fleet_options.criteria;
  const std::optional<double> alpha = number_in(fleet_flags.alpha, 0.0001, 0.2);
  if (!alpha) throw UsageError("--alpha: must be 0.0001..0.2, got \"" + fleet_flags.alpha + "\"", hint);
  criteria.alpha = *alpha;
  const std::optional<double> min_hosts = number_in(fleet_flags.min_hosts, 3, 1000);
  if (!min_hosts || *min_hosts != std::floor(*min_hosts))
    throw UsageError("--min-hosts: must be a whole number 3..1000, got \"" + fleet_flags.min_hosts + "\"", hint);
  criteria.min_hosts = static_cast<std::size_t>(*min_hosts);
  if (fleet_flags.adjustment != "holm" && fleet_flags.adjustment != "bh")
    throw UsageError("--adjustment: holm or bh, got \"" + fleet_flags.adjustment + "\"", hint);
  criteria.adjustment = fleet_flags.adjustment == "holm" ? Adjustment::holm : Adjustment::benjamini_hochberg;
  const std::optional<double> splits = number_in(fleet_flags.aa_splits, 10, 10000);
  if (!splits || *splits != std::floor(*splits))
    throw UsageError("--aa-splits: must be a whole number 10..10000, got \"" + fleet_flags.aa_splits + "\"", hint);
  cl.fleet_options.aa_splits = static_cast<std::size_t>(*splits);
  check_http_flags(cl.prometheus, "--prometheus", fleet, {flags.prometheus_timeout, flags.prometheus_max_bytes},
                   std::size_t{16} << 30, "16GiB", hint);
}

}  // namespace jitterd
