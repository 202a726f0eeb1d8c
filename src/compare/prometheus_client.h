// SPDX-License-Identifier: Apache-2.0
// A small client of Prometheus's HTTP API (/api/v1/query and /api/v1/label/.../values) over
// compare/http_client.h, for `jitterd compare --prometheus`. Each call is one blocking GET; the answer's
// envelope ({"status": "success", "data": ...}) is checked here, so callers see only `data`.
// Every failure is a BaselineError whose message names the URL and the query:
//   69 (EX_UNAVAILABLE) no answer: cannot resolve or connect, timed out, or an HTTP error status
//      without a Prometheus error body (a 404 of another server, a 401 of a proxy); an answer
//      larger than max_body_bytes once decoded (a gzip bomb, an endless body: reading stops
//      there); a redirect, which is not followed (it would take the credentials elsewhere);
//   65 (EX_DATAERR) an answer that is not Prometheus's (not JSON, or not its envelope, or JSON
//      that report/json_input.h refuses: a number out of range, a key given twice), or
//      Prometheus's own error ("status": "error", with errorType and error); a refusal of a
//      query too big for the server's limits is a QueryTooLarge, so that a caller that can ask
//      for less (fleet's batches of hosts) tells it from the others;
//   66 (EX_NOINPUT) the bearer token or basic-auth password file cannot be read (65 when empty).
// Secrets (the token, the password) are read from files, sent only in the Authorization header
// and never put into a message or a log line.
// One client per thread (a curl easy handle is not shared).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compare/http_client.h"
#include "report/baseline_file.h"
#include "report/render.h"

namespace jitterd {

inline constexpr int kExitPrometheusUnavailable = kExitUnavailable;

// The server refused a query too big for its limits: Prometheus' --query.max-samples ("query
// processing would load too many samples into memory"), VictoriaMetrics'
// -search.maxSamplesPerQuery ("cannot select more than") and -search.maxUniqueTimeseries ("the
// number of matching timeseries exceeds"). Exit code 65, as the server's other errors.
class QueryTooLarge : public BaselineError {
 public:
  using BaselineError::BaselineError;
};

// The largest answer read, decoded (--prometheus-max-bytes): 64 MiB. Prometheus's JSON spends about
// 180 bytes on a series holding one sample, so this is every gap-histogram bucket series of 1,000
// hosts x 16 CPUs (368,000 series: 23 buckets each) at one instant; for the one instance a range
// reads (16 CPUs: 560 series, ~27 bytes a sample), some 4,400 scrapes a range: 73 minutes at 1 s
// scrapes, 18 hours at 15 s.
inline constexpr std::size_t kPrometheusMaxBytes = 64u << 20;

// The HTTP client's options (credentials, TLS, the timeout; max_body_bytes 64 MiB as
// kPrometheusMaxBytes) and the URL.
struct PrometheusOptions : HttpOptions {
  std::string url;  // http(s)://host:port[/prefix], no trailing query
};

class PrometheusClient {
 public:
  explicit PrometheusClient(PrometheusOptions options);
  PrometheusClient(const PrometheusClient&) = delete;
  PrometheusClient& operator=(const PrometheusClient&) = delete;

  const std::string& url() const { return options_.url; }

  // GET /api/v1/query?query=QUERY&time=TIME (unix seconds): the answer's "data".
  Json query(const std::string& query, double time) const;
  // GET /api/v1/label/LABEL/values?match[]=MATCH[&start=&end=]: the values (of the series with
  // samples between the two instants, unix seconds, when given; Prometheus answers from its index,
  // so it may add series of the same blocks outside them).
  std::vector<std::string> label_values(const std::string& label, const std::string& match,
                                        std::optional<std::pair<double, double>> between = std::nullopt) const;

 private:
  Json get(const std::string& path, const std::vector<std::pair<std::string, std::string>>& parameters,
           const std::string& what) const;

  PrometheusOptions options_;
  HttpClient http_;
};

// The "data" of a Prometheus API answer `body` (HTTP status `status`), or the BaselineError
// above; `where` names the URL and the query. Pure: tested without a server.
Json prometheus_data(long status, const std::string& body, const std::string& where);

// A `le` label's bound in ns, rounded to 1/1000 ns so that 1e-5 s is 10000 ns exactly (+inf for
// +Inf); NaN when it is not a positive number.
double le_bound_ns(const std::string& le);

}  // namespace jitterd
