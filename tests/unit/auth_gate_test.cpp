// SPDX-License-Identifier: Apache-2.0
// The hashing pool and the gate in front of it, without libmicrohttpd: "resume" is a counter here.
// Bounds, the order suspend-then-resume, the failure memory in front of the pool, and a stop that
// does not wait for a hash in progress.
#include "export/auth_gate.h"

#include <pthread.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

namespace jitterd {
namespace {

using namespace std::chrono_literals;
using GateVerdict = AuthGate::Verdict;
using Steady = std::chrono::steady_clock;

// "secret" at cost 4 (fast) and at cost 12 (about 0.2 s on the development guest).
const std::string kHash4 = "$2y$04$QpcekFas4TsDdhhhvalQ.uFCTxq338o3gdaZbumCw4Fc8DNQjbLVW";
const std::string kHash12 = "$2y$12$2u7zH./tOB7ry4cfvxeJyOU3NdP/gCmUoeTZMzo06eZJfurbP3T5u";

// Counts the calls of a check's resume function; shared, since a detached hashing thread may
// hold the function after the test has moved on.
struct Resumes {
  std::mutex mutex;
  std::condition_variable changed;
  int count = 0;

  static std::function<void()> counter(const std::shared_ptr<Resumes>& r) {
    return [r] {
      {
        std::lock_guard lock(r->mutex);
        ++r->count;
      }
      r->changed.notify_all();
    };
  }
  bool wait_for(int n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] { return count >= n; });
  }
  int seen() {
    std::lock_guard lock(mutex);
    return count;
  }
};

BasicCredentials credentials(const std::string& user, const std::string& password) { return {user, password}; }

// A job that blocks its thread until released, and says when it started.
struct Blocker {
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();

  HashPool::Job job() {
    return [this](bool) {
      started.set_value();
      released.wait();
    };
  }
};

}  // namespace

TEST_CASE("the hashing pool: its own named thread, a bounded queue, a bound per key", "[hash_pool][concurrency]") {
  HashPool pool({1, 2, 2, 10s}, "test-hash");
  Blocker blocker;
  REQUIRE(pool.submit("x", blocker.job()) == HashPool::Admission::accepted);
  blocker.started.get_future().wait();
  std::promise<std::string> name;
  std::atomic<int> ran{0};
  const HashPool::Job counted = [&](bool) { ++ran; };
  REQUIRE(pool.submit("x", [&](bool expired) {
    char text[16] = {};
    pthread_getname_np(pthread_self(), text, sizeof text);
    name.set_value(std::string(text) + (expired ? " expired" : ""));
  }) == HashPool::Admission::accepted);
  CHECK(pool.submit("x", counted) == HashPool::Admission::key_full);  // x: one running, one waiting
  CHECK(pool.submit("y", counted) == HashPool::Admission::accepted);
  CHECK(pool.submit("z", counted) == HashPool::Admission::full);
  CHECK(pool.waiting() == 2);
  blocker.release.set_value();
  CHECK(name.get_future().get() == "test-hash");
  while (ran.load() < 1) std::this_thread::sleep_for(1ms);
  CHECK(pool.submit("x", counted) == HashPool::Admission::accepted);  // room again
  pool.stop();
  CHECK(pool.submit("x", counted) == HashPool::Admission::stopped);
}

TEST_CASE("the hashing pool: a job that waited too long is told so", "[hash_pool][concurrency]") {
  HashPool pool({1, 4, 4, 20ms}, "test-hash");
  Blocker blocker;
  REQUIRE(pool.submit("x", blocker.job()) == HashPool::Admission::accepted);
  blocker.started.get_future().wait();
  std::promise<bool> expired;
  REQUIRE(pool.submit("y", [&](bool e) { expired.set_value(e); }) == HashPool::Admission::accepted);
  std::this_thread::sleep_for(50ms);
  blocker.release.set_value();
  CHECK(expired.get_future().get());
}

TEST_CASE("the hashing pool: stop drops waiting jobs and does not wait for a running one",
          "[hash_pool][concurrency]") {
  auto blocker = std::make_shared<Blocker>();
  auto done = std::make_shared<std::promise<void>>();
  std::atomic<bool> dropped_ran{false};
  {
    HashPool pool({1, 4, 4, 10s}, "test-hash");
    REQUIRE(pool.submit("x", [blocker, done](bool) {
      blocker->started.set_value();
      blocker->released.wait();
      done->set_value();
    }) == HashPool::Admission::accepted);
    blocker->started.get_future().wait();
    REQUIRE(pool.submit("y", [&](bool) { dropped_ran = true; }) == HashPool::Admission::accepted);
    const auto started = Steady::now();
    pool.stop();
    CHECK(Steady::now() - started < 1s);
  }  // the pool is gone; its thread is still in the job
  blocker->release.set_value();
  CHECK(done->get_future().wait_for(10s) == std::future_status::ready);
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(dropped_ran.load());
}

