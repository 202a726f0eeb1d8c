// SPDX-License-Identifier: Apache-2.0
#include "daemon/probe_scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace jitterd {

bool ProbeStateLog::log_if_changed(const std::string& probe, const std::string& subject, const ProbeState& state) {
  std::lock_guard lock(mutex_);
  const auto [it, inserted] = last_.try_emplace({probe, subject}, state);
  if (!inserted) {
    if (it->second == state) return false;
    it->second = state;
  }
  spdlog::log(state.warning ? spdlog::level::warn : spdlog::level::info, "probe {}: {}: {}", probe, subject,
              state.line);
  return true;
}

ProbeScheduler::ProbeScheduler(std::vector<std::unique_ptr<Probe>> probes, ProbeContext context,
                               std::chrono::nanoseconds first_delay, std::shared_ptr<ProbeStateLog> states)
    : probes_(std::move(probes)),
      context_(std::move(context)),
      first_delay_(first_delay),
      states_(states ? std::move(states) : std::make_shared<ProbeStateLog>()) {
  context_.cancel = cancel_;
  for (const auto& p : probes_) statuses_.push_back(std::make_shared<const ProbeStatus>(std::string(p->name())));
}

ProbeScheduler::~ProbeScheduler() {
  // A thread still inside a probe cannot be joined in time; it ends with the process.
  if (!stop() && thread_.joinable()) thread_.detach();
}

void ProbeScheduler::start() {
  if (probes_.empty()) return;
  thread_ = std::thread([this] {
    loop();
    std::lock_guard lock(mutex_);
    loop_ended_ = true;
    wake_.notify_all();
  });
}

bool ProbeScheduler::stop(std::chrono::nanoseconds grace) {
  cancel_->store(true);
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  if (!thread_.joinable()) return true;
  if (!wake_.wait_for(lock, grace, [this] { return loop_ended_; })) return false;
  lock.unlock();
  thread_.join();
  return true;
}

ProbeStatuses ProbeScheduler::statuses() const {
  std::lock_guard lock(mutex_);
  return statuses_;
}

void ProbeScheduler::loop() {
  using clock = std::chrono::steady_clock;
  // Staggered first round: one probe after another, a moment after start-up.
  std::vector<clock::time_point> due(probes_.size(), clock::now() + first_delay_);
  for (;;) {
    const auto next = std::min_element(due.begin(), due.end());
    const std::size_t index = static_cast<std::size_t>(next - due.begin());
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, *next, [this] { return stopping_; })) return;
    }
    Probe& probe = *probes_[index];
    const auto started = clock::now();
    ProbeStatus status = run_probe(probe, context_);
    if (cancel_->load()) return;  // stopping: a cut-short run is neither a result nor a failure
    due[index] = started + std::chrono::duration_cast<clock::duration>(probe.interval());
    store(index, std::make_shared<const ProbeStatus>(std::move(status)));
    if (after_run_) after_run_();  // without the lock: the hook may ask for statuses()
  }
}

void ProbeScheduler::store(std::size_t index, std::shared_ptr<const ProbeStatus> snapshot) {
  std::lock_guard lock(mutex_);
  const ProbeStatus& kept = *statuses_[index];
  if (snapshot->success) {
    if (kept.ran && !kept.success) spdlog::info("probe {}: succeeds again", snapshot->name);
    for (const std::string& warning : snapshot->result.warnings)
      spdlog::warn("probe {}: {}", snapshot->name, warning);
    for (const auto& [subject, state] : snapshot->result.states)
      states_->log_if_changed(snapshot->name, subject, state);
  } else if (!kept.ran || kept.success || kept.error != snapshot->error) {
    // Log once per failing streak; keep the last good result's metrics out of the export.
    spdlog::warn("probe {}: failed: {}", snapshot->name, snapshot->error);
  }
  statuses_[index] = std::move(snapshot);
}

}  // namespace jitterd
