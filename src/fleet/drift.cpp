// SPDX-License-Identifier: Apache-2.0
#include "fleet/drift.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace jitterd {

std::string majority_value(const std::vector<std::string>& values) {
  std::map<std::string, std::size_t> counts;
  for (const std::string& v : values) ++counts[v];
  for (const auto& [value, count] : counts)
    if (2 * count > values.size()) return value;
  return "";
}

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

// The fields in which `host` differs from the majority of its class (a field without a majority
// is not named: no class value to differ from).
std::vector<std::string> differing_fields(const ClassedHost& host,
                                          const std::vector<const ClassedHost*>& members) {
  std::set<std::string> fields;
  for (const ClassedHost* m : members)
    for (const auto& [field, value] : m->fingerprint) fields.insert(field);
  std::vector<std::string> out;
  for (const std::string& field : fields) {
    std::vector<std::string> values;
    for (const ClassedHost* m : members) {
      const auto it = m->fingerprint.find(field);
      values.push_back(it == m->fingerprint.end() ? "" : it->second);
    }
    const auto mine = host.fingerprint.find(field);
    const std::string majority = majority_value(values);
    const bool has_majority =
        std::count(values.begin(), values.end(), majority) * 2 > static_cast<long>(values.size());
    if (has_majority && (mine == host.fingerprint.end() ? "" : mine->second) != majority) out.push_back(field);
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
    for (const ClassedHost* m : members) {
      const double v = f < m->values.values.size() ? m->values.values[f] : NAN;
      if (std::isnan(v) || !(v + r > 0)) continue;
      const double distance = std::log(v + r) - centre;
      if (std::fabs(distance) <= criteria.k * scale) continue;
      DriftedHost& d = drifted[m];
      d.figures.push_back({figures[f].name, v, median_of(raw), std::exp(distance)});
    }
  }
  for (const ClassedHost* m : members) {  // by host name
    const auto it = drifted.find(m);
    if (it == drifted.end()) continue;
    DriftedHost& d = it->second;
    d.host = m->values.host;
    d.class_key = m->class_key;
    d.differing_fields = differing_fields(*m, members);
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
