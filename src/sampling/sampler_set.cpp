#include "sampling/sampler_set.h"

#include <algorithm>

#include "config/config.h"
#include "host/cpu_list.h"

namespace jitterd {

SamplerSet::SamplerSet(const std::vector<SamplerSettings>& settings) {
  for (const auto& s : settings) {
    workers_.push_back(std::make_unique<SamplerWorker>(s));
    windows_.emplace_back(s.scale.from_ns(static_cast<std::uint64_t>(s.window.count())));
  }
  summaries_.resize(workers_.size());
}

SamplerSet::~SamplerSet() { stop(); }

void SamplerSet::start() {
  for (auto& w : workers_) w->start();
  for (auto& w : workers_) w->wait_ready();
  for (auto& w : workers_) w->release();
}

void SamplerSet::stop() {
  for (auto& w : workers_) w->stop();
}

void SamplerSet::update_windows() {
  std::vector<WindowSummary> fresh(workers_.size());
  HistogramSnapshot snapshot;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const SamplerWorker& w = *workers_[i];
    if (!w.shared()) continue;
    const std::uint64_t now = read_ticks(w.settings().method);
    w.shared()->histogram.snapshot(snapshot);
    windows_[i].push(snapshot, now);
    const std::uint64_t from = windows_[i].start_tick();
    fresh[i] = summarize(windows_[i].window(), w.shared()->window_max.max_between(from, now), w.settings().scale);
    fresh[i].valid = fresh[i].valid && from != now;
    fresh[i].seconds = w.settings().scale.to_seconds(now - from);
  }
  std::lock_guard lock(summaries_mutex_);
  summaries_ = std::move(fresh);
}

WindowSummary SamplerSet::window(std::size_t index) const {
  std::lock_guard lock(summaries_mutex_);
  return summaries_[index];
}

bool SamplerSet::all_alive() const {
  for (const auto& w : workers_) {
    if (!w->startup().error.empty()) continue;  // never sampled: reported, not a stall
    if (!w->responsive(read_ticks(w->settings().method))) return false;
  }
  return true;
}

std::vector<int> SamplerSet::cpus() const {
  std::vector<int> out;
  for (const auto& w : workers_) out.push_back(w->settings().cpu);
  return out;
}

std::string SamplerSet::describe() const {
  std::string text = "sampling cpus " + format_cpu_list(cpus());
  if (workers_.empty()) return text;
  const SamplerSettings& s = workers_.front()->settings();
  if (s.continuous) return text + " (continuous)";
  return text + " (burst " + format_duration(s.spin) + " every " + format_duration(s.period) + ")";
}

}  // namespace jitterd
