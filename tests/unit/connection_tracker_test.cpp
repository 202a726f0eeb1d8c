// SPDX-License-Identifier: Apache-2.0
// The web server's connection tracker (export/connection_tracker.h) and acceptor
// (export/connection_acceptor.h) on real sockets, without libmicrohttpd: what they shut down is
// seen from the other end as end-of-file, and the acceptor takes connections from a real
// listening socket on 127.0.0.1, handing them to a list instead of a server.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/web_config.h"
#include "export/connection_acceptor.h"
#include "export/connection_tracker.h"
#include "export/listen_socket.h"
#include "export/request_sorting.h"
#include "export/web_counters.h"

using namespace jitterd;
using namespace std::chrono_literals;

namespace {
// A connected socket pair: the tracker shuts one end down; the other end then reads end-of-file.
struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0); }
  ~SocketPair() {
    close(fds[0]);
    close(fds[1]);
  }
  int server() const { return fds[0]; }
  bool shut() const {
    char byte;
    return recv(fds[1], &byte, 1, MSG_DONTWAIT) == 0;
  }
};

AdmissionLimits limits(std::size_t evict_above, std::size_t live_limit, std::size_t closing_room,
                       std::size_t per_address, std::chrono::milliseconds deadline = 10s,
                       std::chrono::milliseconds min_age = 20ms) {
  AdmissionLimits out;
  out.evict_above = evict_above;
  out.live_limit = live_limit;
  out.closing_room = closing_room;
  out.per_address = per_address;
  out.deadline = deadline;
  out.min_age = min_age;
  return out;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds within = 10s) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// A client of 127.0.0.1:port; closed() when the server closed or shut it down.
struct Client {
  int fd = -1;
  explicit Client(unsigned short port) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0);
  }
  ~Client() { close(fd); }
  void send_text(std::string_view text) const {
    REQUIRE(send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size()));
  }
  bool closed(std::chrono::milliseconds within) const {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(within.count())) != 1) return false;
    char byte;
    return recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
  }
};

// What the acceptor hands over, in place of libmicrohttpd.
// What the acceptor handed over, from its thread: checked on the test's thread (Catch2's
// assertions are not thread-safe).
struct HandedOver {
  std::mutex mutex;
  std::vector<int> fds;
  std::vector<Lane> lanes;
  std::size_t not_inet = 0;  // handed over with an address of another family
  std::size_t size() {
    std::lock_guard lock(mutex);
    return fds.size();
  }
  int at(std::size_t i) {
    std::lock_guard lock(mutex);
    return fds.at(i);
  }
  ~HandedOver() {
    for (const int fd : fds) close(fd);
  }
};

Sorting all_pages(int, const std::string&) { return Sorting::pages; }
}  // namespace

TEST_CASE("an eviction shuts the evicted socket down; the connection being answered is kept",
          "[connection_tracker][concurrency]") {
  ConnectionTracker tracker(limits(2, 10, 10, 10));
  SocketPair a, b, c;
  REQUIRE(tracker.admit(a.server(), "x"));
  tracker.opened(a.server());
  REQUIRE(tracker.admit(b.server(), "x"));
  tracker.opened(b.server());
  tracker.answering(a.server());
  std::this_thread::sleep_for(30ms);
  REQUIRE(tracker.admit(c.server(), "x"));
  CHECK_FALSE(a.shut());
  CHECK(b.shut());
  CHECK_FALSE(c.shut());
  CHECK(tracker.counts().evicted == 1);
  CHECK(tracker.open() == 3);  // b is shut, not closed: the server still holds it
  tracker.closed(b.server());
  CHECK(tracker.open() == 2);
}

TEST_CASE("the reaper shuts a connection whose request missed its deadline, not one being answered",
          "[connection_tracker][concurrency]") {
  ConnectionTracker tracker(limits(100, 100, 10, 10, 100ms));
  SocketPair slow, answered;
  REQUIRE(tracker.admit(slow.server(), "x"));
  REQUIRE(tracker.admit(answered.server(), "x"));
  tracker.opened(slow.server());
  tracker.opened(answered.server());
  tracker.answering(answered.server());
  CHECK(eventually([&] { return slow.shut(); }, 5s));
  std::this_thread::sleep_for(150ms);
  CHECK_FALSE(answered.shut());
  tracker.answered(answered.server());  // its next request's deadline starts now
  CHECK(eventually([&] { return answered.shut(); }, 5s));
  CHECK(tracker.counts().dropped == 2);
}

