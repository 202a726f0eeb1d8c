// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "fleet/fleet_answers.h"
#include "host/text.h"
#include "report/baseline_file.h"

namespace jitterd {
namespace {

std::string promql_string(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Which label sets an instance showed over the range, and what to do with it.
void settle_host(FleetHistory& history, const std::string& instance, const std::vector<const PromSample*>& sets,
                 const std::vector<std::string>& identity_fields) {
  std::vector<std::string> changed;
  for (const std::string& field : identity_fields) {
    std::set<std::string> values;
    for (const PromSample* s : sets) values.insert(label_of(s->labels, field));
    if (values.size() > 1) changed.push_back(fmt::format("{} \"{}\"", field, fmt::join(values, "\", \"")));
  }
  if (!changed.empty()) {
    history.left_out.push_back(
        fmt::format("{}: left out, its {} changed inside the range", instance, fmt::join(changed, "; ")));
    return;
  }
  const PromSample* most = *std::max_element(
      sets.begin(), sets.end(), [](const PromSample* a, const PromSample* b) { return a->value < b->value; });
  if (sets.size() > 1)
    history.notes.push_back(
        fmt::format("{}: its fingerprint changed inside the range (in fields other than the cohort's and the "
                    "class's); the one seen at the most instants of the range is used",
                    instance));
  FleetHost host{instance, most->labels, {}};
  host.fingerprint.erase("__name__");
  host.fingerprint.erase("instance");
  history.hosts.push_back(std::move(host));
}

}  // namespace

FleetHistory fleet_hosts(const Json& data, const FleetSelection& selection, const std::string& source) {
  const std::vector<PromSample> samples = vector_samples(data, source);
  if (samples.empty()) throw_no_host(selection, source);
  std::set<std::string> fields;
  std::map<std::string, std::vector<const PromSample*>> by_instance;
  for (const PromSample& s : samples) {
    for (const auto& [name, value] : s.labels)
      if (name != "__name__" && name != "instance") fields.insert(name);
    const std::string instance = label_of(s.labels, "instance");
    if (instance.empty())
      wrong_vector_shape(source, fmt::format("a {} series without an instance label", kFingerprintSeries));
    by_instance[instance].push_back(&s);
  }
  std::vector<std::string> identity{selection.by, "cpu_model"};
  identity.insert(identity.end(), selection.class_fields.begin(), selection.class_fields.end());
  for (const std::string& field : identity)
    if (fields.count(field) == 0)
      throw BaselineError(kExitFleetUsage,
                          fmt::format("{}: no {} series has a label \"{}\" (given to {}); its labels: {}", source,
                                      kFingerprintSeries, field, field == selection.by ? "--by" : "--class",
                                      fmt::join(fields, ", ")));
  FleetHistory history;
  for (const PromSample& s : samples) history.most_scrapes = std::max(history.most_scrapes, s.value);
  for (const auto& [instance, sets] : by_instance) settle_host(history, instance, sets, identity);
  return history;
}

std::string instance_matcher(const std::vector<std::string>& instances) {
  std::string pattern;
  for (const std::string& instance : instances) {
    if (!pattern.empty()) pattern += '|';
    for (char c : instance) {
      if (std::string_view(".^$*+?()[]{}|\\").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
    }
  }
  return fmt::format("instance=~\"{}\"", promql_string(pattern));
}

void add_batch_figures(FleetHistory& history, const BatchAnswers& answers, const std::string& source) {
  add_figures(history, counter_values(answers, source));
}

void throw_no_host(const FleetSelection& selection, const std::string& source) {
  throw BaselineError(
      kExitBadBaseline,
      fmt::format("{}: no {} series{} between {} and {}: no jitterd host to compare", source, kFingerprintSeries,
                  selection.where.empty() ? "" : " matching " + selection.where, utc_text(selection.range.start),
                  utc_text(selection.range.end)));
}

}  // namespace jitterd
