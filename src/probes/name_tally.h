// SPDX-License-Identifier: Apache-2.0
// Who took a CPU, counted with bounded memory: per name (a preempting task's comm and class, or an
// interruption's source), how many times and how long, at most `capacity` names; the rest folds
// into `other`, so the names and `other` (and `unnamed`, what was counted without a name: a
// preemption under the outlier threshold) always add up to everything that was added. A name is a
// string an attacker may choose (any task can set its comm): a task that creates names as fast as
// it can only pushes the smallest names into `other`, never the largest, and never grows the table.
//
// Folding is by the smallest count among the names that are in the top kTopRows neither by count
// nor by time, so the few that a reader is shown are the last to go; a name folded and seen again
// starts afresh, so a named row is a lower bound on what that name took and `other` holds the rest.
// A RollingTally keeps one NameTally per part (a reading) over the window and merges them, as the
// rolling window of gaps merges its parts.
//
// Pure data; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace jitterd {

// The rows a reader is shown: the top kTopRows by time and by count (at most twice as many).
inline constexpr std::size_t kTopRows = 8;
// The names a tally keeps since start and over a window; a part (one reading) keeps fewer, as the
// window holds one per reading (3,600 over an hour read every second).
inline constexpr std::size_t kTallyNames = 64;
inline constexpr std::size_t kPartNames = 2 * kTopRows;

struct Tallied {
  std::uint64_t count = 0, ns = 0;
  std::uint32_t pid = 0, tid = 0;  // a task's process and thread, the last seen (0: a source)
  Tallied& operator+=(const Tallied& more);
  bool operator==(const Tallied&) const = default;
};

class NameTally {
 public:
  explicit NameTally(std::size_t capacity = kTallyNames) : capacity_(capacity) {}
  void add(const std::string& name, const Tallied& figures);
  void add_other(const Tallied& figures) { other_ += figures; }
  void add_unnamed(const Tallied& figures) { unnamed_ += figures; }
  // Adds everything `more` holds, its names as names, then folds down to capacity.
  void merge(const NameTally& more);
  // Folds names into `other` until at most `capacity` are left (see the file's comment).
  void trim();

  const std::map<std::string, Tallied>& names() const { return names_; }
  const Tallied& other() const { return other_; }
  const Tallied& unnamed() const { return unnamed_; }
  Tallied total() const;

 private:
  std::size_t capacity_;
  std::map<std::string, Tallied> names_;
  Tallied other_, unnamed_;
};

// One shown row: its rank by time and by count (1-based; 0 when it is not in that top).
struct TallyRow {
  std::string name;
  Tallied figures;
  std::size_t rank_by_time = 0, rank_by_count = 0;
};

struct TopTally {
  std::vector<TallyRow> rows;  // the top `n` by time and by count, by time first (ties by name)
  Tallied other;               // every other name, and the tally's own `other`
  Tallied unnamed;
  Tallied total;
};

TopTally top_of(const NameTally& tally, std::size_t n = kTopRows);

// A NameTally per part over the last `window_ns`, oldest first.
class RollingTally {
 public:
  explicit RollingTally(std::uint64_t window_ns) : window_ns_(window_ns) {}
  // The part that ended at `end_ns` (monotonic); parts that ended before end_ns - window go.
  void push(std::uint64_t end_ns, NameTally part);
  // Every part within the window merged, folded to `capacity` names.
  NameTally merged(std::size_t capacity = kTallyNames) const;
  std::size_t parts() const { return parts_.size(); }

 private:
  std::uint64_t window_ns_;
  std::deque<std::pair<std::uint64_t, NameTally>> parts_;
};

}  // namespace jitterd
