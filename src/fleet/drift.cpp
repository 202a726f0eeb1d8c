// SPDX-License-Identifier: Apache-2.0
#include "fleet/drift.h"

#include <algorithm>
#include <cmath>

namespace jitterd {
namespace {

// Between the first and the third quartile (nearest rank): for a normal sample, 1.349 standard
// deviations, as 1.4826 x MAD is one.
double interquartile_range(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
  };
  return at(0.75) - at(0.25);
}

// Each fingerprint field's majority value in a class (a field without a majority is left out: no
// class value to differ from), counted once per class: per drifted host it made drift quadratic.
std::map<std::string, std::string> class_majorities(const std::vector<const ClassedHost*>& members) {
  std::map<std::string, std::map<std::string, std::size_t>> counts;  // field, value, hosts
  for (const ClassedHost* m : members)
    for (const auto& [field, value] : m->fingerprint) ++counts[field][value];
  std::map<std::string, std::string> out;
  for (const auto& [field, values] : counts) {
    std::size_t with = 0;
    for (const auto& [value, n] : values) with += n;
    std::map<std::string, std::size_t> all = values;
    if (with < members.size()) all[""] += members.size() - with;  // a host without the field: ""
    for (const auto& [value, n] : all)
      if (2 * n > members.size()) out[field] = value;
  }
  return out;
}

// The fields in which `host` differs from its class's majority.
std::vector<std::string> differing_fields(const ClassedHost& host,
                                          const std::map<std::string, std::string>& majorities) {
  std::vector<std::string> out;
  for (const auto& [field, majority] : majorities) {
    const auto mine = host.fingerprint.find(field);
    if ((mine == host.fingerprint.end() ? "" : mine->second) != majority) out.push_back(field);
  }
  return out;
}

void judge_class(const std::vector<FigureSpec>& figures, const std::vector<const ClassedHost*>& members,
                 const DriftCriteria& criteria, std::vector<DriftedHost>& out) {
  std::map<const ClassedHost*, DriftedHost> drifted;
  for (std::size_t f = 0; f < figures.size(); ++f) {
    const double r = figures[f].resolution;
    std::vector<double> logs, raw;
    for (const ClassedHost* m : members) {
      const double v = f < m->values.values.size() ? m->values.values[f] : NAN;
      if (!std::isnan(v) && v + r > 0) logs.push_back(std::log(v + r)), raw.push_back(v);
    }
    if (logs.size() < criteria.min_class) continue;
    const double centre = median_of(logs);
    std::vector<double> deviations;
    for (double l : logs) deviations.push_back(std::fabs(l - centre));
    const double scale =
        std::max({1.4826 * median_of(deviations), interquartile_range(logs) / 1.349, figures[f].cv});
    const double class_median = median_of(raw);
    for (const ClassedHost* m : members) {
      const double v = f < m->values.values.size() ? m->values.values[f] : NAN;
      if (std::isnan(v) || !(v + r > 0)) continue;
      const double distance = std::log(v + r) - centre;
      if (std::fabs(distance) <= criteria.k * scale) continue;
      DriftedHost& d = drifted[m];
      d.figures.push_back({figures[f].name, v, class_median, std::exp(distance)});
    }
  }
  if (drifted.empty()) return;
  const std::map<std::string, std::string> majorities = class_majorities(members);
  for (const ClassedHost* m : members) {  // by host name
    const auto it = drifted.find(m);
    if (it == drifted.end()) continue;
    DriftedHost& d = it->second;
    d.host = m->values.host;
    d.class_key = m->class_key;
    d.differing_fields = differing_fields(*m, majorities);
    out.push_back(std::move(d));
  }
}

}  // namespace

DriftResult find_drifted_hosts(const std::vector<FigureSpec>& figures, const std::vector<ClassedHost>& hosts,
                               const DriftCriteria& criteria) {
  std::map<std::string, std::vector<const ClassedHost*>> classes;
  for (const ClassedHost& h : hosts) classes[h.class_key].push_back(&h);
  DriftResult result;
  for (auto& [key, members] : classes) {
    std::sort(members.begin(), members.end(),
              [](const ClassedHost* a, const ClassedHost* b) { return a->values.host < b->values.host; });
    const bool judged = members.size() >= criteria.min_class;
    result.classes.push_back({key, members.size(), judged});
    if (judged) judge_class(figures, members, criteria, result.hosts);
  }
  return result;
}

}  // namespace jitterd
