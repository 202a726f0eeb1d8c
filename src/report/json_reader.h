// SPDX-License-Identifier: Apache-2.0
// Reading JSON from outside jitterd field by field (a baseline file, a running daemon's
// /status.json), after report/json_input.h has parsed it: every access checks presence, kind and
// range, and a failure is a BaselineError 65 (EX_DATAERR) naming the source and the JSON path of
// what is missing or wrong ("URL: probes[2].tables[0].rows: each row must be an array with one
// cell per column"). Also the typed tables every report prints, read back from the JSON
// render.h's table_json writes. Pure; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "probes/probe.h"
#include "report/render.h"

namespace jitterd {

class JsonReader {
 public:
  // `missing_hint` follows every "missing field" message: why a field may be absent (a daemon
  // older than this jitterd).
  explicit JsonReader(std::string source, std::string missing_hint = {})
      : source_(std::move(source)), missing_hint_(std::move(missing_hint)) {}

  const std::string& source() const { return source_; }
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;

  const Json& field(const Json& object, const std::string& where, const char* key) const;
  double number(const Json& object, const std::string& where, const char* key) const;  // finite, >= 0
  std::uint64_t count(const Json& object, const std::string& where, const char* key) const;
  std::uint64_t unsigned_value(const Json& v, const std::string& where) const;
  std::string text(const Json& object, const std::string& where, const char* key) const;
  bool boolean(const Json& object, const std::string& where, const char* key) const;
  const Json& array(const Json& object, const std::string& where, const char* key) const;
  std::vector<std::pair<std::string, std::string>> string_pairs(const Json& object, const std::string& where,
                                                                const char* key) const;

 private:
  std::string source_;
  std::string missing_hint_;
};

// A cell as table_json wrote it: a string, a boolean, a whole number, a number (3 decimals when
// shown as text), or none ("-": null or anything else).
Cell cell_from_json(const Json& cell);

// The tables of table_json ([{"title", "columns", "rows"}, ...]) at `where`: every table, whatever
// its title, each row one cell per column. Their shapes are the probe's to set (shape_tables).
std::vector<ProbeTable> tables_from_json(const JsonReader& reader, const Json& tables, const std::string& where);

// A list of notes: its strings (anything else in it is skipped).
std::vector<std::string> notes_from_json(const JsonReader& reader, const Json& notes, const std::string& where);

}  // namespace jitterd
