// SPDX-License-Identifier: Apache-2.0
// The web server's page builder (export/page_builder.h), without libmicrohttpd: a fake
// "connection" is a flag that resume sets, as MHD_resume_connection would wake the worker.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "export/page_builder.h"
#include "export/page_routes.h"

using namespace jitterd;
using namespace std::chrono_literals;

namespace {
// A build that takes `cost` and says which generation and how many builds it was.
struct CountingBuild {
  std::atomic<std::uint64_t> generation{1};
  std::atomic<int> builds{0};
  std::atomic<int> entered{0};  // builds begun
  std::chrono::milliseconds cost{0};
  std::mutex gate_mutex;
  std::condition_variable gate_changed;
  bool held = false;  // while true, a build waits (to have requests arrive during one)

  BuiltPage operator()(const std::string& key) {
    ++entered;
    {
      std::unique_lock lock(gate_mutex);
      gate_changed.wait(lock, [this] { return !held; });
    }
    std::this_thread::sleep_for(cost);
    const int n = ++builds;
    return {key + " built " + std::to_string(n) + " at " + std::to_string(generation.load()), {}};
  }
  void hold(bool on) {
    {
      std::lock_guard lock(gate_mutex);
      held = on;
    }
    gate_changed.notify_all();
  }
};

// What a worker does with one request: the page at once, or suspend and wait for the resume.
struct FakeRequest {
  std::atomic<bool> resumed{false};
  std::shared_ptr<PageBuilder::Wait> wait;
  std::shared_ptr<const BuiltPage> page;
  PageBuilder::Outcome outcome{};

  void ask(PageBuilder& builder, const std::string& key) {
    outcome = builder.request(
        key, [this] { resumed = true; }, wait, page);
    if (outcome == PageBuilder::Outcome::pending) PageBuilder::suspended(*wait);
  }
  std::shared_ptr<const BuiltPage> take() {
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (!resumed && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    REQUIRE(resumed);
    return PageBuilder::finish(*wait);
  }
};
}  // namespace

TEST_CASE("a page is built once per generation, however many requests wait for it",
          "[page_builder][concurrency]") {
  CountingBuild build;
  build.hold(true);
  PageBuilder builder([&](const std::string& key) { return build(key); }, [&] { return build.generation.load(); });
  std::vector<std::unique_ptr<FakeRequest>> requests;
  for (int i = 0; i < 50; ++i) {
    requests.push_back(std::make_unique<FakeRequest>());
    requests.back()->ask(builder, "status_json 0");
    CHECK(requests.back()->outcome == PageBuilder::Outcome::pending);
  }
  build.hold(false);
  for (auto& r : requests) {
    const auto page = r->take();
    REQUIRE(page != nullptr);
    CHECK(page->body == "status_json 0 built 1 at 1");
  }
  CHECK(build.builds.load() == 1);
  // The same generation: ready at once, no build.
  FakeRequest again;
  again.ask(builder, "status_json 0");
  REQUIRE(again.outcome == PageBuilder::Outcome::ready);
  CHECK(again.page->body == "status_json 0 built 1 at 1");
  // A new generation: built again; another key is another page.
  ++build.generation;
  FakeRequest fresh, other;
  fresh.ask(builder, "status_json 0");
  other.ask(builder, "status_page 10");
  CHECK(fresh.outcome == PageBuilder::Outcome::pending);
  CHECK(fresh.take()->body == "status_json 0 built 2 at 2");
  CHECK(other.take()->body.rfind("status_page 10 built", 0) == 0);
  CHECK(builder.builds() == 3);
}

TEST_CASE("a request that arrives during a build of an older generation waits for the next build",
          "[page_builder][concurrency]") {
  CountingBuild build;
  build.hold(true);
  PageBuilder builder([&](const std::string& key) { return build(key); }, [&] { return build.generation.load(); });
  FakeRequest first;
  first.ask(builder, "baseline 0");
  // The build of generation 1 has begun (held there); then the state changes and a second
  // request comes.
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (build.entered.load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  REQUIRE(build.entered.load() == 1);
  ++build.generation;
  FakeRequest second;
  second.ask(builder, "baseline 0");
  REQUIRE(second.outcome == PageBuilder::Outcome::pending);
  build.hold(false);
  CHECK(first.take()->body == "baseline 0 built 1 at 2");   // generation 1's build, finished after the change
  CHECK(second.take()->body == "baseline 0 built 2 at 2");  // never the page of the generation before it
  CHECK(build.builds.load() == 2);
}

TEST_CASE("the page builder bounds its waiting requests and answers them all when it stops",
          "[page_builder][concurrency]") {
  CountingBuild build;
  build.hold(true);
  auto builder = std::make_unique<PageBuilder>([&](const std::string& key) { return build(key); },
                                               [&] { return build.generation.load(); });
  std::vector<std::unique_ptr<FakeRequest>> requests;
  for (std::size_t i = 0; i < kPageWaiters; ++i) {
    requests.push_back(std::make_unique<FakeRequest>());
    requests.back()->ask(*builder, "status_page " + std::to_string(i % 3));
    REQUIRE(requests.back()->outcome == PageBuilder::Outcome::pending);
  }
  FakeRequest over;
  over.ask(*builder, "status_json 0");
  CHECK(over.outcome == PageBuilder::Outcome::busy);
  std::thread release([&] {
    std::this_thread::sleep_for(50ms);
    build.hold(false);  // the build in progress ends; stop() joins after it
  });
  builder->stop();
  release.join();
  // Every suspended request was resumed before stop() returned: with the page, if the build in
  // progress ended first, else with none (answered 503).
  for (auto& r : requests) {
    REQUIRE(r->resumed);
    if (const auto page = PageBuilder::finish(*r->wait)) CHECK(page->body.rfind("status_page ", 0) == 0);
  }
  FakeRequest late;
  late.ask(*builder, "status_json 0");
  CHECK(late.outcome == PageBuilder::Outcome::unavailable);
}

TEST_CASE("a page whose build throws is an error for its waiters and is not kept", "[page_builder][concurrency]") {
  std::atomic<int> calls{0};
  PageBuilder builder(
      [&](const std::string&) -> BuiltPage {
        ++calls;
        throw std::runtime_error("no samplers");
      },
      [] { return std::uint64_t{1}; });
  FakeRequest r;
  r.ask(builder, "status_json 0");
  REQUIRE(r.outcome == PageBuilder::Outcome::pending);
  CHECK(r.take()->error == "no samplers");
  FakeRequest again;
  again.ask(builder, "status_json 0");
  CHECK(again.outcome == PageBuilder::Outcome::pending);  // not served from a failed build
  CHECK(again.take()->error == "no samplers");
  CHECK(calls.load() == 2);
}

TEST_CASE("page keys name each route and refresh value; an unknown key is refused", "[page_builder]") {
  CHECK(page_key(Route::status_page, 10) == "status_page 10");
  CHECK(page_key(Route::status_json, 0) == "status_json 0");
  CHECK(page_key(Route::baseline, 0) == "baseline 0");
  CHECK_THROWS_AS(page_key(Route::metrics, 0), std::invalid_argument);
  Collector collector(HostReader(), this_build());
  CHECK_THROWS_AS(build_page(collector, "/metrics", "nothing 0"), std::invalid_argument);
  CHECK_THROWS_AS(build_page(collector, "/metrics", "status_json x"), std::invalid_argument);
  CHECK(build_page(collector, "/metrics", "status_json 0").body.find("\"probes\"") != std::string::npos);
}
