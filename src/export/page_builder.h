// SPDX-License-Identifier: Apache-2.0
// The status pages (/, /status.json, /baseline.json) built off the web workers, once per change of
// what they show, never per request (issue 35: built per request on the two workers, 150 page
// clients pushed a /metrics scrape to 25 s). A page is a function of the daemon's state, which
// changes when a probe run is stored or the rolling window steps (Collector::generation); between
// two changes every request for a page is answered with the one built for the current generation,
// copied in microseconds. A request that finds none waits for it without holding a worker: the
// worker suspends the connection (as for a password check, export/auth_gate.h) and the one
// building thread builds the page once for every request waiting for it, then resumes them.
//
// Bounds (docs/robustness.md): one page built at a time, on one thread; at most kPageWaiters
// requests waiting (more are answered busy: 503 with Retry-After); kCachedPages pages kept (a
// refresh value is its own page), the least recently served dropped first.
//
// `resume` is called exactly once per pending request, from the building thread when its page is
// in or from stop(), and only after the worker has called suspended(); the worker, called again
// for the request, takes the page from finish() (null: the server is stopping, answer 503).
// Thread-safety: request, suspended and finish from the web workers; construct and stop from the
// thread that owns the web server. The building thread is created by the constructor, so it runs
// on the constructing thread's (housekeeping) CPUs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace jitterd {

inline constexpr std::size_t kPageWaiters = 256;
inline constexpr std::size_t kCachedPages = 8;

// A built page: its body, or the reason it could not be built.
struct BuiltPage {
  std::string body;
  std::string error;  // not empty: building threw this; answer 500
};

class PageBuilder {
 public:
  // `build(key)` makes the page named `key` (any text the caller chooses: the route and its query)
  // on the building thread; `generation()` says which state the pages show now.
  PageBuilder(std::function<BuiltPage(const std::string& key)> build, std::function<std::uint64_t()> generation);
  ~PageBuilder();  // stop()
  PageBuilder(const PageBuilder&) = delete;
  PageBuilder& operator=(const PageBuilder&) = delete;

  enum class Outcome { ready, pending, busy, unavailable };
  class Wait;  // one pending request, shared by its worker and the building thread

  // ready: `page` is the current one. pending: `wait` is set; suspend, then call suspended().
  // busy: kPageWaiters are waiting. unavailable: stopping.
  Outcome request(const std::string& key, std::function<void()> resume, std::shared_ptr<Wait>& wait,
                  std::shared_ptr<const BuiltPage>& page);
  static void suspended(Wait& wait);
  // After `resume`: the page, or null when the builder stopped first.
  static std::shared_ptr<const BuiltPage> finish(const Wait& wait);

  // Refuses new requests and resumes the waiting ones (finish gives them null); joins the
  // building thread after the page in progress, if any.
  void stop();

  std::uint64_t builds() const;  // pages built so far (for tests and the benchmark)

 private:
  struct Cached {
    std::uint64_t generation = 0;
    std::shared_ptr<const BuiltPage> page;
    std::uint64_t last_served = 0;  // a counter, for dropping the least recently served
  };
  struct Waiting {
    std::uint64_t generation;  // the page must be built at or after it
    std::shared_ptr<Wait> wait;
  };
  void run();
  void keep(const std::string& key, std::uint64_t generation, std::shared_ptr<const BuiltPage> page);

  std::function<BuiltPage(const std::string&)> build_;
  std::function<std::uint64_t()> generation_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::map<std::string, Cached> cache_;
  std::map<std::string, std::vector<Waiting>> waiting_;  // by key
  std::deque<std::string> queue_;                        // keys with waiters, each once
  std::size_t waiters_ = 0;
  std::uint64_t served_ = 0, builds_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace jitterd
