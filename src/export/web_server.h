// SPDX-License-Identifier: Apache-2.0
// The HTTP(S) side: libmicrohttpd (with GnuTLS) serving the collector's families in the
// Prometheus text format on the telemetry path, and the status page on "/" with its JSON form and
// baseline download (export/status_page.h), all behind the TLS and basic auth of the web
// configuration file. Pages are built off the workers, once per change of what they show
// (export/page_builder.h); a worker only copies one, so /metrics never waits behind a page.
//
// Threads: the acceptor (export/connection_acceptor.h), which takes connections off the listening
// socket, admits them, sorts each by its first request (export/request_sorting.h) and hands it to
// one of two libmicrohttpd daemons, its lanes: the telemetry lane (kTelemetryWorkers workers) serves
// the connections whose first request is a scrape of the telemetry path, the page lane
// (kWorkerThreads workers) everything else, so a scrape never shares a worker with a connection
// that is sent a page. The lanes run at the same priority: the page lane at nice 10 starved on a
// loaded machine, honest page clients were shut at their request deadline and attack connections
// rotated slower (docs/benchmarks.md). Each worker watches its connections with poll(), so a connection that is
// idle or slow costs a slot, never a thread. Both lanes answer every path the same way, behind the
// same TLS and auth: a connection sorted wrongly (a TLS client never seen scraping, a request line
// that arrived in pieces) is served all the same, only without the telemetry lane's protection.
// Also the connection tracker's reaper; with basic auth, the hashing thread
// (export/auth_gate.h: a password not verified before is checked there while its connection
// waits, suspended, so a bcrypt never holds a worker); the page-building thread
// (export/page_builder.h). All are created by the constructor, so they run on the CPUs of the
// constructing thread: construct from the daemon's main thread, which is restricted to the
// housekeeping CPUs first (so accepting, rendering a page or hashing a password never runs on a
// sampled CPU).
//
// Limits (docs/operations.md documents them; export/connection_admission.h the rules): connections
// are admitted by the acceptor before libmicrohttpd sees them. At most kPerAddressLimit live
// connections from one client address (more are accepted and closed at once); from kEvictAbove
// live, each new connection shuts down the one whose request has been awaited longest; at
// kConnectionLimit live with none to evict, or kConnectionLimit + kClosingRoom held (shut ones not
// yet closed included), the acceptor holds and the kernel's accept queue waits. A connection
// silent for kIdleTimeout, or whose request has not fully arrived kRequestDeadline after it was
// admitted or after its previous response, is closed.
//
// Thread-safety: construct, drain, stop and destroy from one thread (the main thread); the
// collector is called from the worker threads.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "config/config.h"
#include "export/auth_gate.h"
#include "export/collector.h"
#include "export/connection_acceptor.h"
#include "export/connection_tracker.h"
#include "export/listen_socket.h"
#include "export/page_builder.h"
#include "export/request_sorting.h"
#include "export/web_content.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace jitterd {

inline constexpr unsigned kWorkerThreads = 2;  // the page lane's
// Two: with one, 64 clients guessing passwords on the telemetry path shared it with the verified
// scrapes and a verified scrape's p99 rose past integration_auth's bound (docs/robustness.md).
inline constexpr unsigned kTelemetryWorkers = 2;   // the telemetry lane's
inline constexpr int kPageLaneNice = 10;           // the page lane's workers, as the page builder
inline constexpr unsigned kConnectionLimit = 512;  // live: not shut down by us
inline constexpr unsigned kPerAddressLimit = 128;
// From this many live connections each new one evicts the longest-waiting: three quarters of the
// limit, so that a crowd of honest clients (200 page clients, each with a connection open, plus
// those they closed that a worker has not reaped yet) evicts nothing, and the last quarter takes
// connections too fresh to evict (kEvictMinAge) or being answered before the acceptor has to hold.
inline constexpr unsigned kEvictAbove = kConnectionLimit * 3 / 4;
inline constexpr std::chrono::milliseconds kEvictMinAge{100};
// Connections shut down by us (evicted, or past their deadline) that libmicrohttpd has not closed
// yet (it does on its worker's next loop): until then each holds a descriptor and one of its slots.
inline constexpr unsigned kClosingRoom = 128;
// libmicrohttpd's own limit per lane, which it splits evenly between the lane's workers and checks
// per worker without counting connections handed over and not yet started: each worker alone could
// hold all the acceptor ever admits (plus the one per worker that it counts for a moment after
// telling of its closing), so it never refuses one. The descriptors held stay at most
// kConnectionLimit + kClosingRoom (640) over both lanes, under the 1,024 of a default
// RLIMIT_NOFILE with the daemon's own.
constexpr unsigned server_connection_limit(unsigned workers) {
  return workers * (kConnectionLimit + kClosingRoom + workers);
}
inline constexpr std::chrono::seconds kIdleTimeout{2};
inline constexpr std::chrono::seconds kRequestDeadline{3};

