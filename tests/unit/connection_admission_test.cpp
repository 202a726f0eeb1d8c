// SPDX-License-Identifier: Apache-2.0
// The web server's admission rules (export/connection_admission.h) on a clock of the test's own:
// which connection is evicted, when the acceptor holds, the per-address limit, the request
// deadline, and a churn like issue 35's slowloris that must never take the server past its bounds
// nor evict a fresh connection.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "export/connection_admission.h"

using namespace jitterd;
using namespace std::chrono_literals;
using Clock = ConnectionAdmission::Clock;

namespace {
AdmissionLimits small_limits() {
  AdmissionLimits limits;
  limits.evict_above = 3;
  limits.live_limit = 5;
  limits.closing_room = 2;
  limits.per_address = 10;
  limits.deadline = 3s;
  limits.min_age = 100ms;
  return limits;
}

// Admits and opens (the server started serving it) `fd` from `address` at `now`.
ConnectionAdmission::Admission admit_open(ConnectionAdmission& table, int fd, Clock::time_point now,
                                          const std::string& address = "a") {
  const ConnectionAdmission::Admission admission = table.admit(fd, address, now);
  if (admission.admitted) table.opened(fd);
  return admission;
}
}  // namespace

TEST_CASE("from evict_above live, an admission evicts the connection whose request waited longest",
          "[connection_admission]") {
  ConnectionAdmission table(small_limits());
  const Clock::time_point t0{};
  CHECK(admit_open(table, 10, t0).evicted == -1);
  CHECK(admit_open(table, 11, t0 + 10ms).evicted == -1);
  CHECK(admit_open(table, 12, t0 + 20ms).evicted == -1);
  table.answering(10);  // the oldest is being answered: never evicted
  const auto fourth = admit_open(table, 13, t0 + 200ms);
  CHECK(fourth.admitted);
  CHECK(fourth.evicted == 11);
  CHECK(table.live() == 3);
  CHECK(table.held() == 4);  // 11 is shut, not yet closed by the server
  // 10 answered later: its wait starts again then, so 12 (waiting since 20 ms) goes next.
  table.answered(10, t0 + 250ms);
  CHECK(admit_open(table, 14, t0 + 300ms).evicted == 12);
  CHECK(admit_open(table, 15, t0 + 400ms).evicted == 13);
  CHECK(table.evicted() == 3);
  table.closed(11);
  table.closed(12);
  CHECK(table.held() == 4);
  CHECK(table.live() == 3);
}

TEST_CASE("a connection younger than min_age, or not yet served, is never evicted", "[connection_admission]") {
  ConnectionAdmission table(small_limits());
  const Clock::time_point t0{};
  admit_open(table, 1, t0);
  admit_open(table, 2, t0);
  table.admit(3, "a", t0);                              // handed over, the server has not started it
  CHECK(table.admit(4, "b", t0 + 50ms).evicted == -1);  // 1 and 2 are 50 ms old
  table.opened(4);
  CHECK(table.admit(5, "b", t0 + 500ms).evicted == 1);  // 3, the oldest, is still pending
  CHECK(table.evicted() == 1);
}

TEST_CASE("a connection with bytes the server has not read yet is never evicted", "[connection_admission]") {
  std::set<int> unread{1};
  ConnectionAdmission table(small_limits(), [&](int fd) { return unread.count(fd) != 0; });
  const Clock::time_point t0{};
  admit_open(table, 1, t0);  // its request arrived; a busy worker has not read it
  admit_open(table, 2, t0 + 10ms);
  admit_open(table, 3, t0 + 20ms);
  CHECK(admit_open(table, 4, t0 + 200ms).evicted == 2);
  unread = {1, 3};
  CHECK(admit_open(table, 5, t0 + 200ms).evicted == -1);  // 4 is too young
  CHECK(admit_open(table, 6, t0 + 200ms).evicted == -1);
  CHECK(table.live() == 5);  // the limit
  unread = {1, 3, 4, 5, 6};
  const ConnectionAdmission::Step step = table.next(t0 + 400ms);
  CHECK_FALSE(step.accept);  // nothing to evict until a worker reads one: look again soon
  CHECK(step.until == t0 + 410ms);
  unread = {1, 4, 5, 6};
  CHECK(table.next(t0 + 410ms).accept);
  CHECK(admit_open(table, 7, t0 + 410ms).evicted == 3);
}

TEST_CASE(
    "the acceptor holds at the live limit until one is old enough to evict, and at the server's room until "
    "closes catch up",
    "[connection_admission]") {
  ConnectionAdmission table(small_limits());
  const Clock::time_point t0{};
  for (int fd = 1; fd <= 5; ++fd) {
    REQUIRE(table.next(t0).accept);
    admit_open(table, fd, t0);  // the 4th and 5th evict nothing: all are younger than min_age
  }
  CHECK(table.live() == 5);
  ConnectionAdmission::Step step = table.next(t0 + 10ms);
  CHECK_FALSE(step.accept);
  CHECK(step.until == t0 + 100ms);  // when the oldest becomes evictable
  CHECK(table.next(t0 + 100ms).accept);
  CHECK(admit_open(table, 6, t0 + 100ms, "b").evicted == 1);
  CHECK(admit_open(table, 7, t0 + 100ms, "b").evicted == 2);  // 7 held: 5 live, 2 shut
  step = table.next(t0 + 1s);
  CHECK_FALSE(step.accept);  // the server's room is full, though 3 could be evicted
  CHECK(step.until == Clock::time_point::max());
  table.closed(1);
  CHECK(table.next(t0 + 1s).accept);
  // All live ones being answered: nothing to evict, hold until a change.
  ConnectionAdmission busy(small_limits());
  for (int fd = 1; fd <= 5; ++fd) {
    admit_open(busy, fd, t0);
    busy.answering(fd);
  }
  step = busy.next(t0 + 10s);
  CHECK_FALSE(step.accept);
  CHECK(step.until == Clock::time_point::max());
  busy.answered(3, t0 + 10s);
  CHECK(busy.next(t0 + 10s + 100ms).accept);
}