TEST_CASE("wait_for_room holds while the server's room is full and resumes when a connection closes",
          "[connection_tracker][concurrency]") {
  ConnectionTracker tracker(limits(1, 2, 0, 10));  // evicting from 1 live; 2 held at most
  SocketPair a, b;
  REQUIRE(tracker.wait_for_room());
  REQUIRE(tracker.admit(a.server(), "x"));
  tracker.opened(a.server());
  std::this_thread::sleep_for(30ms);  // a is old enough to evict
  REQUIRE(tracker.wait_for_room());
  REQUIRE(tracker.admit(b.server(), "x"));
  CHECK(a.shut());
  std::atomic<int> result{-1};
  std::thread acceptor([&] { result = tracker.wait_for_room() ? 1 : 0; });
  std::this_thread::sleep_for(100ms);
  CHECK(result == -1);  // a (shut) and b held: no room until a closes
  tracker.closed(a.server());
  CHECK(eventually([&] { return result != -1; }));
  acceptor.join();
  CHECK(result == 1);
  CHECK(tracker.counts().holds == 1);
}

TEST_CASE("release() ends a hold: the acceptor stops", "[connection_tracker][concurrency]") {
  ConnectionTracker tracker(limits(1, 1, 0, 10));
  SocketPair a;
  REQUIRE(tracker.admit(a.server(), "x"));  // live, not yet served: nothing to evict
  std::atomic<int> result{-1};
  std::thread held([&] { result = tracker.wait_for_room() ? 1 : 0; });
  std::this_thread::sleep_for(50ms);
  CHECK(result == -1);
  tracker.release();
  held.join();
  CHECK(result == 0);
}

TEST_CASE("the acceptor drains the queue, refuses an address over its limit and holds at the limit",
          "[connection_tracker][concurrency]") {
  ListenSocket listener(*parse_listen_address("127.0.0.1:0"));
  const auto port = static_cast<unsigned short>(std::stoi(listener.bound_address().substr(10)));
  // 2 live at most, none evictable (min_age 1 h), 3 from one address.
  ConnectionTracker tracker(limits(2, 2, 0, 3, 10s, std::chrono::hours(1)));
  HandedOver server;
  ConnectionAcceptor acceptor(listener.fd(), listener.bound_address(), tracker, all_pages,
                              [&](int fd, const sockaddr* address, socklen_t, Lane) {
                                std::lock_guard lock(server.mutex);
                                server.fds.push_back(fd);
                                if (address->sa_family != AF_INET) ++server.not_inet;
                                return true;
                              });
  Client first(port), second(port), third(port);
  REQUIRE(eventually([&] { return server.size() == 2; }));
  tracker.opened(server.at(0));
  tracker.opened(server.at(1));
  std::this_thread::sleep_for(100ms);
  CHECK(server.size() == 2);  // the third waits in the kernel's queue
  CHECK_FALSE(third.closed(0ms));
  tracker.closed(server.at(0));  // the server closed the first: room for the third
  REQUIRE(eventually([&] { return server.size() == 3; }));
  CHECK(tracker.counts().holds >= 1);
  CHECK(tracker.counts().refused == 0);
  acceptor.stop();
  const std::lock_guard lock(server.mutex);
  CHECK(server.not_inet == 0);
}

