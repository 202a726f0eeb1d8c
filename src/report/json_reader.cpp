// SPDX-License-Identifier: Apache-2.0
#include "report/json_reader.h"

#include <fmt/format.h>

#include <cmath>

#include "report/baseline_file.h"

namespace jitterd {

void JsonReader::fail(const std::string& where, const std::string& what) const {
  throw BaselineError(kExitBadBaseline, fmt::format("{}: {}: {}", source_, where, what));
}

const Json& JsonReader::field(const Json& object, const std::string& where, const char* key) const {
  if (!object.is_object()) fail(where, "must be an object");
  const auto it = object.find(key);
  if (it == object.end()) fail(where, fmt::format("missing field \"{}\"{}", key, missing_hint_));
  return *it;
}

double JsonReader::number(const Json& object, const std::string& where, const char* key) const {
  const Json& v = field(object, where, key);
  if (!v.is_number()) fail(where + "." + key, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) fail(where + "." + key, "must be a finite number >= 0");
  return d;
}

std::uint64_t JsonReader::count(const Json& object, const std::string& where, const char* key) const {
  return unsigned_value(field(object, where, key), where + "." + key);
}

std::uint64_t JsonReader::unsigned_value(const Json& v, const std::string& where) const {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    fail(where, "must be a whole number >= 0");
  return v.get<std::uint64_t>();
}

std::string JsonReader::text(const Json& object, const std::string& where, const char* key) const {
  const Json& v = field(object, where, key);
  if (!v.is_string()) fail(where + "." + key, "must be a string");
  return v.get<std::string>();
}

bool JsonReader::boolean(const Json& object, const std::string& where, const char* key) const {
  const Json& v = field(object, where, key);
  if (!v.is_boolean()) fail(where + "." + key, "must be true or false");
  return v.get<bool>();
}

const Json& JsonReader::array(const Json& object, const std::string& where, const char* key) const {
  const Json& v = field(object, where, key);
  if (!v.is_array()) fail(where + "." + key, "must be an array");
  return v;
}

std::vector<std::pair<std::string, std::string>> JsonReader::string_pairs(const Json& object,
                                                                          const std::string& where,
                                                                          const char* key) const {
  const Json& v = field(object, where, key);
  if (!v.is_object()) fail(where + "." + key, "must be an object of strings");
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [name, value] : v.items()) {
    if (!value.is_string()) fail(where + "." + key + "." + name, "must be a string");
    pairs.emplace_back(name, value.get<std::string>());
  }
  return pairs;
}

Cell cell_from_json(const Json& j) {
  if (j.is_string()) return Cell(j.get<std::string>());
  if (j.is_boolean()) return Cell(j.get<bool>());
  if (j.is_number_integer()) return Cell(j.get<std::int64_t>());
  if (j.is_number()) return Cell(j.get<double>(), 3);
  return Cell();
}

std::vector<ProbeTable> tables_from_json(const JsonReader& r, const Json& tables, const std::string& where) {
  if (!tables.is_array()) r.fail(where, "must be an array");
  std::vector<ProbeTable> out;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const std::string at = fmt::format("{}[{}]", where, t);
    ProbeTable table;
    table.title = r.text(tables[t], at, "title");
    for (const Json& column : r.array(tables[t], at, "columns")) {
      if (!column.is_string()) r.fail(at + ".columns", "must be strings");
      table.columns.push_back(column.get<std::string>());
    }
    for (const Json& row : r.array(tables[t], at, "rows")) {
      if (!row.is_array() || row.size() != table.columns.size())
        r.fail(at + ".rows", "each row must be an array with one cell per column");
      std::vector<Cell> cells;
      for (const Json& cell : row) cells.push_back(cell_from_json(cell));
      table.rows.push_back(std::move(cells));
    }
    out.push_back(std::move(table));
  }
  return out;
}

std::vector<std::string> notes_from_json(const JsonReader& r, const Json& notes, const std::string& where) {
  if (!notes.is_array()) r.fail(where, "must be an array");
  std::vector<std::string> out;
  for (const Json& note : notes)
    if (note.is_string()) out.push_back(note.get<std::string>());
  return out;
}

}  // namespace jitterd
