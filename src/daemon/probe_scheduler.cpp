// SPDX-License-Identifier: Apache-2.0
#include "daemon/probe_scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "probes/probe_registry.h"

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
                               std::chrono::nanoseconds first_delay, std::shared_ptr<ProbeStateLog> states,
                               bool separate_readers)
    : probes_(std::move(probes)),
      first_delay_(first_delay),
      states_(states ? std::move(states) : std::make_shared<ProbeStateLog>()) {
  context.cancel = cancel_;
  auto readers = std::make_unique<Lane>();
  auto active = std::make_unique<Lane>();
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    statuses_.push_back(std::make_shared<const ProbeStatus>(std::string(probes_[i]->name())));
    (separate_readers && is_reader(probes_[i]->name()) ? readers : active)->probes.push_back(i);
  }
  for (auto* lane : {&readers, &active}) {
    if ((*lane)->probes.empty()) continue;
    (*lane)->context = context;  // a copy per lane: no probe shares its context's struct
    lanes_.push_back(std::move(*lane));
  }
}

ProbeScheduler::~ProbeScheduler() {
  // A thread still inside a probe cannot be joined in time; it ends with the process.
  if (!stop()) {
    for (auto& lane : lanes_)
      if (lane->thread.joinable()) lane->thread.detach();
  }
}

void ProbeScheduler::start() {
  std::lock_guard lock(mutex_);
  if (started_ || stopping_) return;
  started_ = true;
  for (auto& lane : lanes_) {
    lane->thread = std::thread([this, raw = lane.get()] {
      loop(*raw);
      std::lock_guard ended(mutex_);
      raw->ended = true;
      wake_.notify_all();
    });
  }
}

bool ProbeScheduler::all_ended() const {
  return std::all_of(lanes_.begin(), lanes_.end(), [](const auto& lane) { return lane->ended; });
}

bool ProbeScheduler::stop(std::chrono::nanoseconds grace) {
  cancel_->store(true);
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  if (!started_) return true;
  if (!wake_.wait_for(lock, grace, [this] { return all_ended(); })) return false;
  lock.unlock();
  for (auto& lane : lanes_)
    if (lane->thread.joinable()) lane->thread.join();
  return true;
}

ProbeStatuses ProbeScheduler::statuses() const {
  std::lock_guard lock(mutex_);
  return statuses_;
}

void ProbeScheduler::loop(Lane& lane) {
  using clock = std::chrono::steady_clock;
  // Staggered first round: one probe after another, a moment after start-up.
  std::vector<clock::time_point> due(lane.probes.size(), clock::now() + first_delay_);
  for (;;) {
    const auto next = std::min_element(due.begin(), due.end());
    const std::size_t slot = static_cast<std::size_t>(next - due.begin());
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, *next, [this] { return stopping_; })) return;
    }
    const std::size_t index = lane.probes[slot];
    Probe& probe = *probes_[index];
    const auto started = clock::now();
    ProbeStatus status = run_probe(probe, lane.context);
    if (cancel_->load()) return;  // stopping: a cut-short run is neither a result nor a failure
    due[slot] = started + std::chrono::duration_cast<clock::duration>(probe.interval());
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
  if (on_store_) on_store_();
}

}  // namespace jitterd
