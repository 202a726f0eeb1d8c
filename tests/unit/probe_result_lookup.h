// SPDX-License-Identifier: Apache-2.0
// Lookups into a ProbeResult for the probe tests: the metrics of one name, one label's value, and
// the value of the first metric carrying a given subset of labels (a test failure if none does).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "probes/probe.h"

namespace jitterd::testing {

inline std::vector<const ProbeMetric*> named(const ProbeResult& r, const std::string& name) {
  std::vector<const ProbeMetric*> out;
  for (const auto& m : r.metrics) {
    if (m.name == name) out.push_back(&m);
  }
  return out;
}

inline std::string label(const ProbeMetric& m, const std::string& key) {
  for (const auto& [k, v] : m.labels) {
    if (k == key) return v;
  }
  return "";
}

inline double value(const ProbeResult& r, const std::string& name, const ProbeLabels& labels) {
  for (const ProbeMetric& m : r.metrics) {
    const bool has_labels = std::all_of(labels.begin(), labels.end(), [&](const auto& wanted) {
      return std::find(m.labels.begin(), m.labels.end(), wanted) != m.labels.end();
    });
    if (m.name == name && has_labels) return m.value;
  }
  FAIL("no " << name);
  return -1;
}

}  // namespace jitterd::testing