TEST_CASE("the acceptor closes a connection over its address's limit at once",
          "[connection_tracker][concurrency]") {
  ListenSocket listener(*parse_listen_address("127.0.0.1:0"));
  const auto port = static_cast<unsigned short>(std::stoi(listener.bound_address().substr(10)));
  WebCounters counters;
  ConnectionTracker tracker(limits(100, 100, 10, 2), &counters);
  HandedOver server;
  ConnectionAcceptor acceptor(listener.fd(), listener.bound_address(), tracker, all_pages,
                              [&](int fd, const sockaddr*, socklen_t, Lane) {
                                std::lock_guard lock(server.mutex);
                                server.fds.push_back(fd);
                                return true;
                              });
  Client first(port), second(port);
  REQUIRE(eventually([&] { return server.size() == 2; }));
  Client third(port);
  CHECK(third.closed(5000ms));
  CHECK(tracker.counts().refused == 1);
  CHECK(counters.per_address_limit == 1);  // as it happened, for /metrics
  CHECK(server.size() == 2);
  const auto stopped = std::chrono::steady_clock::now();
  acceptor.stop();
  CHECK(std::chrono::steady_clock::now() - stopped < 1s);
}

TEST_CASE("a connection the server refuses is forgotten", "[connection_tracker][concurrency]") {
  ListenSocket listener(*parse_listen_address("127.0.0.1:0"));
  const auto port = static_cast<unsigned short>(std::stoi(listener.bound_address().substr(10)));
  ConnectionTracker tracker(limits(100, 100, 10, 1));
  std::atomic<int> offered{0};
  ConnectionAcceptor acceptor(listener.fd(), listener.bound_address(), tracker, all_pages,
                              [&](int fd, const sockaddr*, socklen_t, Lane) {
                                close(fd);  // as MHD_add_connection does when it refuses
                                ++offered;
                                return false;
                              });
  Client first(port);
  REQUIRE(eventually([&] { return offered == 1; }));
  Client second(port);  // the address's one slot was given back
  REQUIRE(eventually([&] { return offered == 2; }));
  CHECK(tracker.counts().unserved == 2);
  CHECK(tracker.counts().refused == 0);
  CHECK(tracker.open() == 0);
}

TEST_CASE("the acceptor sorts each connection by its first request, waiting for its first bytes",
          "[connection_tracker][concurrency]") {
  ListenSocket listener(*parse_listen_address("127.0.0.1:0"));
  const auto port = static_cast<unsigned short>(std::stoi(listener.bound_address().substr(10)));
  ConnectionTracker tracker(limits(100, 100, 10, 100));
  HandedOver server;
  ConnectionAcceptor acceptor(
      listener.fd(), listener.bound_address(), tracker,
      [](int fd, const std::string&) { return peek_first_request(fd, "/metrics"); },
      [&](int fd, const sockaddr*, socklen_t, Lane lane) {
        std::lock_guard lock(server.mutex);
        server.fds.push_back(fd);
        server.lanes.push_back(lane);
        return true;
      });
  const auto lane_of = [&](std::size_t i) {
    std::lock_guard lock(server.mutex);
    return server.lanes.at(i);
  };
  constexpr std::string_view kScrape = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  Client scrape(port);
  scrape.send_text(kScrape);
  REQUIRE(eventually([&] { return server.size() == 1; }));
  CHECK(lane_of(0) == Lane::telemetry);
  // The server reads the request as sent: sorting only peeked at it.
  char bytes[64] = {};
  REQUIRE(eventually([&] { return recv(server.at(0), bytes, sizeof bytes, MSG_DONTWAIT) > 0; }));
  CHECK(std::string_view(bytes).substr(0, kScrape.size()) == kScrape);

  Client page(port);
  page.send_text("GET / HTTP/1.1\r\n\r\n");
  REQUIRE(eventually([&] { return server.size() == 2; }));
  CHECK(lane_of(1) == Lane::pages);

  // Silent at first: held until its bytes come (well within kSortWait), then sorted by them.
  Client late(port);
  std::this_thread::sleep_for(kSortWait / 4);
  CHECK(server.size() == 2);
  late.send_text("HEAD /metrics?debug=1 HTTP/1.1\r\n\r\n");
  REQUIRE(eventually([&] { return server.size() == 3; }));
  CHECK(lane_of(2) == Lane::telemetry);

  // Silent throughout: the page lane's once its wait is over.
  Client silent(port);
  REQUIRE(eventually([&] { return server.size() == 4; }));
  CHECK(lane_of(3) == Lane::pages);
  acceptor.stop();
}
