// SPDX-License-Identifier: Apache-2.0
#include "export/web_server.h"

#include <microhttpd.h>

#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "export/page_routes.h"
#include "export/status_page.h"
#include "export/text_format.h"
#include "export/web_content.h"

namespace jitterd {

namespace {
using namespace std::chrono_literals;

// How long stop() lets responses being sent finish before closing their connections.
constexpr auto kStopGrace = 300ms;
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kRealm = "jitterd";

std::string header_value(MHD_Connection* connection, const char* name) {
  const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
  return value == nullptr ? std::string() : std::string(value);
}

// The client's address key (export/auth_failures.h client_address_key).
std::string client_key(MHD_Connection* connection) {
  const MHD_ConnectionInfo* client = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return client_address_key(client == nullptr ? nullptr : client->client_addr);
}

// The connection's socket, by which the tracker knows it (valid until MHD closes it, which it
// does after its closed notification).
int connection_socket(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info == nullptr ? -1 : info->connect_fd;
}

AdmissionLimits admission_limits() {
  AdmissionLimits limits;
  limits.evict_above = kEvictAbove;
  limits.live_limit = kConnectionLimit;
  limits.closing_room = kClosingRoom;
  limits.per_address = kPerAddressLimit;
  limits.deadline = kRequestDeadline;
  limits.min_age = kEvictMinAge;
  return limits;
}

// What the server shed while it ran, in the log when it stops (a reload, or the daemon's end).
void log_shed(const std::string& where, const ConnectionTracker::Counts& counts) {
  if (counts.refused + counts.evicted + counts.dropped + counts.unserved + counts.lost + counts.holds == 0) return;
  std::string text = std::to_string(counts.evicted) + " connections evicted to make room, " +
                     std::to_string(counts.dropped) + " shut down at the request deadline, " +
                     std::to_string(counts.refused) + " refused at the per-address limit; accepting held " +
                     std::to_string(counts.holds) + " times";
  if (counts.unserved != 0) text += "; " + std::to_string(counts.unserved) + " refused by libmicrohttpd";
  if (counts.lost != 0) text += "; " + std::to_string(counts.lost) + " closed by libmicrohttpd before serving";
  spdlog::info("web server on {}: {}", where, text);
}
}  // namespace

// What *state points to once a request's headers are in: created then, deleted when MHD says the
// request is complete.
struct WebServer::Reply {
  unsigned status = MHD_HTTP_OK;
  std::string body{};
  const char* type = "text/plain; charset=utf-8";
  bool gzipped = false;
  std::string disposition{};  // of a download
};

struct WebServer::Request {
  std::shared_ptr<AuthGate::Check> check;   // while and after its password is checked
  std::shared_ptr<PageBuilder::Wait> page;  // while and after its page is built
};

// libmicrohttpd's C callbacks, with access to the server they are given as closure.
struct WebServerCallbacks {
  // Called when the headers are in (*state still null), again per chunk of body, and a last
  // time with *upload_size 0, and once more after the connection was resumed from a password
  // check. GET and HEAD are answered on that last call, which keeps the connection open for the
  // next request; other methods are refused at once, so MHD closes the connection rather than
  // read a body nobody wants.
  static MHD_Result answer(void* lane_served, MHD_Connection* connection, const char* url, const char* method,
                           const char*, const char*, std::size_t* upload_size, void** state) {
    const auto* lane = static_cast<const WebServer::LaneServed*>(lane_served);
    const std::string_view verb(method);
    if (*state == nullptr) {
      try {
        *state = new WebServer::Request();
      } catch (...) {
        return MHD_NO;
      }
      if (verb == "GET" || verb == "HEAD") return MHD_YES;
      return respond(*lane, connection, url, method, *state);
    }
    if (*upload_size != 0) {
      *upload_size = 0;
      return MHD_YES;
    }
    return respond(*lane, connection, url, method, *state);
  }

