// SPDX-License-Identifier: Apache-2.0
#include "export/page_builder.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <exception>

#include "export/settlement.h"

namespace jitterd {

namespace {
constexpr int kBuilderNice = 10;
}  // namespace

// The page: the first one in, or null from stop() (export/settlement.h).
class PageBuilder::Wait : public Settlement<std::shared_ptr<const BuiltPage>> {};

PageBuilder::PageBuilder(std::function<BuiltPage(const std::string& key)> build,
                         std::function<std::uint64_t()> generation)
    : build_(std::move(build)), generation_(std::move(generation)) {
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "web-pages");
}

PageBuilder::~PageBuilder() { stop(); }

PageBuilder::Outcome PageBuilder::request(const std::string& key, std::function<void()> resume,
                                          std::shared_ptr<Wait>& wait, std::shared_ptr<const BuiltPage>& page) {
  const std::uint64_t now = generation_();
  std::lock_guard lock(mutex_);
  if (stopping_) return Outcome::unavailable;
  const auto cached = cache_.find(key);
  if (cached != cache_.end() && cached->second.generation >= now) {
    cached->second.last_served = ++served_;
    page = cached->second.page;
    return Outcome::ready;
  }
  if (waiters_ >= kPageWaiters) return Outcome::busy;
  auto pending = std::make_shared<Wait>();
  pending->resume_ = std::move(resume);
  std::vector<Waiting>& list = waiting_[key];
  if (list.empty()) queue_.push_back(key);
  list.push_back({now, pending});
  ++waiters_;
  wait = std::move(pending);
  work_.notify_one();
  return Outcome::pending;
}

void PageBuilder::suspended(Wait& wait) { wait.mark_suspended(); }

std::shared_ptr<const BuiltPage> PageBuilder::finish(const Wait& wait) { return wait.value(); }

std::uint64_t PageBuilder::builds() const {
  std::lock_guard lock(mutex_);
  return builds_;
}

// One key at a time, oldest first: build with the generation read before it (so a change during
// the build is built again for whoever needs it), keep it, resume the requests it satisfies.
void PageBuilder::run() {
  // Below the web workers' priority: while a page is built, a scrape's worker gets the CPU first.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kBuilderNice);
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::string key = queue_.front();
    queue_.pop_front();
    lock.unlock();
    const std::uint64_t generation = generation_();
    auto page = std::make_shared<BuiltPage>();
    try {
      *page = build_(key);
    } catch (const std::exception& e) {
      page->error = e.what();
    } catch (...) {
      page->error = "unknown exception";
    }
    lock.lock();
    ++builds_;
    std::vector<Waiting>& list = waiting_[key];
    std::vector<std::shared_ptr<Wait>> ready;
    std::erase_if(list, [&](Waiting& w) {
      if (w.generation > generation) return false;
      ready.push_back(std::move(w.wait));
      return true;
    });
    waiters_ -= ready.size();
    if (list.empty())
      waiting_.erase(key);
    else
      queue_.push_back(key);  // asked for after the build began: once more
    if (page->error.empty()) keep(key, generation, page);
    lock.unlock();
    for (const auto& w : ready) w->settle(page);
    lock.lock();
  }
}

void PageBuilder::keep(const std::string& key, std::uint64_t generation, std::shared_ptr<const BuiltPage> page) {
  Cached& slot = cache_[key];
  if (slot.page && slot.generation > generation) return;
  slot = {generation, std::move(page), ++served_};
  while (cache_.size() > kCachedPages) {
    const auto oldest = std::min_element(cache_.begin(), cache_.end(), [](const auto& a, const auto& b) {
      return a.second.last_served < b.second.last_served;
    });
    cache_.erase(oldest);
  }
}

void PageBuilder::stop() {
  std::vector<std::shared_ptr<Wait>> waiting;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [key, list] : waiting_)
      for (Waiting& w : list) waiting.push_back(std::move(w.wait));
    waiting_.clear();
    queue_.clear();
    waiters_ = 0;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (const auto& w : waiting) w->settle(nullptr);
}

}  // namespace jitterd
