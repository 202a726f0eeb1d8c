// SPDX-License-Identifier: Apache-2.0
#include "export/web_counters.h"

#include "export/metric_families.h"

namespace jitterd {

namespace {
double load(const std::atomic<std::uint64_t>& counter) {
  return static_cast<double>(counter.load(std::memory_order_relaxed));
}
}  // namespace

void add_web_families(const WebCounters& counters, std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  prometheus::MetricFamily lanes =
      family("jitterd_web_connections_total",
             "Connections the web server handed to a lane of workers: telemetry (its first request asked for "
             "the telemetry path; workers of its own) or pages (everything else).",
             MetricType::Counter);
  sample(lanes, {{"lane", "telemetry"}}, load(counters.telemetry_lane));
  sample(lanes, {{"lane", "pages"}}, load(counters.page_lane));
  out.push_back(std::move(lanes));

  prometheus::MetricFamily shed =
      family("jitterd_web_connections_shed_total",
             "Connections the web server closed unanswered, by reason: per_address_limit, evicted (to make room), "
             "request_deadline, refused_by_server, closed_unserved.",
             MetricType::Counter);
  sample(shed, {{"reason", "per_address_limit"}}, load(counters.per_address_limit));
  sample(shed, {{"reason", "evicted"}}, load(counters.evicted));
  sample(shed, {{"reason", "request_deadline"}}, load(counters.request_deadline));
  sample(shed, {{"reason", "refused_by_server"}}, load(counters.refused_by_server));
  sample(shed, {{"reason", "closed_unserved"}}, load(counters.closed_unserved));
  out.push_back(std::move(shed));

  add_single(
      out,
      family("jitterd_web_accept_holds_total",
             "Times the web server stopped accepting connections until it had room (the kernel's queue waited).",
             MetricType::Counter),
      {}, load(counters.accept_holds));

  prometheus::MetricFamily refused =
      family("jitterd_web_requests_refused_total",
             "Requests answered at once for want of room, by reason: page_waiters_full (503), "
             "password_checks_full (429).",
             MetricType::Counter);
  sample(refused, {{"reason", "page_waiters_full"}}, load(counters.page_waiters_full));
  sample(refused, {{"reason", "password_checks_full"}}, load(counters.password_checks_full));
  out.push_back(std::move(refused));
}

}  // namespace jitterd
