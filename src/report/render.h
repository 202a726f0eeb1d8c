// SPDX-License-Identifier: Apache-2.0
// Report rendering, the one place where typed cells (probes/probe.h Cell) become text, for every
// report: aligned text tables (fmt; numbers right, text left), JSON (nlohmann; numbers stay
// numbers, every digit kept, keys in the order written), and CSV by RFC 4180 (a field holding a
// comma, a double quote, CR or LF is quoted and its quotes doubled; records end with LF; numbers
// are spelled as in the JSON). Pure functions, safe from any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "probes/probe.h"

namespace jitterd {

using Json = nlohmann::ordered_json;

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
