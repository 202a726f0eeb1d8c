#include "daemon/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string_view>

#include "host/cpu_list.h"

namespace jitterd {
namespace {

using namespace std::chrono_literals;

// One value in the file: its dotted key for messages, the node, and where a message points.
struct Entry {
  std::string key;
  YAML::Node value;
  SourceMark mark;
};

// A key a mapping allows, and what to do with its value.
struct Field {
  std::string_view name;
  std::function<void(const Entry&)> read;
};

constexpr std::array<TickMethod, 5> all_tick_methods{TickMethod::lfence_rdtsc, TickMethod::rdtsc,
                                                      TickMethod::rdtscp, TickMethod::cntvct,
                                                      TickMethod::steady_clock};

// spdlog's canonical names only: its aliases ("warning", "err") would make two spellings valid.
const std::vector<std::string_view> log_levels{"trace", "debug", "info",    "warn",
                                               "error", "critical", "off"};

constexpr std::string_view duration_units = "a number and one of ns, us, ms, s, m, h";

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

// Control characters escaped, so that every message stays on its one line.
std::string printable(const std::string& text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (byte < 0x20 || byte == 0x7f)
      out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    else
      out += c;
  }
  return out;
}

// Quoted or explicitly tagged scalars are strings to YAML, so they are not booleans or numbers.
bool is_plain(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

// The value seen, as a message shows it: plain text as written, strings in quotes.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return is_plain(node) ? printable(node.Scalar()) : '"' + printable(node.Scalar()) + '"';
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
    const std::size_t distance = edit_distance(name, field.name);
    if (distance < best) best = distance, closest = field.name;
  }
  std::string message = "unknown key";
  if (!closest.empty()) message += "; did you mean \"" + std::string(closest) + "\"?";
  return message + " (allowed: " + join(names_of(fields)) + ")";
}

std::string range_text(long long min, long long max, std::string_view unit) {
  return std::to_string(min) + ".." + std::to_string(max) + std::string(unit);
}

std::string range_text(Duration min, Duration max) {
  return format_duration(min) + ".." + format_duration(max);
}

// Plain decimal digits only: no sign, no spaces, no leading zero (inet_aton reads those as octal).
std::optional<unsigned> decimal(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() ||
      (text.size() > 1 && text[0] == '0'))
    return std::nullopt;
  return value;
}

// A dotted quad, because Debian's civetweb cannot listen on IPv6 and takes no host names.
bool is_ipv4_address(std::string_view text) {
  if (std::count(text.begin(), text.end(), '.') != 3) return false;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t dot = std::min(text.find('.', start), text.size());
    const std::optional<unsigned> octet = decimal(text.substr(start, dot - start));
    if (!octet || *octet > 255) return false;
    start = dot + 1;
  }
  return true;
}

template <typename T, typename U>
bool assign(T& target, const std::optional<U>& value) {
  if (value) target = static_cast<T>(*value);
  return value.has_value();
}

// Walks one document and keeps every error instead of stopping at the first.
class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  std::optional<YAML::Node> load(const std::string& text);
  Config read(const YAML::Node& root);
  void throw_if_errors();

 private:
  void fail(const std::string& key, SourceMark mark, std::string message);
  std::nullopt_t expect(const Entry& entry, std::string_view allowed);
  void read_mapping(const Entry& section, const std::vector<Field>& fields);
  void read_cpus(const Entry& entry, CpuSetting& cpus);
  std::optional<std::string> cpu_sequence_text(const Entry& entry);
  void read_sampler(const Entry& section, SamplerConfig& sampler);
  void read_burst(const std::optional<Entry>& spin, const std::optional<Entry>& period,
                  SamplerConfig& sampler);
  void read_web(const Entry& section, WebConfig& web);
  void read_log(const Entry& section, LogConfig& log);

  std::optional<std::string> scalar(const Entry& entry, std::string_view allowed);
  std::optional<std::string> choice(const Entry& entry,
                                    const std::vector<std::string_view>& allowed);
  std::optional<bool> boolean(const Entry& entry);
  std::optional<long long> integer(const Entry& entry, long long min, long long max,
                                   std::string_view unit = "");
  std::optional<Duration> duration(const Entry& entry, Duration min, Duration max,
                                   std::string_view max_note = "",
                                   std::string_view alternative = "");
  void read_tick_source(const Entry& entry, std::optional<TickMethod>& method);
  void read_threshold(const Entry& entry, std::optional<Duration>& threshold);
  std::optional<std::string> listen_address(const Entry& entry);
  std::optional<std::string> telemetry_path(const Entry& entry);

  std::string file_;
  std::vector<ConfigError> errors_;
};

