// SPDX-License-Identifier: Apache-2.0
// The order statistics of the pairwise differences other - reference within strata (the
// Hodges-Lehmann shift and its interval, fleet_statistics.h), without forming the m x k
// differences: at 50,000 hosts the two halves of an A/A split hold 156 million pairs per figure,
// and forming them made fleet quadratic in hosts (32.8 s of CPU at 5,000 hosts).
// Each stratum is a matrix whose row i is other[i] (ascending) and column j reference[j]
// (descending), so that a row's differences never fall left to right and a column's never fall
// top to bottom (floating-point subtraction is monotone in each operand). A selection narrows,
// per row, the columns that can still hold the k-th difference: two pivots drawn from the
// remaining differences bracket the target's rank (Floyd and Rivest 1975), each count a binary
// search per row, so a selection costs O((m + k) log(m k)) per stratum after the sorts, and the
// last few thousand candidates are selected directly. The answer is the k-th smallest of the very
// doubles `o - r` that forming them would give, so results are unchanged to the bit.
// Pure, deterministic (the pivots come from a fixed-seed generator), safe from any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace jitterd {

class PairDifferences {
 public:
  // Adds a stratum's values (copied and sorted); a stratum with an empty side adds no pairs.
  void add(std::vector<double> reference, std::vector<double> other);
  std::size_t size() const { return pairs_; }
  // The k-th smallest difference (0-based, k < size()), as std::nth_element over every o - r.
  double kth(std::size_t k) const;

 private:
  struct Block {
    std::vector<double> other;      // ascending: the rows
    std::vector<double> reference;  // descending: the columns
  };
  std::vector<Block> blocks_;
  std::size_t pairs_ = 0;
};

}  // namespace jitterd