TEST_CASE("the gate: cached and remembered verdicts at once, the rest on the hashing thread",
          "[auth_gate][concurrency]") {
  AuthGate gate({{"alice", kHash4}});
  REQUIRE(gate.enabled());
  auto resumes = std::make_shared<Resumes>();
  std::shared_ptr<AuthGate::Check> check;
  CHECK(gate.begin(std::nullopt, "a", Resumes::counter(resumes), check) == GateVerdict::denied);
  CHECK_FALSE(check);

  // Right password: pending, resumed only once the worker says the connection is suspended.
  REQUIRE(gate.begin(credentials("alice", "secret"), "a", Resumes::counter(resumes), check) ==
          GateVerdict::pending);
  REQUIRE(check);
  CHECK_FALSE(resumes->wait_for(1, 100ms));  // a cost-4 hash is long done by now
  AuthGate::suspended(*check);
  REQUIRE(resumes->wait_for(1));
  CHECK(gate.finish(*check) == GateVerdict::allowed);
  // Verified now: at once, from any address.
  std::shared_ptr<AuthGate::Check> none;
  CHECK(gate.begin(credentials("alice", "secret"), "b", Resumes::counter(resumes), none) == GateVerdict::allowed);
  CHECK_FALSE(none);
  CHECK(gate.known(credentials("alice", "secret")) == GateVerdict::allowed);
  CHECK(gate.known(credentials("alice", "other")) == GateVerdict::denied);
  CHECK(gate.known(std::nullopt) == GateVerdict::denied);

  // A wrong password costs a hash once per address; again from the same address it is refused at once.
  std::shared_ptr<AuthGate::Check> wrong;
  REQUIRE(gate.begin(credentials("alice", "guess"), "a", Resumes::counter(resumes), wrong) ==
          GateVerdict::pending);
  AuthGate::suspended(*wrong);
  REQUIRE(resumes->wait_for(2));
  CHECK(gate.finish(*wrong) == GateVerdict::denied);
  CHECK(gate.begin(credentials("alice", "guess"), "a", Resumes::counter(resumes), none) == GateVerdict::denied);
  CHECK_FALSE(none);
  CHECK(gate.begin(credentials("mallory", "secret"), "a", Resumes::counter(resumes), none) ==
        GateVerdict::pending);
  AuthGate::suspended(*none);
  REQUIRE(resumes->wait_for(3));
  CHECK(gate.finish(*none) == GateVerdict::denied);
  std::shared_ptr<AuthGate::Check> elsewhere;
  CHECK(gate.begin(credentials("alice", "guess"), "b", Resumes::counter(resumes), elsewhere) ==
        GateVerdict::pending);
  AuthGate::suspended(*elsewhere);
  REQUIRE(resumes->wait_for(4));
  CHECK(gate.finish(*elsewhere) == GateVerdict::denied);
  CHECK(resumes->seen() == 4);
}

TEST_CASE("the gate: busy when the hashing thread has no room, overall or for the address",
          "[auth_gate][concurrency]") {
  AuthGate gate({{"alice", kHash4}}, {1, 1, 1, 10s});
  auto resumes = std::make_shared<Resumes>();
  // The first check holds the thread: it waits to be told the connection is suspended.
  std::shared_ptr<AuthGate::Check> first, second, refused;
  REQUIRE(gate.begin(credentials("alice", "one"), "a", Resumes::counter(resumes), first) == GateVerdict::pending);
  std::this_thread::sleep_for(50ms);
  REQUIRE(gate.begin(credentials("alice", "two"), "b", Resumes::counter(resumes), second) == GateVerdict::pending);
  CHECK(gate.begin(credentials("alice", "three"), "c", Resumes::counter(resumes), refused) == GateVerdict::busy);
  CHECK(gate.begin(credentials("alice", "four"), "a", Resumes::counter(resumes), refused) == GateVerdict::busy);
  CHECK_FALSE(refused);
  AuthGate::suspended(*first);
  AuthGate::suspended(*second);
  REQUIRE(resumes->wait_for(2));
  CHECK(gate.finish(*first) == GateVerdict::denied);
  CHECK(gate.finish(*second) == GateVerdict::denied);
}

TEST_CASE("the gate: stop resumes waiting checks as unavailable without waiting for the hash",
          "[auth_gate][concurrency]") {
  // How long one cost-12 check takes here, to compare stop() with.
  const auto started = Steady::now();
  CHECK_FALSE(BasicAuth({{"alice", kHash12}}).check("alice", "wrong"));
  const auto hash_time = Steady::now() - started;

  auto resumes = std::make_shared<Resumes>();
  std::shared_ptr<AuthGate::Check> running, queued;
  auto gate = std::make_unique<AuthGate>(std::map<std::string, std::string>{{"alice", kHash12}});
  REQUIRE(gate->begin(credentials("alice", "guess1"), "a", Resumes::counter(resumes), running) ==
          GateVerdict::pending);
  REQUIRE(gate->begin(credentials("alice", "guess2"), "a", Resumes::counter(resumes), queued) ==
          GateVerdict::pending);
  AuthGate::suspended(*running);
  AuthGate::suspended(*queued);
  std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::milliseconds>(hash_time / 10));
  const auto stopping = Steady::now();
  gate->stop();
  const auto stop_time = Steady::now() - stopping;
  CHECK(resumes->seen() == 2);
  CHECK(gate->finish(*running) == GateVerdict::unavailable);
  CHECK(gate->finish(*queued) == GateVerdict::unavailable);
  std::shared_ptr<AuthGate::Check> late;
  CHECK(gate->begin(credentials("alice", "guess3"), "b", Resumes::counter(resumes), late) ==
        GateVerdict::unavailable);
  gate.reset();
  INFO("stop took " << std::chrono::duration<double>(stop_time).count() << " s, one hash "
                    << std::chrono::duration<double>(hash_time).count() << " s");
  CHECK(stop_time < hash_time / 2);
  // The hash finishes on its detached thread, after its gate is gone, and resumes nothing.
  std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::milliseconds>(hash_time * 2));
  CHECK(resumes->seen() == 2);
}

}  // namespace jitterd
