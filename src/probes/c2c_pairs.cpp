// SPDX-License-Identifier: Apache-2.0
#include "probes/c2c_pairs.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include "host/cpu_list.h"

namespace jitterd {
namespace {

using PlacementIndex = std::map<int, const CpuPlacement*>;

CpuPair labelled(const PlacementIndex& index, int x, int y) {
  const CpuPlacement& a = *index.at(std::min(x, y));
  const CpuPlacement& b = *index.at(std::max(x, y));
  return CpuPair{a.cpu, b.cpu, classify_pair(a, b), a.numa_node, b.numa_node};
}

// Every pair among `cpus` (sorted, unique, all in `index`), already in (a, b) order.
std::vector<CpuPair> every_pair(const PlacementIndex& index, const std::vector<int>& cpus) {
  std::vector<CpuPair> pairs;
  if (cpus.size() > 1) pairs.reserve(cpus.size() * (cpus.size() - 1) / 2);
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    for (std::size_t j = i + 1; j < cpus.size(); ++j) {
      pairs.push_back(labelled(index, cpus[i], cpus[j]));
    }
  }
  return pairs;
}

// The representative search without listing every pair (half a million on 1,024 CPUs). A pair's
// relation is decided by the package alone unless one CPU lists the other as an SMT sibling, in
// its cluster or in a cache: so each CPU's "close" CPUs (listed on either side) are collected
// once, and a package-level class is found by counting, per package, the CPUs above `a`.
class RepresentativeSearch {
 public:
  RepresentativeSearch(const PlacementIndex& index, const std::vector<int>& scope, const std::vector<int>& sampled)
      : index_(index), scope_(scope), sampled_(sampled), unsampled_(cpus_minus(scope, sampled)) {
    std::map<int, std::vector<int>> close;
    for (int cpu : scope_) {
      const CpuPlacement& p = *index_.at(cpu);
      std::vector<int> listed = p.smt_siblings;
      listed.insert(listed.end(), p.cluster_cpus.begin(), p.cluster_cpus.end());
      for (const CacheLevel& cache : p.caches)
        listed.insert(listed.end(), cache.shared_cpus.begin(), cache.shared_cpus.end());
      for (int other : sorted_cpus(std::move(listed))) {
        if (other == cpu || !has_cpu(scope_, other)) continue;
        close[std::min(cpu, other)].push_back(std::max(cpu, other));
      }
    }
    for (auto& [a, above] : close) {
      const CpuPlacement& pa = *index_.at(a);
      for (int b : sorted_cpus(std::move(above))) {
        const CpuPlacement& pb = *index_.at(b);
        close_above_[a].push_back({b, classify_pair(pa, pb), pa.package_id == pb.package_id});
      }
    }
    for (int cpu : sampled_) sampled_by_package_[index_.at(cpu)->package_id].push_back(cpu);
    for (int cpu : unsampled_) unsampled_by_package_[index_.at(cpu)->package_id].push_back(cpu);
  }

  // The lowest pair (a, b) of `relation`, preferring pairs of two sampled CPUs, then pairs with
  // one; std::nullopt if the class is absent.
  std::optional<CpuPair> find(CpuRelation relation) const {
    for (int unsampled = 0; unsampled <= 2; ++unsampled) {
      for (int a : scope_) {
        // The other CPU's side: what makes the pair have `unsampled` unsampled CPUs.
        const int b_unsampled = unsampled - (has_cpu(sampled_, a) ? 0 : 1);
        if (b_unsampled < 0 || b_unsampled > 1) continue;
        if (const std::optional<int> b = first_partner(a, relation, b_unsampled == 0))
          return labelled(index_, a, *b);
      }
    }
    return std::nullopt;
  }

 private:
  struct Close {
    int cpu;
    CpuRelation relation;
    bool same_package;
  };

  static std::size_t count_above(const std::vector<int>& cpus, int a) {
    return static_cast<std::size_t>(cpus.end() - std::upper_bound(cpus.begin(), cpus.end(), a));
  }

  // The lowest b > a, sampled or not as asked, with relation(a, b) == relation.
  std::optional<int> first_partner(int a, CpuRelation relation, bool b_sampled) const {
    static const std::vector<Close> no_close;
    static const std::vector<int> none;
    const std::vector<int>& side = b_sampled ? sampled_ : unsampled_;
    const auto close_found = close_above_.find(a);
    const std::vector<Close>& close = close_found == close_above_.end() ? no_close : close_found->second;
    if (relation != CpuRelation::same_package && relation != CpuRelation::cross_package) {
      for (const Close& c : close)
        if (c.relation == relation && has_cpu(side, c.cpu)) return c.cpu;
      return std::nullopt;
    }
    const bool same = relation == CpuRelation::same_package;
    const int package_id = index_.at(a)->package_id;
    const auto& by_package = b_sampled ? sampled_by_package_ : unsampled_by_package_;
    const auto package = by_package.find(package_id);
    const std::vector<int>& own_package = package == by_package.end() ? none : package->second;
    // CPUs above a in the wanted packages, less the close ones among them (never this class).
    std::size_t wanted = same ? count_above(own_package, a) : count_above(side, a) - count_above(own_package, a);
    for (const Close& c : close)
      if (c.same_package == same && has_cpu(side, c.cpu)) --wanted;
    if (wanted == 0) return std::nullopt;
    const auto is_close = [&](int b) {
      return std::any_of(close.begin(), close.end(), [b](const Close& c) { return c.cpu == b; });
    };
    const std::vector<int>& walk = same ? own_package : side;
    for (auto it = std::upper_bound(walk.begin(), walk.end(), a); it != walk.end(); ++it) {
      if ((index_.at(*it)->package_id == package_id) == same && !is_close(*it)) return *it;
    }
    return std::nullopt;
  }

