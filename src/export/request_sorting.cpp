// SPDX-License-Identifier: Apache-2.0
#include "export/request_sorting.h"

#include <sys/socket.h>

#include <array>
#include <cerrno>

namespace jitterd {

namespace {
constexpr int kMaxBlankLines = 2;

// `bytes` without the blank lines ("\r\n" or "\n") a client may send before its request line.
std::string_view after_blank_lines(std::string_view bytes) {
  for (int line = 0; line < kMaxBlankLines; ++line) {
    if (bytes.substr(0, 2) == "\r\n")
      bytes.remove_prefix(2);
    else if (bytes.substr(0, 1) == "\n")
      bytes.remove_prefix(1);
    else
      break;
  }
  return bytes;
}

bool asks_for(std::string_view line, std::string_view method, std::string_view path) {
  if (line.substr(0, method.size()) != method) return false;
  line.remove_prefix(method.size());
  if (line.substr(0, path.size()) != path || line.size() == path.size()) return false;
  const char next = line[path.size()];
  return next == ' ' || next == '?';
}
}  // namespace

const char* to_string(Lane lane) { return lane == Lane::telemetry ? "telemetry" : "pages"; }

Lane sort_first_request(std::string_view bytes, std::string_view telemetry_path) {
  const std::string_view line = after_blank_lines(bytes);
  if (telemetry_path.empty() || telemetry_path.front() != '/') return Lane::pages;
  return asks_for(line, "GET ", telemetry_path) || asks_for(line, "HEAD ", telemetry_path) ? Lane::telemetry
                                                                                           : Lane::pages;
}

Sorting peek_first_request(int fd, std::string_view telemetry_path) {
  std::array<char, kSortingBytes> bytes{};
  ssize_t got;
  do {
    got = recv(fd, bytes.data(), bytes.size(), MSG_PEEK | MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Sorting::undecided;
  if (got <= 0) return Sorting::pages;
  return sort_first_request(std::string_view(bytes.data(), static_cast<std::size_t>(got)), telemetry_path) ==
                 Lane::telemetry
             ? Sorting::telemetry
             : Sorting::pages;
}

void ScraperAddresses::saw(const std::string& address, bool scrape) {
  std::lock_guard lock(mutex_);
  const auto found = index_.find(address);
  if (found != index_.end()) {
    recent_.erase(found->second);
    index_.erase(found);
  }
  if (!scrape) return;
  recent_.push_front(address);
  index_.emplace(address, recent_.begin());
  if (recent_.size() > kScraperAddresses) {
    index_.erase(recent_.back());
    recent_.pop_back();
  }
}

bool ScraperAddresses::scraper(const std::string& address) const {
  std::lock_guard lock(mutex_);
  return index_.count(address) != 0;
}

}  // namespace jitterd
