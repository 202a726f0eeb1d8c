// SPDX-License-Identifier: Apache-2.0
// What a suspended request waits for, settled once: a password check's verdict
// (export/auth_gate.h) or a page (export/page_builder.h). The first settle() stores its value,
// waits until the web worker has suspended the connection (mark_suspended), then resumes it
// (`resume_`); any later one (a hash that finishes after stop()) does nothing. value() is the
// settled value, or the unsettled one given at construction.
// Thread-safety: settle from the hashing or building thread and from stop(), wait_resumed from
// stop(); mark_suspended and value from the web worker; `resume_` is set before it is shared.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>

namespace jitterd {

template <class T>
class Settlement {
 public:
  explicit Settlement(T unsettled = T()) : value_(std::move(unsettled)) {}

  void settle(T value) {
    {
      std::unique_lock lock(mutex_);
      if (settled_) return;
      settled_ = true;
      value_ = std::move(value);
      changed_.wait(lock, [this] { return suspended_; });
    }
    resume_();
    {
      std::lock_guard lock(mutex_);
      resumed_ = true;
    }
    changed_.notify_all();
  }

  // Returns once the first settle() has resumed the connection.
  void wait_resumed() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return resumed_; });
  }

  void mark_suspended() {
    {
      std::lock_guard lock(mutex_);
      suspended_ = true;
    }
    changed_.notify_all();
  }

  T value() const {
    std::lock_guard lock(mutex_);
    return value_;
  }

  std::function<void()> resume_;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool suspended_ = false;
  bool settled_ = false;
  bool resumed_ = false;
  T value_;
};

}  // namespace jitterd
