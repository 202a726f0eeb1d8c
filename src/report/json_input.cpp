#include "report/json_input.h"

#include <fmt/format.h>

#include <unordered_set>
#include <vector>

namespace jitterd {
namespace {

// A key or number quoted in a message: at most 60 characters of it.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 60 ? fmt::format("{}... ({} bytes)", out, text.size()) : out;
}

// Where the parser is, as a path (cpus[3].max_ns), checking each container and key as it opens.
class Walk {
 public:
  explicit Walk(const JsonLimits& limits) : limits_(limits) {}

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        element_started();
        if (frames_.size() >= limits_.max_depth)
          throw JsonInputError(fmt::format("{}: nested deeper than {} levels", path(false), limits_.max_depth));
        frames_.push_back({event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        Frame& object = frames_.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second)
          throw JsonInputError(fmt::format("{}: the key \"{}\" is given twice in one object", path(false, false),
                                           shown(object.key)));
        if (object.keys.size() > limits_.max_object_keys)
          throw JsonInputError(
              fmt::format("{}: an object with more than {} keys", path(false, false), limits_.max_object_keys));
        break;
      }
      case Event::value:
        element_started();
        break;
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        break;
    }
    return true;
  }

  // `pending`: the innermost element has not been seen whole (a number the parser refused).
  // `with_key`: name the innermost object's current key.
  std::string path(bool pending, bool with_key = true) const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      const bool innermost = i + 1 == frames_.size();
      if (f.object && !f.key.empty() && (with_key || !innermost))
        out += (out.empty() ? "" : ".") + shown(f.key);
      else if (!f.object && (f.index > 0 || (pending && innermost)))
        out += fmt::format("[{}]", pending && innermost ? f.index : f.index - 1);
    }
    return out.empty() ? "the top level" : out;
  }

 private:
  struct Frame {
    bool object = false;
    std::unordered_set<std::string> keys;  // an object's keys so far
    std::string key;                       // an object's current key
    std::size_t index = 0;                 // an array's elements so far
  };

  void element_started() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  JsonLimits limits_;
  std::vector<Frame> frames_;
};

}  // namespace

Json parse_json_input(std::string_view text, const JsonLimits& limits) {
  Walk walk(limits);
  try {
    return Json::parse(text, [&walk](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
      return walk(depth, event, parsed);
    });
  } catch (const Json::parse_error& e) {
    throw JsonInputError(fmt::format("at byte {}", e.byte), /*syntax=*/true);
  } catch (const Json::out_of_range& e) {
    // 406: "number overflow parsing '1e999'"; the number is between the quotes.
    const std::string_view what = e.what();
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::string number =
        open != std::string_view::npos && close > open ? shown(what.substr(open + 1, close - open - 1)) : "";
    throw JsonInputError(
        fmt::format("{}: the number {} is out of range (beyond a double)", walk.path(true), number));
  }
}

}  // namespace jitterd
