// SPDX-License-Identifier: Apache-2.0
// A KernelWatch for tests of what the watch probe makes of a reading: its method, the tracepoints
// missing and the threads untracked are what the test sets; reading returns what it was given,
// take_records a CPU's records the test set, once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "watch/bpf_watch.h"
#include "watch/kernel_watch.h"

namespace jitterd::testing {

struct FakeKernelWatch : KernelWatch {
  std::string method_name = "bpf";
  std::vector<std::string> missing;
  std::size_t untracked = 0;
  std::vector<int> watched;
  PairedReading next;
  std::map<int, std::uint64_t> wanted;                // want_records' thresholds
  std::map<int, std::vector<PairedOutlier>> records;  // what take_records gives, then forgets

  std::string_view method() const override { return method_name; }
  void set_application(const std::vector<int>&) override {}
  PairedReading read() override { return next; }
  const std::vector<std::string>& missing_tracepoints() const override { return missing; }
  std::size_t application_untracked() const override { return untracked; }
  const std::vector<int>& cpus() const override { return watched; }
  void want_records(int cpu, std::uint64_t threshold_ns) override {
    wanted[cpu] = std::min(wanted.count(cpu) ? wanted[cpu] : threshold_ns, threshold_ns);
  }
  PairedRecords take_records(int cpu) override { return {std::exchange(records[cpu], {}), 0, 0}; }
};

}  // namespace jitterd::testing