class WebServer {
 public:
  // Starts serving `config`. When `previous` (still running) listens on the same address, the new
  // server shares its listening socket, so no connection is refused while one replaces the other;
  // the caller then drains `previous`. Throws std::runtime_error naming the address and the errno
  // text when it cannot listen, or libmicrohttpd's refusal.
  WebServer(const WebConfig& config, std::shared_ptr<Collector> collector, const WebServer* previous = nullptr);
  ~WebServer();  // stop()
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // For a replacement: stops accepting (a successor on the same socket accepts from now on),
  // answers what is in flight with "Connection: close" (a request waiting for its password
  // check with 503: no hash is waited for; one waiting for a page gets it), waits for the
  // connections to end (idle ones end by
  // kIdleTimeout, slow ones by kRequestDeadline), then closes what is left.
  void drain();
  // For shutdown: stops accepting, answers requests waiting for a password check or a page with
  // 503, gives
  // responses being sent up to 300 ms, closes everything. A hash in progress is not waited for.
  void stop();

  // "127.0.0.1:9978", "[::1]:9978": with the port actually bound.
  std::string bound_address() const;
  // "http", "https, client certificates verified, basic auth" and the like, for the log.
  std::string describe() const;

 private:
  friend struct WebServerCallbacks;  // libmicrohttpd's C callbacks, in web_server.cpp

  struct Request;  // per request: its pending password check or page, if any
  struct Reply;    // what a request is answered

  // Queues the answer to a complete request, or suspends the connection while its password is
  // checked (answered when resumed); false if libmicrohttpd could not take it.
  bool respond(MHD_Connection* connection, const char* url, const char* method, Request& request, Lane lane);
  AuthGate::Verdict authorize(MHD_Connection* connection, const char* method, Request& request);
  bool page_reply(MHD_Connection* connection, Route where, Request& request, Reply& reply);
  void finish(std::chrono::steady_clock::time_point until, bool all_closed);
  // What a lane's daemon is given for its requests: the server and which lane it is.
  struct LaneServed {
    WebServer* server;
    Lane lane;
  };
  MHD_Daemon* start_lane(const LaneServed& lane, unsigned workers);
  void stop_lanes();
  Sorting sort(int fd, const std::string& address) const;
  bool hand_over(int fd, const sockaddr* address, socklen_t length, Lane lane);
  bool remembered_as_scraper(MHD_Connection* connection, Route where, Lane lane);
  std::size_t connections_held() const;  // by both lanes

  WebConfig config_;
  std::shared_ptr<Collector> collector_;
  std::shared_ptr<ListenSocket> socket_;
  std::unique_ptr<AuthGate> auth_;
  std::string priorities_;
  std::unique_ptr<ConnectionTracker> tracker_;
  std::unique_ptr<PageBuilder> pages_;
  ScraperAddresses scrapers_;  // for sorting TLS connections
  LaneServed page_lane_{this, Lane::pages};
  LaneServed telemetry_lane_{this, Lane::telemetry};
  MHD_Daemon* daemon_ = nullptr;                  // the page lane
  MHD_Daemon* telemetry_daemon_ = nullptr;        // the telemetry lane
  std::unique_ptr<ConnectionAcceptor> acceptor_;  // started last, stopped first
  std::atomic<bool> closing_{false};              // responses say "Connection: close"
};

}  // namespace jitterd
