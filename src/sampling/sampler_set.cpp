// SPDX-License-Identifier: Apache-2.0
#include "sampling/sampler_set.h"

#include <unistd.h>

#include <algorithm>

#include "config/config.h"
#include "host/cpu_list.h"
#include "measure/clock_ns.h"

namespace jitterd {

SamplerSet::SamplerSet(const std::vector<SamplerSettings>& settings, const HostReader& host)
    : own_tasks_(host.proc_dir(std::to_string(::getpid()) + "/task")) {
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

void advance_sampler_window(SamplerWindowState& state, const SamplerShared& shared,
                            const SamplerSettings& settings, std::uint64_t now, HistogramSnapshot& scratch,
                            WindowDetail& out) {
  shared.histogram.snapshot(scratch);
  state.counters.push_back({now, shared.sampled_ticks.load(std::memory_order_relaxed),
                            shared.interruption_count.load(std::memory_order_relaxed),
                            shared.interrupted_ticks.load(std::memory_order_relaxed)});
  state.window.push(scratch, now);
  const std::uint64_t from = state.window.start_tick();
  std::deque<WindowCounters>& points = state.counters;
  while (points.size() > 1 && points.front().tick < from) points.pop_front();
  out.gaps = state.window.window();
  out.summary = summarize(out.gaps, shared.window_max.max_between(from, now), settings.scale);
  out.summary.valid = out.summary.valid && from != now;
  out.summary.span_seconds = settings.scale.to_seconds(now - from);
  out.sampled_ticks = points.back().sampled_ticks - points.front().sampled_ticks;
  out.interruptions = points.back().interruptions - points.front().interruptions;
  out.interrupted_ticks = points.back().interrupted_ticks - points.front().interrupted_ticks;
}

bool reads_switches_at(std::size_t index, std::size_t count, std::uint64_t sequence, std::size_t per_update) {
  const std::size_t rounds = (count + per_update - 1) / per_update;
  return rounds <= 1 || index / per_update == sequence % rounds;
}

// The summaries are rewritten in place, under the lock readers take: no fresh 8 KB detail per
// sampler each second (8 MB a second at 1,024 CPUs). The threads' status files are read before
// the lock is taken, so a scrape never waits for them.
void SamplerSet::update_windows() {
  const double unix_now = unix_seconds();
  // This update's turn of the threads' context switches; the others keep their last reading.
  FileBuffer buffer;
  std::vector<std::pair<std::size_t, std::optional<ContextSwitches>>> switches;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (!reads_switches_at(i, workers_.size(), sequence_ + 1)) continue;
    const SamplerWorker& w = *workers_[i];
    switches.emplace_back(
        i, w.shared() ? read_thread_context_switches(own_tasks_, w.startup().tid, buffer) : std::nullopt);
  }
  std::lock_guard lock(summaries_mutex_);
  ++sequence_;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const SamplerWorker& w = *workers_[i];
    WindowDetail& detail = summaries_[i];
    const SamplerShared* shared = w.shared();
    if (!shared) {
      detail = WindowDetail{};
    } else {
      advance_sampler_window(windows_[i], *shared, w.settings(), read_ticks(w.settings().method), snapshot_,
                             detail);
    }
    detail.sequence = sequence_;
    detail.end_unix_seconds = unix_now;
  }
  for (auto& [i, read] : switches)
    if (workers_[i]->shared()) summaries_[i].context_switches = read;
}

WindowDetail SamplerSet::window_detail(std::size_t index) const {
  std::lock_guard lock(summaries_mutex_);
  return summaries_[index];
}

WindowParts SamplerSet::window_parts(std::size_t index) const {
  std::lock_guard lock(summaries_mutex_);
  WindowParts result{summaries_[index], {}};
  std::vector<WindowPart>& out = result.parts;
  const std::deque<WindowCounters>& points = windows_[index].counters;
  const auto at = [&](std::uint64_t tick) {
    return std::find_if(points.begin(), points.end(), [&](const WindowCounters& c) { return c.tick == tick; });
  };
  for (RollingWindow::Part& part : windows_[index].window.parts()) {
    const auto from = at(part.from_tick), to = at(part.to_tick);
    if (from == points.end() || to == points.end()) continue;  // not kept: the window moved past it
    out.push_back({{std::move(part.added), to->sampled_ticks - from->sampled_ticks,
                    to->interruptions - from->interruptions, to->interrupted_ticks - from->interrupted_ticks}});
  }
  return result;
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
  if (workers_.empty()) return "sampling no cpu";
  std::string text = "sampling cpus " + format_cpu_list(cpus());
  const SamplerSettings& s = workers_.front()->settings();
  if (s.continuous) return text + " (continuous)";
  return text + " (burst " + format_duration(s.spin) + " every " + format_duration(s.period) + ")";
}

}  // namespace jitterd
