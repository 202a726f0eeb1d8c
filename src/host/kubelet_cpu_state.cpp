// SPDX-License-Identifier: Apache-2.0
// host/ sees no JSON library (the layers' rule), and the file is one small fixed shape: a strict
// recursive-descent reader of exactly JSON (RFC 8259), bounded in depth, that keeps the fields it
// knows and skips the others.
#include "host/kubelet_cpu_state.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "host/cpu_list.h"
#include "host/host_reader.h"
#include "host/text.h"

namespace jitterd {
namespace {

constexpr int kMaxDepth = 16;  // the file needs 3

class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool fail(const std::string& what) {
    if (error_.empty()) error_ = "at byte " + std::to_string(at_) + ": " + what;
    return false;
  }
  const std::string& error() const { return error_; }
  void blanks() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool next_is(char c) {
    blanks();
    return at_ < text_.size() && text_[at_] == c;
  }
  bool take(char c) {
    if (!next_is(c)) return fail(std::string("expected '") + c + "'");
    ++at_;
    return true;
  }
  bool at_end() {
    blanks();
    return at_ == text_.size();
  }

  bool string(std::string& out) {
    if (!take('"')) return false;
    out.clear();
    while (at_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("a control character inside a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (at_ >= text_.size()) break;
      const char escape = text_[at_++];
      const std::string_view plain = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
      if (const std::size_t k = plain.find(escape); k != std::string_view::npos) {
        out += meaning[k];
      } else if (escape == 'u') {
        if (!unicode_escape(out)) return false;
      } else {
        return fail("an unknown escape in a string");
      }
    }
    return fail("a string cut short");
  }

  // Any value, checked and dropped.
  bool skip(int depth) {
    if (depth > kMaxDepth) return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    blanks();
    if (at_ >= text_.size()) return fail("a value expected, found the end");
    const char c = text_[at_];
    std::string ignored;
    if (c == '"') return string(ignored);
    if (c == '{') return object([&](const std::string&) { return skip(depth + 1); });
    if (c == '[') return array(depth);
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    for (std::string_view word : {"true", "false", "null"})
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return true;
      }
    return fail("not a JSON value");
  }

  // {"key": value, ...}, `value(key)` reading each value; a key given twice is refused (a
  // hand-edited or forged file would say two things).
  template <typename Value>
  bool object(Value value) {
    if (!take('{')) return false;
    if (next_is('}')) return take('}');
    std::set<std::string> seen;
    for (;;) {
      std::string key;
      if (!string(key)) return false;
      if (!seen.insert(key).second) return fail("the key \"" + printable_excerpt(key) + "\" is given twice");
      if (!take(':') || !value(key)) return false;
      if (next_is(',')) {
        take(',');
        continue;
      }
      return take('}');
    }
  }

 private:
  bool array(int depth) {
    if (!take('[')) return false;
    if (next_is(']')) return take(']');
    for (;;) {
      if (!skip(depth + 1)) return false;
      if (next_is(',')) {
        take(',');
        continue;
      }
      return take(']');
    }
  }

  bool number() {
    const std::size_t start = at_;
    if (text_[at_] == '-') ++at_;
    const auto digits = [&] {
      const std::size_t from = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      return at_ > from;
    };
    if (at_ < text_.size() && text_[at_] == '0')
      ++at_;
    else if (!digits())
      return fail("a malformed number");
    if (at_ < text_.size() && text_[at_] == '.' && (++at_, !digits())) return fail("a malformed number");
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (!digits()) return fail("a malformed number");
    }
    return at_ > start;
  }

