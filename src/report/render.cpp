// SPDX-License-Identifier: Apache-2.0
#include "report/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
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
  Json rows = Json::array();
  for (const auto& row : table.rows) {
    Json cells = Json::array();
    for (const Cell& cell : row) cells.push_back(cell_json(cell));
    rows.push_back(std::move(cells));
  }
  return Json{{"title", table.title}, {"columns", table.columns}, {"rows", std::move(rows)}};
}

Json table_records(const ProbeTable& table) {
  Json records = Json::array();
  for (const auto& row : table.rows) {
    Json record = Json::object();
    for (std::size_t c = 0; c < row.size() && c < table.columns.size(); ++c)
      record[table.columns[c]] = cell_json(row[c]);
    records.push_back(std::move(record));
  }
  return records;
}

std::string json_text(const Json& document) {
  return document.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace jitterd
