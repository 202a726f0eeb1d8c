// SPDX-License-Identifier: Apache-2.0
#include "report/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "host/text.h"

namespace jitterd {
namespace {

// Characters as a terminal shows them: UTF-8 continuation bytes (the second byte of "±") take no
// column of their own.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string padded(const std::string& text, std::size_t width, bool right) {
  const std::string pad(width - std::min(width, display_width(text)), ' ');
  return right ? pad + text : text + pad;
}

// The number as JSON spells it (shortest exact form); nothing for NaN and infinities, as JSON's null.
std::string csv_number(double value) { return std::isfinite(value) ? Json(value).dump() : ""; }

std::string csv_cell(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::none:
      return "";
    case Cell::Kind::text:
      return cell.text;
    case Cell::Kind::boolean:
      return cell.integer ? "true" : "false";
    case Cell::Kind::integer:
      return std::to_string(cell.integer);
    case Cell::Kind::number:
      return csv_number(cell.number);
  }
  return "";
}

}  // namespace

std::string cell_text(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::none:
      return "-";
    case Cell::Kind::text:
      return cell.text;
    case Cell::Kind::boolean:
      return cell.integer ? "yes" : "no";
    case Cell::Kind::integer:
      return fmt::format("{}", cell.integer);
    case Cell::Kind::number:
      return fmt::format("{:.{}f}", cell.number, cell.decimals);
  }
  return "";
}

Json cell_json(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::none:
      return nullptr;
    case Cell::Kind::text:
      return cell.text;
    case Cell::Kind::boolean:
      return cell.integer != 0;
    case Cell::Kind::integer:
      return cell.integer;
    case Cell::Kind::number:
      return cell.number;
  }
  return nullptr;
}

namespace {

// A number spelled whole, as csv_number and JSON spell one ("-3.5", "1e-05"): data, never a formula.
bool whole_number(std::string_view text) {
  const std::optional<double> value = parse_number<double>(text);
  return value && std::isfinite(*value);
}

// What a spreadsheet takes for a formula (OWASP, "CSV Injection"): a cell starting with = + - @,
// a tab or a carriage return.
bool formula_like(std::string_view text) {
  return !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos &&
         !whole_number(text);
}

}  // namespace

std::string csv_field(std::string_view raw) {
  std::string text = printable(raw);
  if (formula_like(raw)) text.insert(0, "'");
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\n";
}

std::string table_csv(const ProbeTable& table) {
  std::string out = csv_record(table.columns);
  for (const auto& row : table.rows) {
    std::vector<std::string> fields;
    for (const Cell& cell : row) fields.push_back(csv_cell(cell));
    out += csv_record(fields);
  }
  return out;
}

std::string table_text(const ProbeTable& table) {
  const std::size_t columns = table.columns.size();
  std::vector<std::size_t> width(columns, 0);
  std::vector<bool> numeric(columns, false);  // a column of numbers: its header goes right too
  std::vector<bool> has_text(columns, false);
  // Cells may hold text from the machine or a file (task names, fingerprint fields): a terminal
  // gets it printable, one line per row, whatever bytes it holds.
  std::vector<std::string> headers;
  for (const std::string& column : table.columns) headers.push_back(printable(column));
  std::vector<std::vector<std::string>> texts(table.rows.size());
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    for (const Cell& cell : table.rows[r]) texts[r].push_back(printable(cell_text(cell)));
  for (std::size_t c = 0; c < columns; ++c) width[c] = display_width(headers[c]);
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    for (std::size_t c = 0; c < row.size() && c < columns; ++c) {
      width[c] = std::max(width[c], display_width(texts[r][c]));
      numeric[c] = numeric[c] || row[c].is_number();
      has_text[c] = has_text[c] || row[c].kind == Cell::Kind::text;
    }
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& texts, const auto& right) {
    std::string text;
    for (std::size_t c = 0; c < texts.size() && c < columns; ++c) {
      text += fmt::format("{}{}", c ? "  " : "", padded(texts[c], width[c], right(c)));
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out += text + "\n";
  };
  line(headers, [&](std::size_t c) { return numeric[c] && !has_text[c]; });
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    // Text left, numbers right, as a reader scans them.
    line(texts[r], [&](std::size_t c) { return table.rows[r][c].kind != Cell::Kind::text; });
  }
  return out;
}

Json table_json(const ProbeTable& table) {
  Json rows = json_array(table.rows, [](const std::vector<Cell>& row) { return json_array(row, cell_json); });
  return Json{{"title", table.title}, {"columns", table.columns}, {"rows", std::move(rows)}};
}

Json table_records(const ProbeTable& table) {
  return json_array(table.rows, [&](const std::vector<Cell>& row) {
    Json record = Json::object();
    for (std::size_t c = 0; c < row.size() && c < table.columns.size(); ++c)
      record[table.columns[c]] = cell_json(row[c]);
    return record;
  });
}

std::string json_text(const Json& document) {
  const std::string text = document.dump(-1, ' ', false, Json::error_handler_t::replace);
  // The bidirectional controls and line separators can only be inside strings (the rest is
  // ASCII): as \u escapes the document reads the same to a parser and stays inert on a terminal.
  std::string out;
  out.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size();) {
    char32_t point = 0;
    const std::size_t length = utf8_sequence(std::string_view(text).substr(i), point);
    if (length > 0 && reorders_text(point)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(point));
      i += length;
    } else {
      out += text[i++];
    }
  }
  return out + "\n";
}

}  // namespace jitterd
