// SPDX-License-Identifier: Apache-2.0
#include "watch/ipi_senders.h"

namespace jitterd {

std::vector<std::size_t> IpiSenderTotals::update(const std::vector<IpiSenderEntry>& entries) {
  std::vector<std::size_t> idle;
  std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> seen;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const IpiSenderEntry& e = entries[i];
    std::pair<std::uint32_t, std::string> key{e.cpu, e.name};
    const auto before = seen_.find(key);
    if (before != seen_.end() && e.count == before->second) {
      idle.push_back(i);  // nothing since the last reading: a whole window
      continue;
    }
    // An entry the program made anew (deleted, then sent again) counts from 0.
    const std::uint64_t last = before == seen_.end() || e.count < before->second ? 0 : before->second;
    std::map<std::string, std::uint64_t>& totals = totals_[static_cast<int>(e.cpu)];
    if (totals.count(e.name) != 0 || totals.size() < kMaxIpiSenderNames)
      totals[e.name] += e.count - last;
    else
      other_[static_cast<int>(e.cpu)] += e.count - last;
    seen[std::move(key)] = e.count;
  }
  seen_ = std::move(seen);
  return idle;
}

void IpiSenderTotals::not_deleted(const IpiSenderEntry& entry) { seen_[{entry.cpu, entry.name}] = entry.count; }

std::map<std::string, std::uint64_t> IpiSenderTotals::totals(int cpu) const {
  const auto it = totals_.find(cpu);
  return it == totals_.end() ? std::map<std::string, std::uint64_t>{} : it->second;
}

std::uint64_t IpiSenderTotals::other(int cpu) const {
  const auto it = other_.find(cpu);
  return it == other_.end() ? 0 : it->second;
}

}  // namespace jitterd
