// SPDX-License-Identifier: Apache-2.0
// plan_pairs (all, representative, explicit list) on the placements of the fixture machines, and
// next_pairs' budgeted continuation over several runs.
#include "probes/c2c_pairs.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <tuple>

#include "fixture_tree.h"
#include "host/cpu_list.h"

using jitterd::CpuPair;
using jitterd::CpuPlacement;
using jitterd::CpuRelation;
using jitterd::next_pairs;
using jitterd::PairCursor;
using jitterd::PairPlan;
using jitterd::PairRequest;
using jitterd::PairSelection;
using jitterd::plan_pairs;

namespace {

using jitterd::testing::fixtures;

std::vector<CpuPlacement> placements_of(const std::string& machine) {
  const jitterd::HostReader host(fixtures / machine / "sys", fixtures / machine / "proc");
  return jitterd::read_placements(host, jitterd::read_topology(host), nullptr);
}

std::vector<int> range(int first, int last) {
  std::vector<int> cpus;
  for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  return cpus;
}

std::vector<std::pair<int, int>> cpus_of(const std::vector<CpuPair>& pairs) {
  std::vector<std::pair<int, int>> out;
  for (const CpuPair& pair : pairs) out.emplace_back(pair.a, pair.b);
  return out;
}

std::set<CpuRelation> relations_of(const std::vector<CpuPair>& pairs) {
  std::set<CpuRelation> out;
  for (const CpuPair& pair : pairs) out.insert(pair.relation);
  return out;
}

PairRequest request(PairSelection selection) {
  PairRequest r;
  r.selection = selection;
  return r;
}

using Pairs = std::vector<std::pair<int, int>>;

}  // namespace

TEST_CASE("all gives every pair in scope, sorted and labelled", "[cpu_pairs]") {
  const PairPlan plan =
      plan_pairs(request(PairSelection::all), range(0, 15), {1, 2}, placements_of("two_socket_smt"));
  CHECK(plan.errors.empty());
  REQUIRE(plan.pairs.size() == 16 * 15 / 2);
  CHECK(std::is_sorted(plan.pairs.begin(), plan.pairs.end(),
                       [](const auto& l, const auto& r) { return std::pair(l.a, l.b) < std::pair(r.a, r.b); }));
  CHECK(std::all_of(plan.pairs.begin(), plan.pairs.end(), [](const CpuPair& p) { return p.a < p.b; }));
  const auto count = [&](CpuRelation r) {
    return std::count_if(plan.pairs.begin(), plan.pairs.end(), [r](const CpuPair& p) { return p.relation == r; });
  };
  CHECK(count(CpuRelation::smt_sibling) == 8);
  CHECK(count(CpuRelation::shared_l3) == 2 * (8 * 7 / 2 - 4));
  CHECK(count(CpuRelation::cross_package) == 8 * 8);
  const auto it =
      std::find_if(plan.pairs.begin(), plan.pairs.end(), [](const CpuPair& p) { return p.a == 0 && p.b == 4; });
  REQUIRE(it != plan.pairs.end());
  CHECK(*it == CpuPair{0, 4, CpuRelation::cross_package, 0, 1});
  CHECK(plan.notes == std::vector<std::string>{"every pair among the 16 CPUs in scope: 120 pairs"});
}

TEST_CASE("representative takes every sampled pair when few, plus each missing class", "[cpu_pairs]") {
  const PairPlan plan =
      plan_pairs(request(PairSelection::representative), range(0, 15), {9, 2, 1}, placements_of("two_socket_smt"));
  CHECK(plan.errors.empty());
  // No cross_package pair among the sampled CPUs (all in package 0): the lowest one with a
  // sampled CPU stands in for it.
  CHECK(cpus_of(plan.pairs) == Pairs{{1, 2}, {1, 4}, {1, 9}, {2, 9}});
  CHECK(plan.pairs[1].relation == CpuRelation::cross_package);
  CHECK(plan.notes == std::vector<std::string>{
                          "every pair among the 3 sampled CPUs: 3 pairs",
                          "cross_package: pair (1, 4) stands for its class",
                      });
}

TEST_CASE("representative gives one pair per class when many CPUs are sampled", "[cpu_pairs]") {
  const auto two_socket = placements_of("two_socket_smt");
  const PairPlan plan = plan_pairs(request(PairSelection::representative), range(0, 15), range(0, 15), two_socket);
  CHECK(cpus_of(plan.pairs) == Pairs{{0, 1}, {0, 4}, {0, 8}});
  CHECK(plan.notes.front() ==
        "16 sampled CPUs are more than small_set 8: one pair per relation class instead of "
        "every pair among them");

  // Pairs of two sampled CPUs are preferred to lower-numbered pairs.
  const PairPlan amd = plan_pairs(request(PairSelection::representative), range(0, 15), range(2, 15),
                                  placements_of("amd_multi_ccx"));
  CHECK(cpus_of(amd.pairs) == Pairs{{2, 3}, {2, 4}, {2, 10}});
  CHECK(amd.pairs[0].relation == CpuRelation::shared_l3);
  CHECK(amd.pairs[1].relation == CpuRelation::same_package);
  CHECK(amd.pairs[2].relation == CpuRelation::smt_sibling);

  // A pair with one sampled CPU is preferred to a lower pair of unsampled CPUs.
  const PairPlan few =
      plan_pairs(request(PairSelection::representative), range(0, 15), {4, 5}, placements_of("amd_multi_ccx"));
  CHECK(cpus_of(few.pairs) == Pairs{{0, 4}, {4, 5}, {4, 12}});
}