  bool hex4(unsigned& code) {
    if (at_ + 4 > text_.size()) return fail("a \\u escape cut short");
    code = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = text_[at_++];
      const int digit = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
      if (digit < 0) return fail("a malformed \\u escape");
      code = code * 16 + static_cast<unsigned>(digit);
    }
    return true;
  }

  // \uXXXX (a surrogate pair for U+10000 and up) as UTF-8; a lone surrogate is refused.
  bool unicode_escape(std::string& out) {
    unsigned code = 0;
    if (!hex4(code)) return false;
    if (code >= 0xDC00 && code <= 0xDFFF) return fail("a lone low surrogate");
    if (code >= 0xD800 && code <= 0xDBFF) {
      unsigned low = 0;
      if (text_.substr(at_, 2) != "\\u" || (at_ += 2, !hex4(low)) || low < 0xDC00 || low > 0xDFFF)
        return fail("a high surrogate without its low half");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::string error_;
};

// A CPU list held in a string value; `where` names it for the error.
bool cpu_list_value(Cursor& in, const std::string& where, std::vector<int>& cpus) {
  std::string text;
  if (!in.string(text)) return false;
  std::string error;
  std::optional<std::vector<int>> parsed = parse_cpu_list(text, &error);
  if (!parsed) return in.fail(where + ": " + error);
  cpus = std::move(*parsed);
  return true;
}

// "entries": {pod: {container: cpus}} (V2), or {container ID: cpus} (V1).
bool entries_value(Cursor& in, KubeletCpuState& state) {
  std::size_t cpus_given = 0;
  return in.object([&](const std::string& pod) {
    const auto add = [&](std::string pod_uid, const std::string& container) {
      if (state.entries.size() >= kMaxKubeletEntries)
        return in.fail("more than " + std::to_string(kMaxKubeletEntries) + " entries");
      KubeletCpuEntry entry{printable(pod_uid), printable(container), {}};
      const std::string where =
          "entries." + printable_excerpt(pod_uid.empty() ? container : pod_uid + "." + container);
      if (!cpu_list_value(in, where, entry.cpus)) return false;
      cpus_given += entry.cpus.size();
      if (cpus_given > kMaxKubeletEntryCpus)
        return in.fail(where + ": more than " + std::to_string(kMaxKubeletEntryCpus) +
                       " CPUs given to containers in all (the kubelet gives a CPU to one container at most)");
      state.entries.push_back(std::move(entry));
      return true;
    };
    if (in.next_is('"')) return add("", pod);
    return in.object([&](const std::string& container) { return add(pod, container); });
  });
}

}  // namespace

std::optional<KubeletCpuState> parse_kubelet_cpu_state(std::string_view text, std::string* error) {
  Cursor in(text);
  KubeletCpuState state;
  bool has_policy = false;
  const bool parsed = in.object([&](const std::string& key) {
    if (key == "policyName") {
      has_policy = true;
      std::string policy;
      if (!in.string(policy)) return false;
      state.policy = printable(policy);
      return true;
    }
    if (key == "defaultCpuSet") return cpu_list_value(in, "defaultCpuSet", state.default_cpus);
    if (key == "entries") return entries_value(in, state);
    return in.skip(1);  // checksum, and fields a later kubelet adds
  });
  const auto refuse = [&](const std::string& why) -> std::optional<KubeletCpuState> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (!parsed) return refuse(in.error());
  if (!in.at_end()) {
    in.fail("text after the JSON object");
    return refuse(in.error());
  }
  if (!has_policy) return refuse("no policyName: not a CPU manager checkpoint");
  std::sort(state.entries.begin(), state.entries.end(), [](const KubeletCpuEntry& a, const KubeletCpuEntry& b) {
    return a.pod != b.pod ? a.pod < b.pod : a.container < b.container;
  });
  return state;
}

std::vector<int> kubelet_exclusive_cpus(const KubeletCpuState& state) {
  std::vector<int> cpus;
  for (const KubeletCpuEntry& entry : state.entries) cpus = cpus_union(cpus, entry.cpus);
  return cpus;
}

KubeletReading read_kubelet_cpu_state(const std::string& kubelet_root) {
  KubeletReading reading;
  if (kubelet_root.empty()) return reading;
  reading.path = (std::filesystem::path(kubelet_root) / kKubeletCpuStateFile).string();
  std::string why;
  const std::optional<std::string> text = read_regular_file(reading.path, kMaxKubeletStateBytes, &why);
  if (!text) {
    if (why != std::strerror(ENOENT)) reading.problem = reading.path + ": " + why;
    return reading;
  }
  reading.state = parse_kubelet_cpu_state(*text, &why);
  if (!reading.state) reading.problem = reading.path + ": " + why;
  return reading;
}

}  // namespace jitterd