TEST_CASE("a client address is refused beyond its live connections; shut ones no longer count",
          "[connection_admission]") {
  AdmissionLimits limits = small_limits();
  limits.evict_above = 100;
  limits.live_limit = 100;
  limits.per_address = 4;
  ConnectionAdmission table(limits);
  const Clock::time_point t0{};
  for (int fd = 1; fd <= 4; ++fd) CHECK(admit_open(table, fd, t0, "attacker").admitted);
  CHECK_FALSE(table.admit(5, "attacker", t0).admitted);
  CHECK(table.refused() == 1);
  CHECK(table.admit(5, "scraper", t0).admitted);
  CHECK(table.held_from("attacker") == 4);
  CHECK(table.overdue(t0 + 3s).size() == 4);  // the attacker's four at their deadline (5 is pending)
  CHECK(table.held_from("attacker") == 0);
  CHECK(table.admit(6, "attacker", t0 + 3s).admitted);
}

TEST_CASE(
    "the request deadline: a waiting connection is shut at it, one being answered is not, an answer "
    "starts it again",
    "[connection_admission]") {
  ConnectionAdmission table(small_limits());
  const Clock::time_point t0{};
  table.admit(1, "a", t0);
  admit_open(table, 2, t0 + 1s);
  admit_open(table, 3, t0 + 1s);
  table.answering(3);
  CHECK(table.next_deadline() == t0 + 4s);  // 1 is not served yet: no deadline to enforce
  table.opened(1);                          // late: its deadline still counts from its admission
  CHECK(table.next_deadline() == t0 + 3s);
  CHECK(table.overdue(t0 + 2s).empty());
  CHECK(table.overdue(t0 + 3s) == std::vector<int>{1});
  CHECK(table.overdue(t0 + 5s) == std::vector<int>{2});
  table.answered(3, t0 + 5s);
  CHECK(table.next_deadline() == t0 + 8s);
  CHECK(table.dropped() == 2);
  CHECK(table.live() == 1);
  CHECK(table.held() == 3);
}

TEST_CASE("a descriptor the kernel gives again was closed without a word: its old entry goes",
          "[connection_admission]") {
  ConnectionAdmission table(small_limits());
  const Clock::time_point t0{};
  table.admit(7, "a", t0);  // the server never started it, then closed it
  CHECK(table.admit(7, "b", t0 + 1s).admitted);
  CHECK(table.lost() == 1);
  CHECK(table.held() == 1);
  CHECK(table.held_from("a") == 0);
  table.forget(7);  // handed over and refused
  CHECK(table.held() == 0);
  CHECK(table.live() == 0);
}

// Issue 35's slowloris on the rules alone: 12 addresses keep connecting, one connection every
// 20-400 us; the server closes a shut connection up to 5 ms later; a scrape arrives every ~0.2 s,
// sends its request within 20 ms and is closed once answered. The server never holds more than
// its room, no address more than its limit, and no scrape is evicted.
TEST_CASE("a slowloris churn keeps the bounds and never evicts a scrape", "[connection_admission]") {
  AdmissionLimits limits;  // the web server's values
  ConnectionAdmission table(limits);
  std::mt19937 random(35);
  Clock::time_point now{};
  int next_fd = 1;
  std::multimap<Clock::time_point, int> closing;   // shut or answered, to be closed by the server
  std::multimap<Clock::time_point, int> requests;  // a scrape's request complete
  std::set<int> scrapes, evicted_scrapes;
  std::uint64_t admitted = 0;
  for (int step = 0; step < 200000; ++step) {
    now += std::chrono::microseconds(std::uniform_int_distribution<int>(20, 400)(random));
    for (auto due = requests.begin(); due != requests.end() && due->first <= now; due = requests.erase(due)) {
      table.answering(due->second);
      closing.emplace(now + 1ms, due->second);
    }
    for (auto due = closing.begin(); due != closing.end() && due->first <= now; due = closing.erase(due))
      table.closed(due->second);
    for (const int fd : table.overdue(now)) closing.emplace(now + 2ms, fd);
    if (!table.next(now).accept) continue;
    const int fd = next_fd++;
    const bool scrape = step % 1000 == 0;
    const std::string address = scrape ? "scraper" : "attacker" + std::to_string(fd % 12);
    const ConnectionAdmission::Admission admission = table.admit(fd, address, now);
    if (!admission.admitted) continue;
    ++admitted;
    table.opened(fd);
    if (admission.evicted >= 0) {
      if (scrapes.count(admission.evicted) != 0) evicted_scrapes.insert(admission.evicted);
      closing.emplace(now + std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 5)(random)),
                      admission.evicted);
    }
    if (scrape) {
      scrapes.insert(fd);
      requests.emplace(now + 20ms, fd);
    }
    REQUIRE(table.held() <= limits.live_limit + limits.closing_room);
    REQUIRE(table.live() <= limits.live_limit);
    REQUIRE(table.held_from(address) <= limits.per_address);
  }
  CHECK(admitted > 100000);
  CHECK(table.evicted() > 100000);
  CHECK(scrapes.size() >= 150);
  CHECK(evicted_scrapes.empty());
}
