// SPDX-License-Identifier: Apache-2.0
// What the verbs' flag parsing shares, split by verb: command_line.cpp (report, baseline, the
// common flags and the verb itself) and compare_flags.cpp (compare's two files or --prometheus).
// Private to those files; call from the main thread.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "cli/command_line.h"

namespace jitterd {

template <typename Words>
std::string joined_with(const Words& words, std::string_view separator) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : std::string(separator)) + std::string(word);
  return text;
}

template <typename Words>
std::string joined(const Words& words) {
  return joined_with(words, ", ");
}

// The report's own flags, kept as text here and checked against the topic afterwards.
struct ReportFlags {
  std::string format = "table";
  std::string duration = "10s";
  std::string cpus;
  std::string probes = joined_with(default_baseline_probe_names(), ",");
  std::string sub_window;
  std::string prometheus_timeout = "30s";
  std::string prometheus_max_bytes;
  std::string allowance;
};

// --format: table, json, csv or html (one self-contained page), and for report also script
// (report posture's fixes).
void add_format_flag(CLI::App& verb, ReportFlags& flags, const std::string& what, bool with_script = false);

void add_compare_flags(CLI::App& compare, CommandLine& cl, ReportFlags& flags);

// Two files, or --prometheus with its instance and two ranges; never a mix.
void check_compare(CommandLine& cl, const CLI::App& compare, const ReportFlags& flags);

}  // namespace jitterd
