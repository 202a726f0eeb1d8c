// SPDX-License-Identifier: Apache-2.0
// Which CPU pairs the c2c latency probe measures, each labelled with its relation and NUMA
// nodes, and which of them one run probes. The series count stays bounded: the default
// `representative` selection probes one pair per relation class present (plus every pair among
// the sampled CPUs when there are few), and a run probes at most a budget of pairs, continuing
// where the previous run stopped so a 192-CPU machine never stalls. Pure functions with no
// syscalls: plan_pairs runs on the daemon's main thread at start-up and reload, next_pairs on
// the thread that schedules the probe; a PairCursor belongs to that one thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/cache_topology.h"

namespace jitterd {

struct CpuPair {
  int a = 0, b = 0;  // a < b
  CpuRelation relation = CpuRelation::cross_package;
  std::optional<int> node_a, node_b;
  bool operator==(const CpuPair&) const = default;
};

// Every relation class, closest first: the order the representative search covers them in and
// the class summaries list them in.
inline constexpr CpuRelation kCpuRelations[] = {CpuRelation::smt_sibling, CpuRelation::shared_l2,
                                                CpuRelation::shared_l3, CpuRelation::same_package,
                                                CpuRelation::cross_package};

// "pair (0, 9)": how errors and notes name a pair, its CPUs in the order given.
std::string pair_name(int a, int b);

enum class PairSelection { all, representative, list };

struct PairRequest {
  PairSelection selection = PairSelection::representative;
  std::vector<std::pair<int, int>> list;  // for `list`; (b, a) means the same pair as (a, b)
  std::size_t small_set = 8;              // up to this many sampled CPUs: every pair among them
  bool operator==(const PairRequest&) const = default;
};

// Why a list entry was rejected; `text` names the entry ("pair (0, 99): cpu 99 is not among ...").
struct PairListError {
  enum class Kind { same_cpu, outside_scope, repeat };
  Kind kind = Kind::outside_scope;
  std::string text;
};

struct PairPlan {
  std::vector<CpuPair> pairs;         // sorted by (a, b), unique
  std::vector<PairListError> errors;  // one per rejected list entry; its pair is left out
  std::vector<std::string> notes;     // one line each, explaining the choice
  // The errors' texts, in order.
  std::vector<std::string> error_texts() const;
};

// `scope`: the CPUs the probe may use (the sampled CPUs, plus others if the config allows);
// `sampled` should be a subset of it. A scope CPU without a placement (not online) is left out
// with a note.
//   all: every pair in scope, n(n-1)/2 of them.
//   representative: every pair among the sampled CPUs when there are at most small_set of
//     them, plus, for each relation class present within scope and not yet covered, the
//     lowest-numbered pair of that class, preferring pairs of two sampled CPUs, then pairs with
//     one.
//   list: each entry checked (both CPUs in scope, two different CPUs, not a repeat), with an
//     error naming the entry and why.
PairPlan plan_pairs(const PairRequest& request, const std::vector<int>& scope, const std::vector<int>& sampled,
                    const std::vector<CpuPlacement>& placements);

// Where the next run starts in a plan's pairs.
struct PairCursor {
  std::size_t next = 0;
};

// The next min(budget, pairs.size()) pairs starting at cursor.next, wrapping around the end, so
// successive runs cover every pair once per cycle; the cursor advances past them. A cursor beyond
// the end (the plan shrank on reload) wraps too. No pairs or a zero budget give nothing.
std::vector<CpuPair> next_pairs(const std::vector<CpuPair>& pairs, PairCursor& cursor, std::size_t budget);

}  // namespace jitterd
