// SPDX-License-Identifier: Apache-2.0
// The totals of the IPIs sent to each watched CPU by sender name, kept by the BPF loader
// (watch/bpf_watch.h) while the program's sender map holds only about one window of senders.
// Each reading gives every entry of the map (the count since the program made it); the totals
// take each entry's rise, and the entries that did not rise since the previous reading are
// returned for deletion. At most kMaxIpiSenderNames names per CPU are kept; IPIs of further names
// count in other(). Plain values, no kernel access; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace jitterd {

// Names of IPI senders kept per watched CPU.
inline constexpr std::size_t kMaxIpiSenderNames = 1024;

struct IpiSenderEntry {
  std::uint32_t cpu = 0;
  std::string name;
  std::uint64_t count = 0;  // since the program made the entry
};

class IpiSenderTotals {
 public:
  // Adds each entry's rise to the totals; the indexes of the entries that did not rise since the
  // previous update, which the caller deletes from the map.
  std::vector<std::size_t> update(const std::vector<IpiSenderEntry>& entries);
  // A returned entry the caller could not delete: its count stays known, so it is not added again.
  void not_deleted(const IpiSenderEntry& entry);
  // The totals of one CPU by name, and of the names beyond kMaxIpiSenderNames.
  std::map<std::string, std::uint64_t> totals(int cpu) const;
  std::uint64_t other(int cpu) const;

 private:
  std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> seen_;  // an entry's last count
  std::map<int, std::map<std::string, std::uint64_t>> totals_;
  std::map<int, std::uint64_t> other_;
};

}  // namespace jitterd