  // No exception may cross into C: one that escapes closes the connection (MHD_NO) instead. The
  // request line is the client's and stays out of the log.
  static MHD_Result respond(const WebServer::LaneServed& lane, MHD_Connection* connection, const char* url,
                            const char* method, void* state) {
    try {
      return lane.server->respond(connection, url, method, *static_cast<WebServer::Request*>(state), lane.lane)
                 ? MHD_YES
                 : MHD_NO;
    } catch (const std::exception& e) {
      spdlog::error("web server: answering a request: {}", e.what());
    } catch (...) {
      spdlog::error("web server: answering a request: unknown exception");
    }
    return MHD_NO;
  }

  static void connection_event(void* self, MHD_Connection* connection, void**,
                               MHD_ConnectionNotificationCode code) {
    auto* server = static_cast<WebServer*>(self);
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      server->tracker_->closed(connection_socket(connection));
      return;
    }
    server->tracker_->opened(connection_socket(connection));
    // TLS sessions exist by now and have not started their handshake.
    if (server->config_.security.tls) {
      const MHD_ConnectionInfo* tls = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
      if (tls != nullptr && tls->tls_session != nullptr)
        apply_client_auth(static_cast<gnutls_session_t>(tls->tls_session),
                          server->config_.security.tls->client_auth);
    }
  }

  static void request_completed(void* self, MHD_Connection* connection, void** state, MHD_RequestTerminationCode) {
    delete static_cast<WebServer::Request*>(*state);
    *state = nullptr;
    static_cast<WebServer*>(self)->tracker_->answered(connection_socket(connection));
  }

  // MHD's own messages (handshake failures, refused connections) are for debugging only.
  static void log(void*, const char* format, va_list arguments) {
    if (!spdlog::should_log(spdlog::level::debug)) return;
    char text[512];
    std::vsnprintf(text, sizeof text, format, arguments);
    std::string line(text);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    spdlog::debug("web server: {}", line);
  }
};

WebServer::WebServer(const WebConfig& config, std::shared_ptr<Collector> collector, const WebServer* previous)
    : config_(config),
      collector_(std::move(collector)),
      auth_(std::make_unique<AuthGate>(config.security.basic_auth_users)) {
  std::string reason;
  const std::optional<ListenAddress> address = parse_listen_address(config.listen_address, &reason);
  if (!address) throw std::runtime_error("cannot listen on " + config.listen_address + ": " + reason);
  if (previous != nullptr && previous->socket_->address() == *address)
    socket_ = previous->socket_;
  else
    socket_ = std::make_shared<ListenSocket>(*address);

  tracker_ = std::make_unique<ConnectionTracker>(admission_limits(), &collector_->web_counters());
  pages_ = std::make_unique<PageBuilder>([collector = collector_, path = config_.telemetry_path](
                                             const std::string& key) { return build_page(*collector, path, key); },
                                         [collector = collector_] { return collector->generation(); });
  if (config_.security.tls) priorities_ = tls_priorities(*config_.security.tls);
  daemon_ = start_lane(page_lane_, kWorkerThreads);
  telemetry_daemon_ = start_lane(telemetry_lane_, kTelemetryWorkers);
  if (daemon_ == nullptr || telemetry_daemon_ == nullptr) {
    stop_lanes();
    throw std::runtime_error("cannot serve on " + socket_->bound_address() +
                             ": libmicrohttpd refused to start (run with --log.level debug for its reason)");
  }
  try {
    acceptor_ = std::make_unique<ConnectionAcceptor>(
        socket_->fd(), socket_->bound_address(), *tracker_,
        [this](int fd, const std::string& address) { return sort(fd, address); },
        [this](int fd, const sockaddr* address, socklen_t length, Lane lane) {
          return hand_over(fd, address, length, lane);
        });
  } catch (...) {
    stop_lanes();
    throw;
  }
}

