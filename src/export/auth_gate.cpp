// SPDX-License-Identifier: Apache-2.0
#include "export/auth_gate.h"

#include <algorithm>

#include "export/settlement.h"

namespace jitterd {

// The verdict: pending until the first one is in (export/settlement.h).
class AuthGate::Check : public Settlement<AuthGate::Verdict> {
 public:
  Check() : Settlement<Verdict>(Verdict::pending) {}

  std::string address_;
  std::string digest_;
};

AuthGate::AuthGate(const std::map<std::string, std::string>& users, HashPool::Limits limits)
    : auth_(std::make_shared<const BasicAuth>(users)),
      failures_(kFailureAddresses, kFailuresPerAddress, kFailureMemory) {
  if (auth_->enabled()) pool_ = std::make_unique<HashPool>(limits, "web-auth");
}

AuthGate::~AuthGate() { stop(); }

AuthGate::Verdict AuthGate::begin(const std::optional<BasicCredentials>& credentials, const std::string& address,
                                  std::function<void()> resume, std::shared_ptr<Check>& check) {
  if (!auth_->enabled()) return Verdict::allowed;
  if (!credentials) return Verdict::denied;
  std::string digest = auth_->digest(credentials->user, credentials->password);
  if (auth_->verified(digest)) return Verdict::allowed;
  {
    std::lock_guard lock(mutex_);
    if (failures_.remembers(address, digest, FailureMemory::Clock::now())) return Verdict::denied;
    if (stopping_) return Verdict::unavailable;
  }
  auto pending = std::make_shared<Check>();
  pending->resume_ = std::move(resume);
  pending->address_ = address;
  pending->digest_ = std::move(digest);
  HashPool::Job job = [auth = auth_, pending, credentials = *credentials](bool expired) {
    pending->settle(expired                                               ? Verdict::busy
                    : auth->check(credentials.user, credentials.password) ? Verdict::allowed
                                                                          : Verdict::denied);
  };
  std::lock_guard lock(mutex_);
  if (stopping_) return Verdict::unavailable;
  // Registered before it is queued, so that nothing can throw once the job may run.
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [](const auto& w) { return w.expired(); }),
                 waiting_.end());
  waiting_.push_back(pending);
  if (pool_->submit(address, std::move(job)) != HashPool::Admission::accepted) {
    waiting_.pop_back();
    return Verdict::busy;
  }
  check = std::move(pending);
  return Verdict::pending;
}

AuthGate::Verdict AuthGate::known(const std::optional<BasicCredentials>& credentials) const {
  if (!auth_->enabled()) return Verdict::allowed;
  if (!credentials) return Verdict::denied;
  return auth_->verified(auth_->digest(credentials->user, credentials->password)) ? Verdict::allowed
                                                                                  : Verdict::denied;
}

void AuthGate::suspended(Check& check) { check.mark_suspended(); }

AuthGate::Verdict AuthGate::finish(const Check& check) {
  const Verdict verdict = check.value();
  if (verdict == Verdict::denied) {
    std::lock_guard lock(mutex_);
    failures_.add(check.address_, check.digest_, FailureMemory::Clock::now());
  }
  return verdict;
}

void AuthGate::stop() {
  std::vector<std::shared_ptr<Check>> waiting;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (const auto& weak : waiting_)
      if (auto check = weak.lock()) waiting.push_back(std::move(check));
    waiting_.clear();
  }
  if (pool_) pool_->stop();
  // Whichever settles a check first resumes its connection; wait for that call to return, so
  // that no resume can reach the server after this.
  for (const auto& check : waiting) {
    check->settle(Verdict::unavailable);
    check->wait_resumed();
  }
}

}  // namespace jitterd