std::optional<YAML::Node> ConfigReader::load(const std::string& text) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& error) {
    fail("", to_source_mark(error.mark), "YAML syntax error: " + error.msg);
    return std::nullopt;
  }
  if (documents.size() > 1)
    fail("", to_source_mark(documents[1].Mark()),
         "the file must hold one YAML document, got " + std::to_string(documents.size()));
  return documents.empty() ? YAML::Node() : documents.front();
}

Config ConfigReader::read(const YAML::Node& root) {
  Config config;
  read_mapping(Entry{"", root, to_source_mark(root.Mark())},
               {{"cpus", [&](const Entry& e) { read_cpus(e, config.cpus); }},
                {"sampler", [&](const Entry& e) { read_sampler(e, config.sampler); }},
                {"web", [&](const Entry& e) { read_web(e, config.web); }},
                {"log", [&](const Entry& e) { read_log(e, config.log); }}});
  return config;
}

void ConfigReader::throw_if_errors() {
  if (errors_.empty()) return;
  // File order reads best, whichever order the checks ran in.
  std::stable_sort(errors_.begin(), errors_.end(),
                   [](const ConfigError& a, const ConfigError& b) {
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
    const std::string key = section.key.empty() ? name : section.key + "." + name;
    const auto [first, inserted] = seen.emplace(name, key_mark);
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const Field& f) { return f.name == name; });
    if (!inserted)
      fail(key, key_mark, "duplicate key (first given on line " +
                              std::to_string(first->second.line) + ")");
    else if (field == fields.end())
      fail(key, key_mark, unknown_key_message(name, fields));
    else
      field->read(Entry{key, pair.second, mark_of(pair.second, key_mark)});
  }
}

void ConfigReader::read_cpus(const Entry& entry, CpuSetting& cpus) {
  constexpr std::string_view allowed =
      "auto, a CPU list such as \"2-5,8\", a CPU number or a sequence of CPU numbers";
  cpus.mark = entry.mark;  // kept so later checks against the machine can cite it
  std::optional<std::string> text;  // as the one cpu-list parser reads it
  if (entry.value.IsScalar())
    text = entry.value.Scalar();
  else if (entry.value.IsSequence() && entry.value.size() > 0)
    text = cpu_sequence_text(entry);
  else {
    expect(entry, allowed);
    return;
  }
  if (!text || *text == "auto") return;
  std::string reason;
  std::optional<std::vector<int>> list = parse_cpu_list(*text, &reason);
  if (list && list->empty()) reason = "no CPUs";  // the kernel's format allows "", a config not
  if (!list || list->empty()) {
    const std::string seen = entry.value.IsSequence() ? "[" + *text + "]" : describe(entry.value);
    return fail(entry.key, entry.mark,
                "must be " + std::string(allowed) + ", got " + seen + " (" + reason + ")");
  }
  cpus.automatic = false;
  cpus.list = std::move(*list);
  cpus.text = std::move(*text);
}

// [2, 3] becomes "2,3", so both spellings go through the one cpu-list parser.
std::optional<std::string> ConfigReader::cpu_sequence_text(const Entry& entry) {
  std::string text;
  bool valid = true;
  for (const YAML::Node& item : entry.value) {
    if (!is_plain(item) || !decimal(item.Scalar())) {
      expect(Entry{entry.key, item, mark_of(item, entry.mark)}, "a CPU number");
      valid = false;
      continue;
    }
    text += (text.empty() ? "" : ",") + item.Scalar();
  }
  return valid ? std::optional(text) : std::nullopt;
}

