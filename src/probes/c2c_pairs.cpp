#include "probes/c2c_pairs.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>

#include "host/cpu_list.h"

namespace jitterd {
namespace {

using PlacementIndex = std::map<int, const CpuPlacement*>;

constexpr std::array<CpuRelation, 5> relations{CpuRelation::smt_sibling, CpuRelation::shared_l2,
                                               CpuRelation::shared_l3, CpuRelation::same_package,
                                               CpuRelation::cross_package};

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

std::string pair_name(int a, int b) { return "pair (" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

// The lowest pair of `relation` among `candidates` (sorted), preferring pairs of two sampled
// CPUs, then pairs with one, so the representative also says something about the CPUs that
// matter most; nullptr if the class is absent.
const CpuPair* representative_of(CpuRelation relation, const std::vector<CpuPair>& candidates,
                                 const std::vector<int>& sampled) {
  const CpuPair* best = nullptr;
  int best_unsampled = 3;
  for (const CpuPair& pair : candidates) {
    if (pair.relation != relation) continue;
    const int unsampled = !has_cpu(sampled, pair.a) + !has_cpu(sampled, pair.b);
    if (unsampled < best_unsampled) {
      best = &pair;
      best_unsampled = unsampled;
      if (unsampled == 0) break;
    }
  }
  return best;
}

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
  const std::vector<CpuPair> candidates = every_pair(index, scope);
  for (CpuRelation relation : relations) {
    const bool covered = std::any_of(plan.pairs.begin(), plan.pairs.end(),
                                     [&](const CpuPair& p) { return p.relation == relation; });
    if (covered) continue;
    if (const CpuPair* pair = representative_of(relation, candidates, sampled)) {
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
  std::vector<int> sampled_usable;
  for (int cpu : sorted_cpus(sampled)) {
    if (has_cpu(usable, cpu)) sampled_usable.push_back(cpu);
  }

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
