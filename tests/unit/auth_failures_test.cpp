// SPDX-License-Identifier: Apache-2.0
// The memory of failed logins per client address, with the time passed in, and which address a
// client counts as.
#include "export/auth_failures.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>

namespace jitterd {
namespace {

using namespace std::chrono_literals;
using Clock = FailureMemory::Clock;

std::string key_of_v4(const char* text) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  REQUIRE(inet_pton(AF_INET, text, &v4.sin_addr) == 1);
  return client_address_key(reinterpret_cast<const sockaddr*>(&v4));
}

std::string key_of_v6(const char* text) {
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  REQUIRE(inet_pton(AF_INET6, text, &v6.sin6_addr) == 1);
  return client_address_key(reinterpret_cast<const sockaddr*>(&v6));
}

}  // namespace

TEST_CASE("client addresses: IPv4, IPv4-mapped as IPv4, IPv6 by its /64", "[auth_failures]") {
  CHECK(key_of_v4("127.0.0.1") == key_of_v4("127.0.0.1"));
  CHECK(key_of_v4("127.0.0.1") != key_of_v4("127.0.0.2"));
  CHECK(key_of_v6("::ffff:127.0.0.1") == key_of_v4("127.0.0.1"));
  CHECK(key_of_v6("::ffff:10.0.0.1") != key_of_v6("::ffff:10.0.0.2"));
  CHECK(key_of_v6("2001:db8:1:2::1") == key_of_v6("2001:db8:1:2:ffff:ffff:ffff:ffff"));
  CHECK(key_of_v6("2001:db8:1:2::1") != key_of_v6("2001:db8:1:3::1"));
  CHECK(key_of_v6("::1") != key_of_v4("0.0.0.1"));
  CHECK_FALSE(key_of_v4("0.0.0.0").empty());
  sockaddr unix_family{};
  unix_family.sa_family = AF_UNIX;
  CHECK(client_address_key(&unix_family).empty());
  CHECK(client_address_key(nullptr).empty());
}

TEST_CASE("a failure is remembered for its address and digest, for `keep`", "[auth_failures]") {
  FailureMemory memory(4, 3, 60s);
  const Clock::time_point t0{};
  CHECK_FALSE(memory.remembers("a", "d1", t0));
  memory.add("a", "d1", t0);
  CHECK(memory.remembers("a", "d1", t0));
  CHECK(memory.remembers("a", "d1", t0 + 59s));  // seen again: kept until t0 + 119 s
  CHECK(memory.remembers("a", "d1", t0 + 118s));
  CHECK_FALSE(memory.remembers("a", "d1", t0 + 178s));
  CHECK_FALSE(memory.remembers("a", "d2", t0));
  CHECK_FALSE(memory.remembers("b", "d1", t0));
  // Failing again restarts its time, without a second entry.
  memory.add("a", "d1", t0 + 200s);
  CHECK(memory.remembers("a", "d1", t0 + 259s));
  CHECK(memory.size() == 1);
}

TEST_CASE("at most per_address failures per address, the least recently seen forgotten first", "[auth_failures]") {
  FailureMemory memory(4, 3, 60s);
  const Clock::time_point t0{};
  for (int i = 0; i < 3; ++i) memory.add("a", "d" + std::to_string(i), t0 + std::chrono::seconds(i));
  CHECK(memory.remembers("a", "d0", t0 + 3s));  // d0 is now the most recently seen
  memory.add("a", "d3", t0 + 4s);
  memory.add("a", "d4", t0 + 5s);
  CHECK(memory.size() == 3);
  CHECK_FALSE(memory.remembers("a", "d1", t0 + 6s));
  CHECK_FALSE(memory.remembers("a", "d2", t0 + 6s));
  for (const char* kept : {"d0", "d3", "d4"}) CHECK(memory.remembers("a", kept, t0 + 6s));
}

TEST_CASE("at most `addresses` addresses, the least recently failing forgotten first", "[auth_failures]") {
  FailureMemory memory(3, 4, 60s);
  const Clock::time_point t0{};
  memory.add("a", "d", t0);
  memory.add("b", "d", t0 + 10s);
  memory.add("c", "d", t0 + 20s);
  memory.add("a", "e", t0 + 30s);  // a is now the most recent
  memory.add("d", "d", t0 + 40s);  // full: b, the least recent, goes
  CHECK(memory.addresses() == 3);
  CHECK_FALSE(memory.remembers("b", "d", t0 + 40s));
  CHECK(memory.remembers("a", "e", t0 + 40s));  // seen: kept until t0 + 100 s
  CHECK(memory.remembers("d", "d", t0 + 40s));
  // c's only failure expired at t0 + 80 s: it goes, and with it every address all expired.
  memory.add("e", "d", t0 + 85s);
  CHECK(memory.addresses() == 3);
  CHECK_FALSE(memory.remembers("c", "d", t0 + 85s));
  for (const char* kept : {"d", "e"}) CHECK(memory.remembers(kept, "d", t0 + 85s));
  CHECK(memory.remembers("a", "e", t0 + 85s));
  CHECK_FALSE(memory.remembers("a", "d", t0 + 85s));  // expired at t0 + 60 s
}

}  // namespace jitterd
