// SPDX-License-Identifier: Apache-2.0
#include "host/cpu_list.h"
#include "host/text.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace jitterd {
namespace {

void set_error(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
}

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// One CPU number: decimal digits only (no sign, no spaces), at most max_cpu_number.
// Returns the reason it is bad, or "" when it is good.
std::string parse_cpu_number(std::string_view digits, int& out) {
  if (digits.empty()) return "missing number";
  NumberError error = NumberError::none;
  uint64_t value = parse_number<uint64_t>(digits, &error).value_or(UINT64_MAX);
  if (error == NumberError::malformed) return "not a number";
  if (value > static_cast<uint64_t>(max_cpu_number)) {
    return "above " + std::to_string(max_cpu_number) + ", the largest CPU number a kernel can have";
  }
  out = static_cast<int>(value);
  return {};
}

// One comma-separated entry, "N" or "N-M"; appends its CPUs or returns the reason it is bad.
std::string parse_entry(std::string_view entry, std::vector<int>& cpus) {
  const auto dash = entry.find('-');
  int first = 0;
  if (dash == std::string_view::npos) {
    std::string reason = parse_cpu_number(entry, first);
    if (reason.empty()) cpus.push_back(first);
    return reason;
  }
  int last = 0;
  if (std::string reason = parse_cpu_number(entry.substr(0, dash), first); !reason.empty()) {
    return (dash == 0 ? "missing start" : reason);
  }
  if (std::string reason = parse_cpu_number(entry.substr(dash + 1), last); !reason.empty()) {
    return (dash + 1 == entry.size() ? "missing end" : reason);
  }
  if (last < first) return "end before start";
  for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  return {};
}

// Every CPU of every entry, in the order listed, repeats kept.
std::optional<std::vector<int>> parse_entries(std::string_view text, std::string* error) {
  const std::string_view body = trim(text);
  std::vector<int> cpus;
  if (body.empty()) return cpus;
  size_t start = 0;
  for (;;) {
    const size_t comma = body.find(',', start);
    const std::string_view entry = body.substr(start, comma - start);
    if (entry.empty()) {
      set_error(error, "bad cpu list " + quoted(body) + ": empty entry between commas");
      return std::nullopt;
    }
    if (std::string reason = parse_entry(entry, cpus); !reason.empty()) {
      const char* kind = entry.find('-') == std::string_view::npos ? "number" : "range";
      set_error(error,
                std::string("bad cpu ") + kind + " " + quoted(entry) + " in " + quoted(body) + ": " + reason);
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cpus;
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text, std::string* error) {
  std::optional<std::vector<int>> cpus = parse_entries(text, error);
  if (cpus) *cpus = sorted_cpus(std::move(*cpus));
  return cpus;
}

std::optional<int> repeated_cpu(std::string_view text) {
  std::optional<std::vector<int>> cpus = parse_entries(text, nullptr);
  if (!cpus) return std::nullopt;
  std::sort(cpus->begin(), cpus->end());
  const auto repeat = std::adjacent_find(cpus->begin(), cpus->end());
  return repeat == cpus->end() ? std::nullopt : std::optional<int>(*repeat);
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  const std::vector<int> sorted = sorted_cpus(cpus);
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

std::string describe_cpu_list(const std::vector<int>& cpus) {
  return cpus.empty() ? "none" : format_cpu_list(cpus);
}

std::vector<int> parse_cpu_mask_hex(std::string_view text, std::string* error) {
  const std::string_view body = trim(text);
  std::vector<int> cpus;
  // Walk the groups from the last (bits 0..31) to the first.
  int base = 0;
  size_t end = body.size();
  for (;;) {
    const size_t comma = end == 0 ? std::string_view::npos : body.rfind(',', end - 1);
    const size_t start = comma == std::string_view::npos ? 0 : comma + 1;
    const std::string_view group = body.substr(start, end - start);
    const std::optional<uint32_t> parsed = parse_number<uint32_t>(group, nullptr, 16);
    if (group.size() > 8 || !parsed) {
      set_error(error,
                "bad cpu mask group " + quoted(group) + " in " + quoted(body) + ": expected 1 to 8 hex digits");
      return {};
    }
    for (int bit = 0; bit < 32; ++bit) {
      if ((*parsed >> bit & 1u) == 0) continue;
      if (base + bit > max_cpu_number) {
        set_error(error, "bad cpu mask " + quoted(body) + ": sets cpu " + std::to_string(base + bit) + ", above " +
                             std::to_string(max_cpu_number));
        return {};
      }
      cpus.push_back(base + bit);
    }
    if (comma == std::string_view::npos) break;
    end = comma;
    base += 32;
  }
  return sorted_cpus(std::move(cpus));
}

std::vector<int> sorted_cpus(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

bool has_cpu(const std::vector<int>& sorted, int cpu) {
  return std::binary_search(sorted.begin(), sorted.end(), cpu);
}

std::vector<int> cpus_minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int> cpus_union(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int> cpus_intersection(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace jitterd