// Both lanes' daemons, those that started, the telemetry lane's first.
void WebServer::stop_lanes() {
  if (telemetry_daemon_ != nullptr) MHD_stop_daemon(telemetry_daemon_);
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = telemetry_daemon_ = nullptr;
}

// One lane: a libmicrohttpd daemon of `workers` threads, without a listening socket of its own.
MHD_Daemon* WebServer::start_lane(const LaneServed& lane, unsigned workers) {
  // poll() rather than epoll: the mode this server is tested and measured in (under epoll MHD
  // 0.9.75 could abort when a thread pool was quiesced); a worker polls at most 640 sockets.
  // No listening socket: the acceptor hands each connection over (MHD_add_connection), and
  // MHD_USE_ITC is what wakes the worker it is given to (the hashing and page threads' resumes too).
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
                   MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  const auto& tls = config_.security.tls;
  if (tls) flags |= MHD_USE_TLS;
  std::vector<MHD_OptionItem> options{
      {MHD_OPTION_THREAD_POOL_SIZE, workers, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, server_connection_limit(workers), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(kIdleTimeout.count()), nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&WebServerCallbacks::connection_event), this},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&WebServerCallbacks::request_completed), this},
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&WebServerCallbacks::log), nullptr}};
  if (tls) {
    // MHD copies none of these; config_ keeps them alive as long as the daemon.
    options.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(tls->cert_pem.c_str())});
    options.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(tls->key_pem.c_str())});
    options.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(priorities_.c_str())});
    if (!tls->client_ca_pem.empty())
      options.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, const_cast<char*>(tls->client_ca_pem.c_str())});
  }
  options.push_back({MHD_OPTION_END, 0, nullptr});
  return MHD_start_daemon(flags, 0, nullptr, nullptr, &WebServerCallbacks::answer, const_cast<LaneServed*>(&lane),
                          MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
}

// Plain HTTP by its first request line; TLS (its first bytes are the handshake) by its client's
// address: a client whose latest request was a scrape.
Sorting WebServer::sort(int fd, const std::string& address) const {
  if (config_.security.tls) return scrapers_.scraper(address) ? Sorting::telemetry : Sorting::pages;
  return peek_first_request(fd, config_.telemetry_path);
}

bool WebServer::hand_over(int fd, const sockaddr* address, socklen_t length, Lane lane) {
  // Counted before it is handed over, so a scrape it answers already counts itself; one refused
  // is counted again by the tracker (refused_by_server).
  WebCounters& counters = collector_->web_counters();
  count(lane == Lane::telemetry ? counters.telemetry_lane : counters.page_lane);
  MHD_Daemon* daemon = lane == Lane::telemetry ? telemetry_daemon_ : daemon_;
  return MHD_add_connection(daemon, fd, address, length) == MHD_YES;
}

std::size_t WebServer::connections_held() const {
  std::size_t held = 0;
  for (MHD_Daemon* daemon : {daemon_, telemetry_daemon_}) {
    const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (info != nullptr) held += info->num_connections;
  }
  return held;
}

WebServer::~WebServer() { stop(); }

void WebServer::drain() {
  closing_.store(true);
  finish(std::chrono::steady_clock::now() + kRequestDeadline + 500ms, true);
}

void WebServer::stop() { finish(std::chrono::steady_clock::now() + kStopGrace, false); }

