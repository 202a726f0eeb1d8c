// SPDX-License-Identifier: Apache-2.0
// Report rendering, the one place where typed cells (probes/probe.h Cell) become text, for every
// report, with one escaping rule per format for text from outside (task and host names, labels,
// fingerprint fields, a server's answer):
//  - text tables (fmt; numbers right, text left): every cell and header through host/text.h
//    printable (controls, ESC, CR, LF and the bidirectional controls as visible escapes);
//  - JSON (nlohmann; numbers stay numbers, every digit kept, keys in the order written): controls
//    as \u00XX (JSON's own rule), invalid UTF-8 as U+FFFD, the bidirectional controls as \uXXXX;
//  - CSV by RFC 4180 (a field holding a comma or a double quote is quoted and its quotes doubled;
//    records end with LF; numbers are spelled as in the JSON): every field through printable, so a
//    record is one line whatever a cell held; and a field a spreadsheet would take for a formula
//    (starting with = + - @, a tab or CR; OWASP "CSV Injection") gets a leading ' unless it is a
//    whole finite number ("-3.5", "-1e-05": numeric cells stay numeric and negative numbers data);
//  - HTML: report/html.h html_escape.
// Pure functions, safe from any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "probes/probe.h"

namespace jitterd {

using Json = nlohmann::ordered_json;

// The JSON array of `to_json(item)` for each of `items`, in their order.
template <typename Items, typename ToJson>
Json json_array(const Items& items, ToJson to_json) {
  Json array = Json::array();
  for (const auto& item : items) array.push_back(to_json(item));
  return array;
}

// A numeric cell's value, an integer one's as a double (what a heatmap and a comparison read).
inline double cell_number(const Cell& cell) {
  return cell.kind == Cell::Kind::integer ? static_cast<double>(cell.integer) : cell.number;
}

// As a text table shows the cell: a number with its decimals, "-" for none, "yes"/"no".
std::string cell_text(const Cell& cell);
Json cell_json(const Cell& cell);

std::string csv_field(std::string_view text);
std::string csv_record(const std::vector<std::string>& fields);
// The header (the column names), then one record per row.
std::string table_csv(const ProbeTable& table);

// The header and the rows, columns two spaces apart; the title is the caller's to print.
std::string table_text(const ProbeTable& table);

// {"title": ..., "columns": [...], "rows": [[cells], ...]}
Json table_json(const ProbeTable& table);
// [{column: cell, ...}, ...]: one object per row, for tables whose rows are records (one per CPU,
// one per check).
Json table_records(const ProbeTable& table);
// One line, ending in a newline; invalid UTF-8 (a name read from the machine) is replaced.
std::string json_text(const Json& document);

}  // namespace jitterd