TEST_CASE("representative covers every relation class present in scope", "[cpu_pairs]") {
  for (const char* machine : {"two_socket_smt", "amd_multi_ccx", "vm_2cpu"}) {
    INFO(machine);
    const auto placements = placements_of(machine);
    std::vector<int> scope;
    for (const CpuPlacement& p : placements) scope.push_back(p.cpu);
    const PairPlan all = plan_pairs(request(PairSelection::all), scope, {}, placements);
    for (const std::vector<int>& sampled : {std::vector<int>{}, std::vector<int>{1}, scope}) {
      const PairPlan plan = plan_pairs(request(PairSelection::representative), scope, sampled, placements);
      CHECK(relations_of(plan.pairs) == relations_of(all.pairs));
      CHECK(plan.errors.empty());
    }
  }
  const PairPlan vm = plan_pairs(request(PairSelection::representative), {0, 1}, {1}, placements_of("vm_2cpu"));
  REQUIRE(vm.pairs.size() == 1);
  CHECK(vm.pairs[0] == CpuPair{0, 1, CpuRelation::same_package, std::nullopt, std::nullopt});
}

TEST_CASE("an explicit list is checked pair by pair", "[cpu_pairs]") {
  PairRequest r = request(PairSelection::list);
  r.list = {{0, 1}, {1, 0}, {2, 2}, {0, 99}, {98, 99}, {3, 2}, {1, 8}, {-1, 3}};
  const PairPlan plan = plan_pairs(r, range(0, 3), {0}, placements_of("two_socket_smt"));
  CHECK(plan.pairs ==
        std::vector<CpuPair>{{0, 1, CpuRelation::shared_l3, 0, 0}, {2, 3, CpuRelation::shared_l3, 0, 0}});
  CHECK(plan.error_texts() == std::vector<std::string>{
                                  "pair (1, 0): repeats pair (0, 1)",
                                  "pair (2, 2): a CPU cannot pair with itself",
                                  "pair (0, 99): cpu 99 is not among the CPUs the probe may use (0-3)",
                                  "pair (98, 99): cpus 98 and 99 are not among the CPUs the probe may use (0-3)",
                                  "pair (1, 8): cpu 8 is not among the CPUs the probe may use (0-3)",
                                  "pair (-1, 3): cpu -1 is not among the CPUs the probe may use (0-3)",
                              });
}

TEST_CASE("scope CPUs without a placement are left out with a note", "[cpu_pairs]") {
  const PairPlan plan = plan_pairs(request(PairSelection::all), {5, 1, 0, 1}, {0}, placements_of("vm_2cpu"));
  CHECK(cpus_of(plan.pairs) == Pairs{{0, 1}});
  CHECK(plan.notes.front() == "scope cpus 5: no topology (not online?); left out of c2c pairs");
  PairRequest r = request(PairSelection::list);
  r.list = {{0, 5}};
  CHECK(plan_pairs(r, {0, 1, 5}, {0}, placements_of("vm_2cpu")).error_texts() ==
        std::vector<std::string>{"pair (0, 5): cpu 5 is not among the CPUs the probe may use (0-1)"});
  CHECK(plan_pairs(request(PairSelection::all), {}, {}, placements_of("vm_2cpu")).pairs.empty());
}

TEST_CASE("next_pairs continues where the last run stopped and wraps", "[cpu_pairs]") {
  const PairPlan plan = plan_pairs(request(PairSelection::all), range(0, 4), {}, placements_of("amd_multi_ccx"));
  const std::vector<CpuPair>& pairs = plan.pairs;
  REQUIRE(pairs.size() == 10);
  PairCursor cursor;
  std::vector<CpuPair> probed;
  for (int run = 0; run < 10; ++run) {
    const std::vector<CpuPair> batch = next_pairs(pairs, cursor, 3);
    REQUIRE(batch.size() == 3);
    probed.insert(probed.end(), batch.begin(), batch.end());
  }
  // Thirty pairs over ten runs: three whole cycles, each pair once per cycle, in order.
  for (std::size_t i = 0; i < probed.size(); ++i) CHECK(probed[i] == pairs[i % pairs.size()]);
  CHECK(cursor.next == 0);

  cursor.next = 9;
  CHECK(next_pairs(pairs, cursor, 3) == std::vector<CpuPair>{pairs[9], pairs[0], pairs[1]});
  CHECK(cursor.next == 2);
}