void WebServer::finish(std::chrono::steady_clock::time_point until, bool all_closed) {
  if (daemon_ == nullptr) return;
  // From here the other servers on the socket, if any, accept; MHD still answers what it has, and
  // every connection it was handed is the tracker's.
  acceptor_.reset();
  // Requests waiting for a password check are resumed and answered 503 now: MHD must not be
  // stopped with a connection suspended, and no hash is waited for. Those waiting for a page are
  // too when stopping; a drain lets them have their page (a build takes milliseconds).
  auth_->stop();
  if (!all_closed) pages_->stop();
  tracker_->wait_quiet(until, all_closed);
  while (all_closed && std::chrono::steady_clock::now() < until && connections_held() != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  pages_->stop();  // a drain past its time: whatever still waits is answered 503 first
  stop_lanes();
  log_shed(socket_->bound_address(), tracker_->counts());
  tracker_.reset();
}

std::string WebServer::bound_address() const { return socket_->bound_address(); }

std::string WebServer::describe() const {
  std::string text = config_.security.tls ? "https" : "http";
  if (config_.security.tls) {
    const ClientAuth client = config_.security.tls->client_auth;
    if (client != ClientAuth::no_client_cert) text += ", client certificates " + std::string(to_string(client));
    text += ", " + std::string(to_string(config_.security.tls->min_version)) + ".." +
            std::string(to_string(config_.security.tls->max_version));
  }
  if (auth_->enabled()) text += ", basic auth";
  return text;
}

AuthGate::Verdict WebServer::authorize(MHD_Connection* connection, const char* method, Request& request) {
  if (request.check) {  // resumed: settled, so never pending again
    const AuthGate::Verdict verdict = auth_->finish(*request.check);
    return verdict == AuthGate::Verdict::pending ? AuthGate::Verdict::unavailable : verdict;
  }
  if (!auth_->enabled()) return AuthGate::Verdict::allowed;
  std::optional<BasicCredentials> credentials =
      parse_basic_credentials(header_value(connection, MHD_HTTP_HEADER_AUTHORIZATION));
  // Other methods are answered on the headers' call, their body unread: never suspended.
  if (std::string_view(method) != "GET" && std::string_view(method) != "HEAD") return auth_->known(credentials);
  return auth_->begin(
      credentials, client_key(connection), [connection] { MHD_resume_connection(connection); }, request.check);
}

// The page of `where` from the page builder: at once when it was built for the current state,
// else after the connection is resumed from waiting for its build (false: suspended now).
bool WebServer::page_reply(MHD_Connection* connection, Route where, Request& request, Reply& reply) {
  const char* refresh = where == Route::status_page
                            ? MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "refresh")
                            : nullptr;
  const std::optional<int> seconds = refresh == nullptr ? std::optional<int>(0) : parse_refresh(refresh);
  if (!seconds) {
    reply = {MHD_HTTP_BAD_REQUEST, "400 bad request: refresh must be a whole number of seconds (0 is off)\n"};
    return true;
  }
  std::shared_ptr<const BuiltPage> page;
  if (request.page) {  // resumed: its page is in, or the server is stopping
    page = PageBuilder::finish(*request.page);
  } else {
    const PageBuilder::Outcome outcome = pages_->request(
        page_key(where, *seconds), [connection] { MHD_resume_connection(connection); }, request.page, page);
    if (outcome == PageBuilder::Outcome::pending) {
      MHD_suspend_connection(connection);  // as for a password check: nothing in between
      PageBuilder::suspended(*request.page);
      return false;
    }
    if (outcome == PageBuilder::Outcome::busy) {
      count(collector_->web_counters().page_waiters_full);
      reply = {MHD_HTTP_SERVICE_UNAVAILABLE, "503 too many page requests waiting; retry later\n"};
      return true;
    }
  }
  if (page == nullptr) {
    reply = {MHD_HTTP_SERVICE_UNAVAILABLE, "503 the server is stopping; retry\n"};
  } else if (!page->error.empty()) {
    spdlog::error("web server: building the page \"{}\": {}", page_key(where, *seconds), page->error);
    reply = {MHD_HTTP_INTERNAL_SERVER_ERROR, "500 the page could not be built; see jitterd's log\n"};
  } else {
    reply = {MHD_HTTP_OK, page->body,
             where == Route::status_page ? "text/html; charset=utf-8" : "application/json"};
    if (where == Route::baseline) reply.disposition = "attachment; filename=\"jitterd-baseline.json\"";
  }
  return true;
}

