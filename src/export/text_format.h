// SPDX-License-Identifier: Apache-2.0
// The Prometheus text exposition of a scrape: byte for byte what prometheus-cpp's TextSerializer
// writes (its golden file and a unit test compare the two), appended to one reserved string with
// std::to_chars instead of an ostream, which costs a 1,024-CPU scrape of 90,000 series a third of
// the time (docs/benchmarks.md, "At 1,024 CPUs"). A pure function: any thread may call it.
#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace jitterd {

std::string serialize_text(const std::vector<prometheus::MetricFamily>& families);

}  // namespace jitterd
