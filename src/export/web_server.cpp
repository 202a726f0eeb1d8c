#include "export/web_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace jitterd {

namespace {
// begin_request has no user pointer; one landing page per process is all there ever is.
std::string g_landing_page;

std::string landing_page(const std::string& telemetry_path) {
  const BuildInfo build = this_build();
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>jitterd</title></head>\n<body>\n"
         "<h1>jitterd " +
         build.version +
         "</h1>\n"
         "<p>Measures how quiet this machine's CPUs are: pinned samplers record every gap between "
         "tick-counter reads.</p>\n"
         "<p><a href=\"" +
         telemetry_path + "\">Metrics</a></p>\n</body></html>\n";
}
// Opens and closes one TCP connection to `address` ("host:port"; 0.0.0.0 means loopback).
void knock(const std::string& address) {
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, host.c_str(), &target.sin_addr) != 1) return;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof target);
  close(fd);
}
}  // namespace

WebServer::WebServer(const std::string& listen_address, const std::string& telemetry_path,
                     std::shared_ptr<Collector> collector)
    : listen_address_(listen_address), telemetry_path_(telemetry_path), collector_(std::move(collector)) {
  g_landing_page = landing_page(telemetry_path);
  callbacks_.begin_request = &WebServer::begin_request;
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", listen_address, "num_threads", "2"}, &callbacks_);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot listen on " + listen_address + ": " + e.what());
  }
  exposer_->RegisterCollectable(collector_, telemetry_path);
}

WebServer::~WebServer() {
  // civetweb's master thread sees the stop flag only when its poll() returns, which it does
  // every 2 s (SOCKET_TIMEOUT_QUANTUM) unless a connection arrives: knock until it has stopped,
  // so SIGTERM and a reload restart take milliseconds instead of seconds.
  const std::string address = bound_address();
  std::atomic<bool> stopped{false};
  std::thread knocker([&] {
    while (!stopped.load()) {
      knock(address);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  exposer_.reset();
  stopped.store(true);
  knocker.join();
}

std::string WebServer::bound_address() const {
  const auto ports = exposer_->GetListeningPorts();
  const auto colon = listen_address_.rfind(':');
  const std::string host = colon == std::string::npos ? "0.0.0.0" : listen_address_.substr(0, colon);
  return host + ":" + (ports.empty() ? std::string("?") : std::to_string(ports.front()));
}

int WebServer::begin_request(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  if (request == nullptr || request->local_uri == nullptr || std::strcmp(request->local_uri, "/") != 0) return 0;
  mg_printf(connection,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %zu\r\n"
            "Connection: close\r\n\r\n",
            g_landing_page.size());
  if (std::strcmp(request->request_method, "HEAD") != 0)
    mg_write(connection, g_landing_page.data(), g_landing_page.size());
  return 200;
}

}  // namespace jitterd