void ConfigReader::read_sampler(const Entry& section, SamplerConfig& s) {
  std::optional<Entry> spin, period;  // read after the rest: each one's range depends on the other
  read_mapping(
      section,
      {{"tick_source", [&](const Entry& e) { read_tick_source(e, s.tick_source); }},
       {"interruption_threshold",
        [&](const Entry& e) { read_threshold(e, s.interruption_threshold); }},
       {"threshold_floor_multiple",
        [&](const Entry& e) { assign(s.threshold_floor_multiple, integer(e, 2, 10000)); }},
       {"duty_cycle",
        [&](const Entry& e) {
          if (const auto mode = choice(e, {"burst", "continuous"}))
            s.duty_cycle = *mode == "burst" ? DutyCycleMode::burst : DutyCycleMode::continuous;
        }},
       {"burst_spin", [&](const Entry& e) { spin = e; }},
       {"burst_period", [&](const Entry& e) { period = e; }},
       {"warmup", [&](const Entry& e) { assign(s.warmup, duration(e, 10ms, 60s)); }},
       {"window", [&](const Entry& e) { assign(s.window, duration(e, 10s, 1h)); }},
       {"lock_memory", [&](const Entry& e) { assign(s.lock_memory, boolean(e)); }},
       {"realtime_priority",
        [&](const Entry& e) {
          assign(s.realtime_priority, integer(e, 0, 99, " (0 = off, 1..99 = SCHED_FIFO)"));
        }},
       {"interruption_ring",
        [&](const Entry& e) {
          assign(s.interruption_ring, integer(e, 16, 1048576, " entries"));
        }}});
  read_burst(spin, period, s);
}

// A burst spins for burst_spin out of every burst_period, so the spin cannot be the longer one.
void ConfigReader::read_burst(const std::optional<Entry>& spin,
                              const std::optional<Entry>& period, SamplerConfig& s) {
  const bool period_valid = !period || assign(s.burst_period, duration(*period, 10ms, 60s));
  if (spin && period_valid)
    assign(s.burst_spin, duration(*spin, 1ms, s.burst_period, " (at most sampler.burst_period)"));
  else if (spin)
    assign(s.burst_spin, duration(*spin, 1ms, 60s));
  else if (period && period_valid && s.burst_spin > s.burst_period)
    fail(period->key, period->mark,
         "must be at least sampler.burst_spin (" + format_duration(s.burst_spin) +
             ", its default), got " + describe(period->value));
}

void ConfigReader::read_web(const Entry& section, WebConfig& web) {
  read_mapping(section,
               {{"listen_address",
                 [&](const Entry& e) { assign(web.listen_address, listen_address(e)); }},
                {"telemetry_path",
                 [&](const Entry& e) { assign(web.telemetry_path, telemetry_path(e)); }}});
}

void ConfigReader::read_log(const Entry& section, LogConfig& log) {
  read_mapping(section,
               {{"level", [&](const Entry& e) { assign(log.level, choice(e, log_levels)); }}});
}

std::optional<std::string> ConfigReader::scalar(const Entry& entry, std::string_view allowed) {
  if (entry.value.IsScalar()) return entry.value.Scalar();
  return expect(entry, allowed);
}

std::optional<std::string> ConfigReader::choice(const Entry& entry,
                                                const std::vector<std::string_view>& allowed) {
  const std::string expected = "one of " + join(allowed);
  std::optional<std::string> text = scalar(entry, expected);
  if (text && std::find(allowed.begin(), allowed.end(), *text) == allowed.end())
    return expect(entry, expected);
  return text;
}

// YAML 1.2 booleans only: yes/no/on/off are YAML 1.1 and turn country codes into booleans.
std::optional<bool> ConfigReader::boolean(const Entry& entry) {
  const std::string text = is_plain(entry.value) ? entry.value.Scalar() : "";
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return expect(entry, "true or false");
}

std::optional<long long> ConfigReader::integer(const Entry& entry, long long min, long long max,
                                               std::string_view unit) {
  const std::string text = is_plain(entry.value) ? entry.value.Scalar() : "";
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool is_number = !text.empty() && end == text.data() + text.size() &&
                         (error == std::errc{} || error == std::errc::result_out_of_range);
  if (!is_number) return expect(entry, "an integer " + range_text(min, max, unit));
  if (error != std::errc{} || value < min || value > max)
    return expect(entry, range_text(min, max, unit));
  return value;
}

