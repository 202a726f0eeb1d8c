// SPDX-License-Identifier: Apache-2.0
// Which of the web server's lanes of workers a connection goes to, decided by its first request
// before libmicrohttpd sees it: the telemetry lane (workers of its own that serve scrapes of the
// telemetry path, so a scrape never waits behind a page being sent: issue 35) or the page lane
// (everything else: the status pages, their JSON, the baseline download, anything unknown).
//
// Plain HTTP is sorted by its first request line, peeked (MSG_PEEK) from the socket, so the server
// then reads it as if nothing had looked: "GET /metrics " or "HEAD /metrics?..." is the telemetry
// lane's. A TLS connection's first bytes are its handshake, so it is sorted by its client's
// address instead: an address whose latest request asked for the telemetry path (ScraperAddresses)
// is a scraper's, and its next connections go to the telemetry lane.
//
// sort_first_request and ScraperAddresses are plain (no I/O); peek_first_request reads the socket.
// ScraperAddresses is thread-safe (one mutex); the rest is safe from any thread.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace jitterd {

enum class Lane { telemetry, pages };
const char* to_string(Lane lane);  // "telemetry", "pages"

// What the bytes seen so far say: a lane, or (no byte has arrived yet) nothing.
enum class Sorting { telemetry, pages, undecided };

// How many bytes of a request are peeked: enough for "HEAD " and a telemetry path of the length
// the configuration allows, and the character after it.
inline constexpr std::size_t kSortingBytes = 512;

// The lane of a connection whose first bytes are `bytes` (not empty): the telemetry lane when they
// hold a request line for `telemetry_path` by GET or HEAD (its target followed by a blank or a
// query), after at most two blank lines (RFC 9112 2.2 lets a server ignore them); anything else,
// a request line still in pieces included, is the page lane's. A request whose line arrives in
// several segments is served all the same, on the page lane.
Lane sort_first_request(std::string_view bytes, std::string_view telemetry_path);

// The first bytes of the connection on `fd`, peeked without waiting: undecided while none has
// arrived; the page lane when the client closed or the socket failed (the server then finds out).
Sorting peek_first_request(int fd, std::string_view telemetry_path);

// The client addresses (export/auth_failures.h client_address_key) whose latest request was for
// the telemetry path, for sorting connections that cannot be peeked (TLS). Bounded: at most
// kScraperAddresses, the least recently seen forgotten first.
class ScraperAddresses {
 public:
  static constexpr std::size_t kScraperAddresses = 256;

  // A request from `address` was answered: for the telemetry path (a scrape) or not.
  void saw(const std::string& address, bool scrape);
  bool scraper(const std::string& address) const;

 private:
  mutable std::mutex mutex_;
  std::list<std::string> recent_;  // most recent first
  std::unordered_map<std::string, std::list<std::string>::iterator> index_;
};

}  // namespace jitterd
