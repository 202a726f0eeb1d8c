// SPDX-License-Identifier: Apache-2.0
// What the web server shed and how it sorted its connections, counted since the daemon started:
// one object for every web server the daemon runs (a reload replaces the server, not the counts),
// written by the servers' threads and read by the collector at scrape time
// (jitterd_web_connections_total, jitterd_web_connections_shed_total,
// jitterd_web_accept_holds_total, jitterd_web_requests_refused_total: docs/metrics.md).
// Thread-safety: relaxed atomic counters; any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include <prometheus/metric_family.h>

namespace jitterd {

struct WebCounters {
  // Connections handed to each lane of workers (export/request_sorting.h).
  std::atomic<std::uint64_t> telemetry_lane{0};
  std::atomic<std::uint64_t> page_lane{0};
  // Connections shed (export/connection_admission.h): closed at once, their address at its limit;
  // shut down to make room; shut down at their request deadline; refused by libmicrohttpd when
  // handed over; closed by libmicrohttpd before it served them.
  std::atomic<std::uint64_t> per_address_limit{0};
  std::atomic<std::uint64_t> evicted{0};
  std::atomic<std::uint64_t> request_deadline{0};
  std::atomic<std::uint64_t> refused_by_server{0};
  std::atomic<std::uint64_t> closed_unserved{0};
  // Times the acceptor stopped accepting until the server had room (the kernel's queue waited).
  std::atomic<std::uint64_t> accept_holds{0};
  // Requests answered at once for want of room: a page (503, export/page_builder.h kPageWaiters
  // waiting) or a password check (429, export/auth_gate.h).
  std::atomic<std::uint64_t> page_waiters_full{0};
  std::atomic<std::uint64_t> password_checks_full{0};
};

// The four families of `counters`, appended to `out` (relaxed loads: each counter is exact, the
// four are not one instant's).
void add_web_families(const WebCounters& counters, std::vector<prometheus::MetricFamily>& out);

inline void count(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace jitterd
