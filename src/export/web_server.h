// The HTTP side: prometheus-cpp's Exposer (civetweb) serving the collector on the telemetry
// path, and a small landing page on "/" answered from civetweb's begin_request hook, so one
// server and one set of threads does both. Construct it from a thread already restricted to
// housekeeping CPUs: civetweb's threads inherit that affinity.
// Thread-safety: construct and destroy from the main thread.
#pragma once

#include <CivetServer.h>
#include <civetweb.h>

#include <memory>
#include <string>

#include <prometheus/exposer.h>

#include "export/collector.h"

namespace jitterd {

class WebServer {
 public:
  // Throws std::runtime_error naming the address when it cannot listen.
  WebServer(const std::string& listen_address, const std::string& telemetry_path,
            std::shared_ptr<Collector> collector);
  ~WebServer();

  // "127.0.0.1:9978", with the port actually bound (useful with port 0).
  std::string bound_address() const;

 private:
  static int begin_request(mg_connection* connection);

  std::string listen_address_;
  std::string telemetry_path_;
  CivetCallbacks callbacks_{};
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<Collector> collector_;
};

}  // namespace jitterd
