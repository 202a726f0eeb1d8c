// SPDX-License-Identifier: Apache-2.0
#include "report/json_input.h"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

namespace jitterd {
namespace {

// A key or number quoted in a message: at most 60 characters of it.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 60 ? fmt::format("{}... ({} bytes)", out, text.size()) : out;
}

// Builds the tree from the parser's events, as nlohmann's own DOM parser does, checking each
// container and key as it opens and knowing where it is (cpus[3].max_ns) for the message. Not
// nlohmann's callback parser: it scans a container's elements each time one of them closes, which
// is quadratic in an array of objects.
class StrictTree : public nlohmann::json_sax<Json> {
 public:
  explicit StrictTree(const JsonLimits& limits) : limits_(limits) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool value) override { return add(value); }
  bool number_integer(number_integer_t value) override { return add(value); }
  bool number_unsigned(number_unsigned_t value) override { return add(value); }
  bool number_float(number_float_t value, const string_t& /*text*/) override { return add(value); }
  bool string(string_t& value) override { return add(std::move(value)); }
  bool binary(binary_t& value) override { return add(std::move(value)); }

  bool start_object(std::size_t /*elements*/) override { return open(Json::object()); }
  bool start_array(std::size_t /*elements*/) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& key) override {
    Frame& object = frames_.back();
    if (object.value->contains(key))
      return fail(fmt::format("{}: the key \"{}\" is given twice in one object", path(false), shown(key)));
    if (object.value->size() >= limits_.max_object_keys)
      return fail(fmt::format("{}: an object with more than {} keys", path(false), limits_.max_object_keys));
    object.key = key;
    object.element = &(*object.value)[std::move(key)];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) override {
    if (error.id == 406)  // number overflow: the parser read a float that is not finite
      return fail(
          fmt::format("{}: the number {} is out of range (beyond a double)", path(true), shown(last_token)));
    syntax_ = true;
    return fail(fmt::format("at byte {}", position));
  }

  Json take() {
    if (error_) throw JsonInputError(*error_, syntax_);
    return std::move(root_);
  }

 private:
  struct Frame {
    Json* value = nullptr;
    std::string key;          // an object's current key
    Json* element = nullptr;  // where that key's value goes
  };

  bool fail(std::string message) {
    if (!error_) error_ = std::move(message);
    return false;
  }

  // Places a value where the innermost container expects it; gives where it went.
  template <typename Value>
  Json* place(Value&& value) {
    if (frames_.empty()) {
      root_ = Json(std::forward<Value>(value));
      return &root_;
    }
    Frame& f = frames_.back();
    if (f.value->is_array()) {
      auto& elements = f.value->get_ref<Json::array_t&>();
      elements.emplace_back(std::forward<Value>(value));
      return &elements.back();
    }
    *f.element = Json(std::forward<Value>(value));
    return f.element;
  }

  template <typename Value>
  bool add(Value&& value) {
    place(std::forward<Value>(value));
    return true;
  }

  bool open(Json container) {
    if (frames_.size() >= limits_.max_depth)
      return fail(fmt::format("{}: nested deeper than {} levels", path(true), limits_.max_depth));
    // The parent holds no pointer-invalidating insertion while this container is open.
    frames_.push_back({place(std::move(container)), {}, nullptr});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  // cpus[3].max_ns. `pending`: the innermost container's next element is not placed yet (a
  // number the parser refused, a container too deep), so an array names the index it would have;
  // otherwise the innermost object's key is left out (the message names it).
  std::string path(bool pending) const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      const bool innermost = i + 1 == frames_.size();
      if (f.value->is_object() && !f.key.empty() && (pending || !innermost))
        out += (out.empty() ? "" : ".") + shown(f.key);
      else if (f.value->is_array() && (pending && innermost ? true : !f.value->empty()))
        out += fmt::format("[{}]", f.value->size() - (pending && innermost ? 0 : 1));
    }
    return out.empty() ? "the top level" : out;
  }

  JsonLimits limits_;
  Json root_;
  std::vector<Frame> frames_;
  std::optional<std::string> error_;
  bool syntax_ = false;
};

}  // namespace

Json parse_json_input(std::string_view text, const JsonLimits& limits) {
  StrictTree tree(limits);
  Json::sax_parse(text, &tree);
  return tree.take();
}

}  // namespace jitterd
