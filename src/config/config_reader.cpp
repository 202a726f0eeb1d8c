// SPDX-License-Identifier: Apache-2.0
#include "config/config_reader.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "host/text.h"

namespace jitterd::config_detail {
namespace {

std::vector<std::string_view> names_of(const std::vector<Field>& fields) {
  std::vector<std::string_view> names;
  for (const Field& field : fields) names.push_back(field.name);
  return names;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string unknown_key_message(std::string_view name, const std::vector<Field>& fields) {
  std::string_view closest;
  std::size_t best = 3;  // suggest only within two edits: further off is a guess, not a typo
  for (const Field& field : fields) {
    // Lengths more than two apart are more than two edits apart: no quadratic work on a long key.
    if (name.size() > field.name.size() + 2 || field.name.size() > name.size() + 2) continue;
    const std::size_t distance = edit_distance(name, field.name);
    if (distance < best) best = distance, closest = field.name;
  }
  std::string message = "unknown key";
  if (!closest.empty()) message += "; did you mean \"" + std::string(closest) + "\"?";
  return message + " (allowed: " + join(names_of(fields)) + ")";
}

}  // namespace

SourceMark to_source_mark(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

// yaml-cpp marks an empty value where the next token starts, often on a later line, so an empty
// value is pointed at through its key instead.
SourceMark mark_of(const YAML::Node& node, SourceMark fallback) {
  const SourceMark mark = to_source_mark(node.Mark());
  return node.IsNull() || mark.line == 0 ? fallback : mark;
}

bool is_plain(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

// A long value or key is cut (printable_excerpt: at a character boundary) and its length said: a
// message quotes what was seen, not a 100 kB string once for each of its aliases.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return is_plain(node) ? printable_excerpt(node.Scalar()) : '"' + printable_excerpt(node.Scalar()) + '"';
    case YAML::NodeType::Sequence:
      return node.size() == 0 ? "an empty sequence" : "a sequence";
    case YAML::NodeType::Map:
      return node.size() == 0 ? "an empty mapping" : "a mapping";
    default:
      return "nothing";
  }
}

std::string join(const std::vector<std::string_view>& words) {
  std::string text;
  for (std::string_view word : words) {
    if (!text.empty()) text += ", ";
    text += word;
  }
  return text;
}

std::string range_text(long long min, long long max, std::string_view unit) {
  return std::to_string(min) + ".." + std::to_string(max) + std::string(unit);
}

std::string range_text(Duration min, Duration max) { return format_duration(min) + ".." + format_duration(max); }

std::optional<unsigned> decimal(std::string_view text) {
  if (text.size() > 1 && text[0] == '0') return std::nullopt;
  return parse_number<unsigned>(text);
}

bool printable_text(std::string_view text, std::size_t max) {
  return !text.empty() && text.size() <= max &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

bool user_name_text(std::string_view text) {
  return printable_text(text, 32) && text[0] != '-' && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '-' || c == '.';
         });
}

namespace {

// Walks the document as the reader will, an alias at each use, and stops at the first node past
// a limit: the values counted so far, or the nesting depth. Gives that node's message, or "".
std::string beyond_limits(const YAML::Node& node, int depth, std::size_t& values, SourceMark& where) {
  if (++values > kMaxConfigValues) {
    where = to_source_mark(node.Mark());
    return "the file holds more than " + std::to_string(kMaxConfigValues) +
           " values (an alias counts at each use); a configuration is far smaller";
  }
  if (!node.IsMap() && !node.IsSequence()) return "";
  if (depth >= kMaxConfigDepth) {
    where = to_source_mark(node.Mark());
    return "nested more than " + std::to_string(kMaxConfigDepth) + " levels deep";
  }
  for (const auto& item : node) {
    if (node.IsMap()) {
      if (std::string problem = beyond_limits(item.first, depth + 1, values, where); !problem.empty())
        return problem;
      if (std::string problem = beyond_limits(item.second, depth + 1, values, where); !problem.empty())
        return problem;
    } else if (std::string problem = beyond_limits(item, depth + 1, values, where); !problem.empty()) {
      return problem;
    }
  }
  return "";
}

// Where each document starts, and nothing else: the parse that counts documents.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The starts of the first two documents of `text` at most. yaml-cpp 0.7 (Debian 12's) cannot get
// past a document that starts with a token it has no rule for (a ',' before a mapping, found by
// fuzzing): HandleNextDocument reports the same empty document at the same place again and
// again, so YAML::LoadAll loops, allocating until the OOM killer comes (jbeder/yaml-cpp#1040,
// fixed upstream by #1319), and YAML::Load takes the file for an empty one. Two calls at most
// keep this bounded; a second document starting where the first did means the parser is stuck.
std::vector<YAML::Mark> first_document_starts(const std::string& text) {
  std::istringstream input(text);
  YAML::Parser parser(input);
  DocumentStarts handler;
  for (int i = 0; i < 2 && parser.HandleNextDocument(handler); ++i) {
  }
  return handler.starts;
}

}  // namespace

std::optional<YAML::Node> ConfigReader::load(const std::string& text) {
  std::vector<YAML::Node> documents;
  try {
    const std::vector<YAML::Mark> starts = first_document_starts(text);
    if (starts.size() == 2 && starts[1].pos <= starts[0].pos) {
      fail("", to_source_mark(starts[0]), "YAML syntax error: the parser cannot read past what starts here");
      return std::nullopt;
    }
    if (starts.size() == 2) {
      fail("", to_source_mark(starts[1]), "the file must hold one YAML document, got more than one");
      return std::nullopt;
    }
    if (!starts.empty()) documents.push_back(YAML::Load(text));
  } catch (const YAML::DeepRecursion& error) {
    fail("", to_source_mark(error.mark),
         "nested more than " + std::to_string(kMaxConfigDepth) + " levels deep (YAML parser gave up at " +
             std::to_string(error.depth()) + ")");
    return std::nullopt;
  } catch (const YAML::Exception& error) {
    fail("", to_source_mark(error.mark), "YAML syntax error: " + printable(error.msg));
    return std::nullopt;
  }
  if (documents.empty()) return YAML::Node();
  std::size_t values = 0;
  SourceMark where;
  if (const std::string problem = beyond_limits(documents.front(), 0, values, where); !problem.empty()) {
    fail("", where, problem);
    return std::nullopt;
  }
  return documents.front();
}

void ConfigReader::throw_if_errors() {
  if (errors_.empty()) return;
  // File order reads best, whichever order the checks ran in.
  std::stable_sort(errors_.begin(), errors_.end(), [](const ConfigError& a, const ConfigError& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  throw ConfigErrors(std::move(errors_));
}

void ConfigReader::fail(const std::string& key, SourceMark mark, std::string message) {
  errors_.push_back(ConfigError{file_, mark.line, mark.column, key, std::move(message)});
}

// Records "must be <allowed>, got <value>" and gives nullopt, for the readers to return.
std::nullopt_t ConfigReader::expect(const Entry& entry, std::string_view allowed) {
  fail(entry.key, entry.mark, "must be " + std::string(allowed) + ", got " + describe(entry.value));
  return std::nullopt;
}

// An empty section (every key commented out) means all defaults, like an empty file.
void ConfigReader::read_mapping(const Entry& section, const std::vector<Field>& fields) {
  if (section.value.IsNull()) return;
  if (!section.value.IsMap()) {
    expect(section, "a mapping with keys " + join(names_of(fields)));
    return;
  }
  // yaml-cpp keeps both pairs of a repeated key; without this the last one would silently win.
  std::map<std::string, SourceMark> seen;
  for (const auto& pair : section.value) {
    const SourceMark key_mark = to_source_mark(pair.first.Mark());
    if (!pair.first.IsScalar()) {
      fail(section.key, key_mark, "keys must be names, got " + describe(pair.first));
      continue;
    }
    const std::string name = printable(pair.first.Scalar());
    // A long key is cut in messages as a long value is: a key of 250 kB aliased 40 times would
    // otherwise print 10 MB of errors.
    const std::string key =
        (section.key.empty() ? "" : section.key + ".") + printable_excerpt(pair.first.Scalar());
    const auto [first, inserted] = seen.emplace(name, key_mark);
    const auto field = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == name; });
    if (!inserted)
      fail(key, key_mark, "duplicate key (first given on line " + std::to_string(first->second.line) + ")");
    else if (field == fields.end())
      fail(key, key_mark, unknown_key_message(name, fields));
    else {
      const Entry entry{key, pair.second, mark_of(pair.second, key_mark)};
      marks_[key] = entry.mark;
      field->read(entry);
    }
  }
}

std::optional<std::string> ConfigReader::scalar(const Entry& entry, std::string_view allowed) {
  if (entry.value.IsScalar()) return entry.value.Scalar();
  return expect(entry, allowed);
}

void ConfigReader::read_strings(const Entry& entry, std::string_view allowed, std::string_view item_rule,
                                bool (*valid)(std::string_view), std::vector<std::string>& target) {
  if (!entry.value.IsSequence() || entry.value.size() == 0 || entry.value.size() > 64) {
    expect(entry, allowed);
    return;
  }
  std::vector<std::string> read;
  bool all_valid = true;
  for (const YAML::Node& node : entry.value) {
    const Entry item{entry.key + "[" + std::to_string(read.size()) + "]", node, mark_of(node, entry.mark)};
    const std::optional<std::string> text = scalar(item, item_rule);
    const bool ok = text && valid(*text);
    if (text && !ok) expect(item, item_rule);
    all_valid = all_valid && ok;
    read.push_back(text.value_or(""));
  }
  if (all_valid) target = std::move(read);
}

std::optional<std::string> ConfigReader::choice(const Entry& entry, const std::vector<std::string_view>& allowed) {
  const std::string expected = "one of " + join(allowed);
  std::optional<std::string> text = scalar(entry, expected);
  if (text && std::find(allowed.begin(), allowed.end(), *text) == allowed.end()) return expect(entry, expected);
  return text;
}

// YAML 1.2 booleans only: yes/no/on/off are YAML 1.1 and turn country codes into booleans.
std::optional<bool> ConfigReader::boolean(const Entry& entry) {
  const std::string text = is_plain(entry.value) ? entry.value.Scalar() : "";
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return expect(entry, "true or false");
}

// alternative names what else the key accepts ("auto"), so the messages can offer it too.
std::optional<long long> ConfigReader::integer(const Entry& entry, long long min, long long max,
                                               std::string_view unit, std::string_view alternative) {
  const std::string range = range_text(min, max, unit);
  const std::string either = alternative.empty() ? "" : std::string(alternative) + " or ";
  const std::string text = is_plain(entry.value) ? entry.value.Scalar() : "";
  NumberError error = NumberError::none;
  const std::optional<long long> value = parse_number<long long>(text, &error);
  if (error == NumberError::malformed) return expect(entry, either + "an integer " + range);
  // YAML 1.1 reads 050 as octal 40; a YAML 1.2 reader as 50. Neither reading is safe to guess.
  const std::string_view digits = std::string_view(text).substr(text.starts_with('-') ? 1 : 0);
  if (digits.size() > 1 && digits.front() == '0')
    return expect(entry, either + "an integer " + range + " without leading zeros");
  if (!value || *value < min || *value > max) return expect(entry, either + range);
  return value;
}

// As integer, for durations.
std::optional<Duration> ConfigReader::duration(const Entry& entry, Duration min, Duration max,
                                               std::string_view max_note, std::string_view alternative) {
  const std::string range = range_text(min, max) + std::string(max_note);
  const std::string either = alternative.empty() ? "" : std::string(alternative) + " or ";
  const std::string allowed = either + "a duration " + range + " (" + std::string(duration_units) + ")";
  const std::optional<std::string> text = scalar(entry, allowed);
  if (!text) return std::nullopt;
  const std::optional<Duration> value = parse_duration(*text);
  if (!value) return expect(entry, allowed);
  if (*value < min || *value > max) return expect(entry, either + range);
  return value;
}

}  // namespace jitterd::config_detail
