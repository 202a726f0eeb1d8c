// SPDX-License-Identifier: Apache-2.0
#include "probes/name_tally.h"

#include <algorithm>
#include <set>

namespace jitterd {
namespace {

using Entry = std::map<std::string, Tallied>::const_iterator;

// The first `n` of `entries` by `more` (ties by name, so a ranking never depends on map order).
template <typename More>
std::vector<Entry> first_by(std::vector<Entry> entries, std::size_t n, More more) {
  std::sort(entries.begin(), entries.end(), [&](Entry a, Entry b) {
    if (more(a->second, b->second)) return true;
    if (more(b->second, a->second)) return false;
    return a->first < b->first;
  });
  if (entries.size() > n) entries.resize(n);
  return entries;
}

bool more_time(const Tallied& a, const Tallied& b) { return a.ns > b.ns || (a.ns == b.ns && a.count > b.count); }
bool more_count(const Tallied& a, const Tallied& b) {
  return a.count > b.count || (a.count == b.count && a.ns > b.ns);
}

std::vector<Entry> entries_of(const std::map<std::string, Tallied>& names) {
  std::vector<Entry> out;
  out.reserve(names.size());
  for (auto it = names.begin(); it != names.end(); ++it) out.push_back(it);
  return out;
}

}  // namespace

Tallied& Tallied::operator+=(const Tallied& more) {
  count += more.count;
  ns += more.ns;
  if (more.pid != 0 || more.tid != 0) {
    pid = more.pid;
    tid = more.tid;
  }
  return *this;
}

void NameTally::add(const std::string& name, const Tallied& figures) {
  names_[name] += figures;
  if (names_.size() > 4 * capacity_) trim();  // amortized: a fold per 3 * capacity new names
}

void NameTally::merge(const NameTally& more) {
  for (const auto& [name, figures] : more.names_) add(name, figures);
  other_ += more.other_;
  unnamed_ += more.unnamed_;
  trim();
}

void NameTally::trim() {
  if (names_.size() <= capacity_) return;
  const std::vector<Entry> all = entries_of(names_);
  // The names a reader is shown are kept (a smaller table keeps fewer, so it can always fold).
  const std::size_t shown = std::min(kTopRows, capacity_ / 2);
  std::set<std::string> kept;
  for (Entry e : first_by(all, shown, more_time)) kept.insert(e->first);
  for (Entry e : first_by(all, shown, more_count)) kept.insert(e->first);
  std::vector<Entry> foldable;
  for (Entry e : all)
    if (!kept.count(e->first)) foldable.push_back(e);
  // The smallest by count go first (ties: the least time, then by name).
  std::vector<Entry> order = first_by(foldable, foldable.size(), more_count);
  std::reverse(order.begin(), order.end());
  std::vector<std::string> fold;
  for (std::size_t i = 0; i < order.size() && names_.size() - fold.size() > capacity_; ++i)
    fold.push_back(order[i]->first);
  for (const std::string& name : fold) {
    const auto found = names_.find(name);
    other_.count += found->second.count;
    other_.ns += found->second.ns;
    names_.erase(found);
  }
}

Tallied NameTally::total() const {
  Tallied sum{other_.count + unnamed_.count, other_.ns + unnamed_.ns};
  for (const auto& [name, figures] : names_) {
    sum.count += figures.count;
    sum.ns += figures.ns;
  }
  return sum;
}

TopTally top_of(const NameTally& tally, std::size_t n) {
  TopTally out;
  const std::vector<Entry> all = entries_of(tally.names());
  const std::vector<Entry> by_time = first_by(all, n, more_time), by_count = first_by(all, n, more_count);
  std::map<std::string, TallyRow> shown;
  for (std::size_t i = 0; i < by_time.size(); ++i)
    shown[by_time[i]->first] = {by_time[i]->first, by_time[i]->second, i + 1, 0};
  for (std::size_t i = 0; i < by_count.size(); ++i) {
    TallyRow& row = shown[by_count[i]->first];
    row.name = by_count[i]->first;
    row.figures = by_count[i]->second;
    row.rank_by_count = i + 1;
  }
  for (auto& [name, row] : shown) out.rows.push_back(std::move(row));
  std::sort(out.rows.begin(), out.rows.end(), [](const TallyRow& a, const TallyRow& b) {
    if (more_time(a.figures, b.figures)) return true;
    if (more_time(b.figures, a.figures)) return false;
    return a.name < b.name;
  });
  out.other = {tally.other().count, tally.other().ns};
  for (const auto& [name, figures] : tally.names())
    if (!shown.count(name)) out.other += Tallied{figures.count, figures.ns};
  out.unnamed = {tally.unnamed().count, tally.unnamed().ns};
  out.total = tally.total();
  return out;
}

void RollingTally::push(std::uint64_t end_ns, NameTally part) {
  part.trim();
  parts_.emplace_back(end_ns, std::move(part));
  while (!parts_.empty() && parts_.front().first + window_ns_ <= end_ns) parts_.pop_front();
}

NameTally RollingTally::merged(std::size_t capacity) const {
  NameTally out(capacity);
  for (const auto& [end, part] : parts_) {
    for (const auto& [name, figures] : part.names()) out.add(name, figures);
    out.add_other(part.other());
    out.add_unnamed(part.unnamed());
  }
  out.trim();
  return out;
}

}  // namespace jitterd