  const PlacementIndex& index_;
  const std::vector<int>& scope_;
  const std::vector<int>& sampled_;
  std::vector<int> unsampled_;
  std::map<int, std::vector<Close>> close_above_;  // by a: the close CPUs b > a, by b
  std::map<int, std::vector<int>> sampled_by_package_, unsampled_by_package_;
};

void plan_representative(const PairRequest& request, const PlacementIndex& index, const std::vector<int>& scope,
                         const std::vector<int>& sampled, PairPlan& plan) {
  const std::string count = std::to_string(sampled.size());
  if (sampled.size() <= request.small_set) {
    plan.pairs = every_pair(index, sampled);
    plan.notes.push_back("every pair among the " + count + " sampled CPUs: " + std::to_string(plan.pairs.size()) +
                         " pairs");
  } else {
    plan.notes.push_back(count + " sampled CPUs are more than small_set " + std::to_string(request.small_set) +
                         ": one pair per relation class instead of every pair among them");
  }
  const RepresentativeSearch search(index, scope, sampled);
  for (CpuRelation relation : kCpuRelations) {
    const bool covered = std::any_of(plan.pairs.begin(), plan.pairs.end(),
                                     [&](const CpuPair& p) { return p.relation == relation; });
    if (covered) continue;
    if (const std::optional<CpuPair> pair = search.find(relation)) {
      plan.pairs.push_back(*pair);
      plan.notes.push_back(std::string(to_string(relation)) + ": " + pair_name(pair->a, pair->b) +
                           " stands for its class");
    }
  }
}

// "cpu 9 is not" or "cpus 8 and 9 are not", for list errors.
std::string outside_scope(const std::vector<int>& outside, const std::vector<int>& scope) {
  const std::string who =
      outside.size() == 1 ? "cpu " + std::to_string(outside[0]) + " is"
                          : "cpus " + std::to_string(outside[0]) + " and " + std::to_string(outside[1]) + " are";
  return who + " not among the CPUs the probe may use (" + describe_cpu_list(scope) + ")";
}

void plan_list(const PairRequest& request, const PlacementIndex& index, const std::vector<int>& scope,
               PairPlan& plan) {
  std::map<std::pair<int, int>, std::pair<int, int>> first_written;
  for (const auto& [x, y] : request.list) {
    const std::string name = pair_name(x, y);
    if (x == y) {
      plan.errors.push_back({PairListError::Kind::same_cpu, name + ": a CPU cannot pair with itself"});
      continue;
    }
    std::vector<int> outside;
    for (int cpu : {x, y}) {
      if (!has_cpu(scope, cpu)) outside.push_back(cpu);
    }
    if (!outside.empty()) {
      plan.errors.push_back({PairListError::Kind::outside_scope, name + ": " + outside_scope(outside, scope)});
      continue;
    }
    const auto [it, inserted] = first_written.emplace(std::minmax(x, y), std::pair(x, y));
    if (!inserted) {
      plan.errors.push_back(
          {PairListError::Kind::repeat, name + ": repeats " + pair_name(it->second.first, it->second.second)});
      continue;
    }
    plan.pairs.push_back(labelled(index, x, y));
  }
}

}  // namespace

std::string pair_name(int a, int b) { return "pair (" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

std::vector<std::string> PairPlan::error_texts() const {
  std::vector<std::string> texts;
  for (const PairListError& error : errors) texts.push_back(error.text);
  return texts;
}

PairPlan plan_pairs(const PairRequest& request, const std::vector<int>& scope, const std::vector<int>& sampled,
                    const std::vector<CpuPlacement>& placements) {
  PairPlan plan;
  PlacementIndex index;
  for (const CpuPlacement& placement : placements) index.emplace(placement.cpu, &placement);

  // A CPU without a placement is not online: it could be neither pinned nor labelled.
  std::vector<int> usable, unplaced;
  for (int cpu : sorted_cpus(scope)) (index.count(cpu) != 0 ? usable : unplaced).push_back(cpu);
  if (!unplaced.empty()) {
    plan.notes.push_back("scope cpus " + format_cpu_list(unplaced) +
                         ": no topology (not online?); left out of c2c pairs");
  }
  const std::vector<int> sampled_usable = cpus_intersection(sorted_cpus(sampled), usable);

  switch (request.selection) {
    case PairSelection::all:
      plan.pairs = every_pair(index, usable);
      plan.notes.push_back("every pair among the " + std::to_string(usable.size()) +
                           " CPUs in scope: " + std::to_string(plan.pairs.size()) + " pairs");
      break;
    case PairSelection::representative:
      plan_representative(request, index, usable, sampled_usable, plan);
      break;
    case PairSelection::list:
      plan_list(request, index, usable, plan);
      break;
  }
  const auto by_cpus = [](const CpuPair& l, const CpuPair& r) {
    return std::pair(l.a, l.b) < std::pair(r.a, r.b);
  };
  std::sort(plan.pairs.begin(), plan.pairs.end(), by_cpus);
  plan.pairs.erase(std::unique(plan.pairs.begin(), plan.pairs.end()), plan.pairs.end());
  return plan;
}

std::vector<CpuPair> next_pairs(const std::vector<CpuPair>& pairs, PairCursor& cursor, std::size_t budget) {
  if (pairs.empty()) {
    cursor.next = 0;
    return {};
  }
  const std::size_t start = cursor.next % pairs.size();
  const std::size_t count = std::min(budget, pairs.size());
  std::vector<CpuPair> chosen;
  chosen.reserve(count);
  for (std::size_t i = 0; i < count; ++i) chosen.push_back(pairs[(start + i) % pairs.size()]);
  cursor.next = (start + count) % pairs.size();
  return chosen;
}

}  // namespace jitterd
