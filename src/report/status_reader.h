// SPDX-License-Identifier: Apache-2.0
// A running daemon's /status.json (export/status_page.h writes it) read back into what
// `jitterd report TOPIC --from URL` prints: the same tables as the status page and the report, with
// the figures the daemon holds over its rolling window. The answer is hostile input: parsed
// strictly (report/json_input.h), its format and version checked, every field the topic needs
// checked for presence and kind; anything wrong is a BaselineError naming the URL and the JSON path
// (65, EX_DATAERR), with the daemon's version when a field is missing (an older jitterd). A topic
// the daemon does not run, or has not run yet, is a BaselineError 69 (EX_UNAVAILABLE) saying so.
// Generic over the tables a section holds: a probe's tables are every table of its entry in
// "probes" (whatever their titles: a newer daemon's added tables come out too), and a section of
// its own at the top level (the loops') adds its own "tables" if it holds any.
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probes/probe.h"
#include "report/render.h"

namespace jitterd {

inline constexpr const char* kStatusFormatName = "jitterd-status";
inline constexpr int kStatusFormatMajor = 1;  // a newer major is refused; a newer minor only adds fields
inline constexpr const char* kStatusFormatVersion = "1.0";
// The largest /status.json read, decoded (report --from-max-bytes): 16 MiB. A sampled CPU takes
// some 600 bytes of it and a loop 700, so this is 1,024 CPUs and 1,024 loops with room for the
// probes' tables (the c2c pairs' some 200 bytes each) many times over. A watched CPU's or loop's
// stolen-time plot adds some 7 KB at the default window (60 points) and at most about 30 KB
// (242 points): 256 loops' plots at their largest are 7.7 MB of it.
inline constexpr std::size_t kStatusMaxBytes = 16u << 20;

// Who answered and when: the page's own fields.
struct StatusHeader {
  std::string source;  // the URL, for messages
  std::string jitterd_version, hostname, generated;
  double generated_unix_seconds = 0;
  double window_seconds = 0;  // the daemon's configured rolling window
  std::uint64_t window_sequence = 0;
};

// One topic as the daemon holds it.
struct StatusTopic {
  StatusHeader header;
  std::string topic;
  // When the figures were taken: "probe watch: last run ... (2 s before the page), took 0.001 s".
  std::vector<std::string> lines;
  std::vector<ProbeTable> tables;
  std::vector<std::string> notes;
  std::string failure;  // not empty: the probe's last run failed (the tables are the last good run's)
};

// The text of /status.json parsed strictly and its format checked. Throws BaselineError 65.
Json parse_status_document(std::string_view text, const std::string& source);
// The answer of GET `url` (its HTTP status and body) as the document, or a BaselineError naming
// `url`: 69 for an HTTP error (401: credentials wanted, 404: no status page there), 65 as above.
Json status_document_from_answer(long status, std::string_view body, const std::string& url);

// `topic` (gaps, or a probe's name) out of a parsed document. `display`: the narrower tables the
// text output shows (as report's gap_display_table); else every figure, for JSON and CSV.
// Throws BaselineError (65: wrong or missing; 69: not run there).
StatusTopic status_topic(const Json& document, const std::string& source, std::string_view topic, bool display);

}  // namespace jitterd
