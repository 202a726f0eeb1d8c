// SPDX-License-Identifier: Apache-2.0
// The kernel's two ways of writing a set of CPUs: the cpu-list format of
// /sys/devices/system/cpu/{online,isolated,...} and thread_siblings_list ("0-3,5,8-11"), and
// the hex mask format of /proc/irq/*/smp_affinity and Cpus_allowed ("00000000,0000000f").
// Pure functions over strings; safe from any thread.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

// The largest CPU number any kernel can have (CONFIG_NR_CPUS is at most 8192).
inline constexpr int max_cpu_number = 8191;

// Parses "0-3,5,8-11"; "" gives an empty list. Whitespace and newlines at the ends are ignored.
// Returns the CPUs sorted and unique, or std::nullopt with *error (if given) naming the bad
// entry and the whole text, e.g. `bad cpu range "3-1" in "0,3-1": end before start`.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text, std::string* error);

// The compressed form the kernel prints: {0,1,2,3,5} gives "0-3,5"; {} gives "".
// Accepts unsorted input with duplicates.
std::string format_cpu_list(const std::vector<int>& cpus);

// The smallest CPU that a valid list names more than once ("2,2", "1-3,2"); nullopt when none, or
// when the text is not a cpu list. The kernel never writes such a list; a person may, by mistake.
std::optional<int> repeated_cpu(std::string_view text);

// Like format_cpu_list, but "none" for an empty set, for messages.
std::string describe_cpu_list(const std::vector<int>& cpus);

// Sorted and without repeats, as every list above is kept.
std::vector<int> sorted_cpus(std::vector<int> cpus);

// Whether the sorted list `sorted` holds `cpu`.
bool has_cpu(const std::vector<int>& sorted, int cpu);

// The entry of `cpu` in `entries` (a reading's or a baseline's per-CPU figures: anything with an
// `int cpu`), or null where it has none.
template <class Entries>
auto* entry_of_cpu(Entries& entries, int cpu) {
  const auto found = std::find_if(entries.begin(), entries.end(), [cpu](const auto& e) { return e.cpu == cpu; });
  return found == entries.end() ? nullptr : &*found;
}

// Set operations on sorted lists; the result is sorted.
std::vector<int> cpus_minus(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> cpus_union(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> cpus_intersection(const std::vector<int>& a, const std::vector<int>& b);

// Parses a hex mask written as comma-separated groups of 32 bits, most significant group first
// ("00000000,0000000f" gives {0,1,2,3}; a short first group such as "3" is fine). Malformed text
// gives an empty list and, if error is given, a message naming the bad group and the text.
std::vector<int> parse_cpu_mask_hex(std::string_view text, std::string* error = nullptr);

}  // namespace jitterd