// Under TLS, where connections are sorted by their client's address: remembers whether this
// client's latest request was a scrape; true when it was one answered on the page lane.
bool WebServer::remembered_as_scraper(MHD_Connection* connection, Route where, Lane lane) {
  if (!config_.security.tls || where == Route::not_found || where == Route::method_not_allowed) return false;
  const bool scrape = where == Route::metrics;
  scrapers_.saw(client_key(connection), scrape);
  return scrape && lane != Lane::telemetry;
}

bool WebServer::respond(MHD_Connection* connection, const char* url, const char* method, Request& request,
                        Lane lane) {
  tracker_->answering(connection_socket(connection));
  const AuthGate::Verdict access = authorize(connection, method, request);
  if (access == AuthGate::Verdict::pending) {
    // Nothing may come between the two: the hashing thread resumes only once told.
    MHD_suspend_connection(connection);
    AuthGate::suspended(*request.check);
    return true;
  }
  Reply reply;
  const bool allowed = access == AuthGate::Verdict::allowed;
  const Route where = route(method, url, config_.telemetry_path);
  if (access == AuthGate::Verdict::denied) {
    reply = {MHD_HTTP_UNAUTHORIZED, "401 Unauthorized\n"};
  } else if (access == AuthGate::Verdict::busy) {
    count(collector_->web_counters().password_checks_full);
    reply = {MHD_HTTP_TOO_MANY_REQUESTS, "429 too many password checks waiting; retry later\n"};
  } else if (!allowed) {
    reply = {MHD_HTTP_SERVICE_UNAVAILABLE, "503 the server is stopping; retry\n"};
  } else if (where == Route::not_found) {
    reply = {MHD_HTTP_NOT_FOUND, "404 page not found\n"};
  } else if (where == Route::method_not_allowed) {
    reply = {MHD_HTTP_METHOD_NOT_ALLOWED,
             "405 method not allowed; allowed: " + std::string(kAllowedMethods) + "\n"};
  } else if (where == Route::status_page || where == Route::status_json || where == Route::baseline) {
    if (!page_reply(connection, where, request, reply)) return true;  // suspended until its page is built
  } else {
    reply = {MHD_HTTP_OK, collector_->metrics_text(), kMetricsType};
    if (accepts_gzip(header_value(connection, MHD_HTTP_HEADER_ACCEPT_ENCODING))) {
      if (std::optional<std::string> packed = gzip(reply.body)) {
        reply.body = std::move(*packed);
        reply.gzipped = true;
      }
    }
  }
  MHD_Response* response =
      MHD_create_response_from_buffer(reply.body.size(), reply.body.data(), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return false;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.type);
  if (where == Route::metrics) MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
  if (!reply.disposition.empty())
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_DISPOSITION, reply.disposition.c_str());
  // Live pages: never served from a cache.
  if (allowed && where != Route::metrics)
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (reply.gzipped) MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
  if (allowed && where == Route::method_not_allowed)
    MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, kAllowedMethods);
  for (const auto& [name, value] : config_.security.headers)
    MHD_add_response_header(response, name.c_str(), value.c_str());
  // A server being replaced tells keep-alive clients to reconnect, to its successor; a TLS scraper
  // answered on the page lane, to be sorted to the telemetry lane (remembered as a scraper now).
  if (closing_.load() || (allowed && remembered_as_scraper(connection, where, lane)))
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  if (access == AuthGate::Verdict::busy || (!allowed && access != AuthGate::Verdict::denied) ||
      reply.status == MHD_HTTP_SERVICE_UNAVAILABLE)
    MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  const MHD_Result queued = access == AuthGate::Verdict::denied
                                ? MHD_queue_basic_auth_fail_response(connection, kRealm, response)
                                : MHD_queue_response(connection, reply.status, response);
  MHD_destroy_response(response);
  return queued == MHD_YES;
}

}  // namespace jitterd
