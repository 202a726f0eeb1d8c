// SPDX-License-Identifier: Apache-2.0
// Basic auth for the web server's workers without a bcrypt on them (issue 24: before, every failed
// login cost a full bcrypt on one of the two workers, and 64 clients guessing passwords stopped
// /metrics). A request's credentials are decided at once when they can be:
//  - none, or malformed (export/web_content.h): denied (401);
//  - verified before (BasicAuth's cache, a keyed digest): allowed, in microseconds: a scrape;
//  - failed before from the same client address (export/auth_failures.h): denied, no bcrypt;
//  - no room on the hashing thread (kHashQueue waiting, or kHashPerAddress from that address):
//    busy (429 with Retry-After).
// Otherwise the bcrypt goes to the hashing thread (export/hash_pool.h) and begin() says pending:
// the worker suspends the connection and goes on serving others; `resume` is called exactly once,
// from the hashing thread when the verdict is in or from stop(), and only after the worker has
// called suspended(); the worker, called again for the request, takes the verdict from finish().
// A check that waited more than kHashMaxWait for the thread is answered busy without a bcrypt.
// stop() refuses new checks and resumes every waiting connection as unavailable (503), without
// waiting for a hash in progress: that one finishes on its detached thread and finds its check
// settled, so it touches nothing of a server that may be gone.
// Thread-safety: begin, suspended and finish from the web workers; construct and stop from the
// thread that owns the web server.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "export/auth_failures.h"
#include "export/hash_pool.h"
#include "export/web_auth.h"
#include "export/web_content.h"

namespace jitterd {

// One thread: a bcrypt is CPU work, and one housekeeping CPU is the most that logins may take.
inline constexpr unsigned kHashThreads = 1;
inline constexpr std::size_t kHashQueue = 8;
inline constexpr std::size_t kHashPerAddress = 4;
inline constexpr std::chrono::seconds kHashMaxWait{2};
// The failure memory: addresses, failures per address, how long a failure is remembered.
inline constexpr std::size_t kFailureAddresses = 256;
inline constexpr std::size_t kFailuresPerAddress = 32;
inline constexpr std::chrono::seconds kFailureMemory{60};

class AuthGate {
 public:
  enum class Verdict { allowed, denied, busy, unavailable, pending };
  class Check;  // one pending check, shared by its request and its job

  // Starts the hashing thread when there are users: construct on the housekeeping CPUs.
  explicit AuthGate(const std::map<std::string, std::string>& users, HashPool::Limits limits = default_limits());
  ~AuthGate();  // stop()
  AuthGate(const AuthGate&) = delete;
  AuthGate& operator=(const AuthGate&) = delete;

  bool enabled() const { return auth_->enabled(); }

  // The verdict on `credentials` from `address` (client_address_key), or pending with *check set.
  Verdict begin(const std::optional<BasicCredentials>& credentials, const std::string& address,
                std::function<void()> resume, std::shared_ptr<Check>& check);
  // The verdict without a bcrypt: allowed when the pair was verified before, else denied. For
  // requests that can only be refused anyway (a method other than GET and HEAD, answered while
  // its body is still unread), which must not take the hashing thread's time.
  Verdict known(const std::optional<BasicCredentials>& credentials) const;
  // After a pending begin(): the connection is suspended, `resume` may be called from now on.
  static void suspended(Check& check);
  // After `resume`: the verdict (allowed, denied, busy or unavailable). Remembers a failure.
  Verdict finish(const Check& check);

  // Refuses new checks (unavailable) and resumes the waiting ones; returns without waiting for a
  // hash in progress.
  void stop();

  static HashPool::Limits default_limits() { return {kHashThreads, kHashQueue, kHashPerAddress, kHashMaxWait}; }

 private:
  std::shared_ptr<const BasicAuth> auth_;
  std::unique_ptr<HashPool> pool_;  // null without users
  std::mutex mutex_;
  FailureMemory failures_;
  std::vector<std::weak_ptr<Check>> waiting_;
  bool stopping_ = false;
};

}  // namespace jitterd