TEST_CASE("next_pairs with a budget above the pair count gives each pair once", "[cpu_pairs]") {
  const PairPlan plan = plan_pairs(request(PairSelection::all), range(0, 2), {}, placements_of("amd_multi_ccx"));
  REQUIRE(plan.pairs.size() == 3);
  PairCursor cursor{1};
  CHECK(next_pairs(plan.pairs, cursor, 100) == std::vector<CpuPair>{plan.pairs[1], plan.pairs[2], plan.pairs[0]});
  CHECK(cursor.next == 1);

  // A plan that shrank on reload: the stale cursor wraps instead of running off the end.
  cursor.next = 7;
  CHECK(next_pairs(plan.pairs, cursor, 1) == std::vector<CpuPair>{plan.pairs[1]});
  CHECK(cursor.next == 2);

  CHECK(next_pairs(plan.pairs, cursor, 0).empty());
  CHECK(cursor.next == 2);
}

TEST_CASE("next_pairs on no pairs gives nothing and rewinds", "[cpu_pairs]") {
  PairCursor cursor{5};
  CHECK(next_pairs({}, cursor, 4).empty());
  CHECK(cursor.next == 0);
}

namespace {

// The representative pairs as the plan defines them, by brute force over every pair: per class
// absent from the small-set pairs, the lowest (a, b) among the pairs with the fewest unsampled CPUs.
std::vector<std::pair<int, int>> representatives_by_brute_force(const std::vector<CpuPlacement>& placements,
                                                                const std::vector<int>& scope,
                                                                const std::vector<int>& sampled) {
  std::map<CpuRelation, std::tuple<int, int, int>> best;  // relation -> (unsampled, a, b)
  for (std::size_t i = 0; i < scope.size(); ++i) {
    for (std::size_t j = i + 1; j < scope.size(); ++j) {
      const int a = scope[i], b = scope[j];
      const CpuRelation relation =
          jitterd::classify_pair(placements[static_cast<std::size_t>(a)], placements[static_cast<std::size_t>(b)]);
      const int unsampled = !jitterd::has_cpu(sampled, a) + !jitterd::has_cpu(sampled, b);
      const auto candidate = std::make_tuple(unsampled, a, b);
      const auto found = best.find(relation);
      if (found == best.end() || candidate < found->second) best[relation] = candidate;
    }
  }
  std::vector<std::pair<int, int>> out;
  for (const auto& [relation, pick] : best) out.emplace_back(std::get<1>(pick), std::get<2>(pick));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

TEST_CASE("representative: the pairs found without listing every pair are those brute force finds",
          "[c2c_pairs]") {
  // Random machines: packages, SMT siblings, clusters and caches listed on one side only at
  // times (incomplete sysfs), scopes with unsampled CPUs, so every class and preference tier is met.
  std::uint64_t state = 2026;
  const auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  for (int machine = 0; machine < 300; ++machine) {
    const int cpus = 2 + static_cast<int>(next(40));
    const int packages = 1 + static_cast<int>(next(3));
    std::vector<CpuPlacement> placements(static_cast<std::size_t>(cpus));
    for (int cpu = 0; cpu < cpus; ++cpu) {
      CpuPlacement& p = placements[static_cast<std::size_t>(cpu)];
      p.cpu = cpu;
      p.package_id = static_cast<int>(next(static_cast<std::uint64_t>(packages)));
      p.smt_siblings = {cpu};
      const auto some_cpus = [&](int count) {
        std::vector<int> list{cpu};
        for (int k = 0; k < count; ++k) list.push_back(static_cast<int>(next(static_cast<std::uint64_t>(cpus))));
        return jitterd::sorted_cpus(std::move(list));
      };
      if (next(3) == 0) p.smt_siblings = some_cpus(1);
      if (next(4) == 0) p.cluster_cpus = some_cpus(2);
      if (next(2) == 0) p.caches.push_back({2, "Unified", some_cpus(static_cast<int>(next(2)))});
      if (next(4) != 0) p.caches.push_back({3, "Unified", some_cpus(static_cast<int>(next(8)))});
    }
    std::vector<int> scope, sampled;
    for (int cpu = 0; cpu < cpus; ++cpu) {
      if (next(5) == 0) continue;
      scope.push_back(cpu);
      if (next(3) != 0) sampled.push_back(cpu);
    }
    PairRequest request;
    request.small_set = 0;  // only the class representatives
    const PairPlan plan = plan_pairs(request, scope, sampled, placements);
    INFO("machine " << machine << ": " << cpus << " cpus, " << packages << " packages");
    CHECK(cpus_of(plan.pairs) == representatives_by_brute_force(placements, scope, sampled));
  }
}