// alternative names what else the key accepts ("auto"), so the messages can offer it too.
std::optional<Duration> ConfigReader::duration(const Entry& entry, Duration min, Duration max,
                                               std::string_view max_note,
                                               std::string_view alternative) {
  const std::string range = range_text(min, max) + std::string(max_note);
  const std::string either = alternative.empty() ? "" : std::string(alternative) + " or ";
  const std::string allowed =
      either + "a duration " + range + " (" + std::string(duration_units) + ")";
  const std::optional<std::string> text = scalar(entry, allowed);
  if (!text) return std::nullopt;
  const std::optional<Duration> value = parse_duration(*text);
  if (!value) return expect(entry, allowed);
  if (*value < min || *value > max) return expect(entry, either + range);
  return value;
}

// nullopt stands for "auto" in the target, so an error leaves the target alone instead.
void ConfigReader::read_tick_source(const Entry& entry, std::optional<TickMethod>& method) {
  std::vector<std::string_view> allowed{"auto"};
  for (TickMethod each : all_tick_methods) allowed.push_back(to_string(each));
  if (const std::optional<std::string> name = choice(entry, allowed))
    method = *name == "auto" ? std::nullopt : tick_method_from_string(*name);
}

void ConfigReader::read_threshold(const Entry& entry, std::optional<Duration>& threshold) {
  if (entry.value.IsScalar() && entry.value.Scalar() == "auto")
    threshold = std::nullopt;
  else if (const std::optional<Duration> value = duration(entry, 10ns, 1s, "", "auto"))
    threshold = value;
}

std::optional<std::string> ConfigReader::listen_address(const Entry& entry) {
  constexpr std::string_view allowed =
      "an IPv4 address and port such as 0.0.0.0:9978 (no host names; no IPv6, which this "
      "civetweb lacks)";
  std::optional<std::string> text = scalar(entry, allowed);
  if (!text) return std::nullopt;
  const std::size_t colon = text->rfind(':');
  if (colon == std::string::npos || !is_ipv4_address(std::string_view(*text).substr(0, colon)))
    return expect(entry, allowed);
  const std::optional<unsigned> port = decimal(std::string_view(*text).substr(colon + 1));
  if (!port || *port > 65535) return expect(entry, "an IPv4 address and a port 0..65535");
  return text;
}

// "/" is the landing page, so the metrics need a path of their own.
std::optional<std::string> ConfigReader::telemetry_path(const Entry& entry) {
  constexpr std::string_view allowed = "a path starting with \"/\", other than \"/\"";
  std::optional<std::string> text = scalar(entry, allowed);
  if (text && (text->size() < 2 || text->front() != '/')) return expect(entry, allowed);
  return text;
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// The whole file, or the reason it cannot be read (errno, as strerror words it).
std::optional<std::string> read_file(const std::string& path, std::string& reason) {
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    reason = std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  char buffer[4096];
  std::size_t count = 0;
  while ((count = std::fread(buffer, 1, sizeof buffer, file.get())) > 0)
    text.append(buffer, count);
  if (std::ferror(file.get())) {  // a directory opens fine and fails here with EISDIR
    reason = std::strerror(errno);
    return std::nullopt;
  }
  return text;
}

std::string join_lines(const std::vector<ConfigError>& errors) {
  std::string text;
  for (const ConfigError& error : errors) text += (text.empty() ? "" : "\n") + error.to_string();
  return text;
}

}  // namespace

std::string ConfigError::to_string() const {
  std::string text = file;
  if (line != 0) text += ":" + std::to_string(line) + ":" + std::to_string(column);
  text += ": ";
  if (!key.empty()) text += key + ": ";
  return text + message;
}

ConfigErrors::ConfigErrors(std::vector<ConfigError> errors)
    : std::runtime_error(join_lines(errors)), errors_(std::move(errors)) {}

const std::vector<ConfigError>& ConfigErrors::errors() const { return errors_; }

Config load_config_file(const std::string& path) {
  std::string reason;
  const std::optional<std::string> text = read_file(path, reason);
  if (!text) throw ConfigErrors({ConfigError{path, 0, 0, "", "cannot read: " + reason}});
  return parse_config(*text, path);
}

Config parse_config(const std::string& yaml_text, const std::string& path_for_messages) {
  ConfigReader reader(path_for_messages);
  const std::optional<YAML::Node> root = reader.load(yaml_text);
  Config config = root ? reader.read(*root) : Config{};
  config.path = path_for_messages;
  reader.throw_if_errors();
  return config;
}

}  // namespace jitterd
