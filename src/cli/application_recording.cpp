// SPDX-License-Identifier: Apache-2.0
#include "cli/application_recording.h"

#include <fmt/format.h>
#include <unistd.h>

#include "host/text.h"
#include "measure/clock_ns.h"
#include "probes/loops_probe.h"
#include "probes/watch_probe.h"

namespace jitterd {
namespace {

double monotonic_seconds() { return static_cast<double>(clock_ns(CLOCK_MONOTONIC)) * 1e-9; }

}  // namespace

ApplicationRecording::ApplicationRecording(const ProbesSettings& settings, std::vector<int> watched,
                                           const HostReader& host)
    : host_(host),
      watch_settings_(settings.watch),
      loop_settings_(settings.loops),
      watched_cpus_(std::move(watched)) {
  if (watch_settings_.enabled && !watched_cpus_.empty()) {
    engine_ = std::make_unique<CountsEngine>(watch_settings_.application, watched_cpus_);
    method_ = kWatchMethodCounts;
    // As the watch probe chooses (probes/watch_probe.cpp open_engines): bpf where it loads,
    // tracepoints only when asked for.
    const WatchMethod asked = watch_settings_.method;
    const auto threshold_ns = static_cast<std::uint64_t>(watch_settings_.outlier_threshold.count());
    const int own = static_cast<int>(::getpid());
    std::string why_not;
    if (asked == WatchMethod::automatic || asked == WatchMethod::bpf) {
      kernel_ = BpfWatch::open({watched_cpus_, threshold_ns, own, {}}, why_not);
      method_reason_ =
          kernel_ ? (asked == WatchMethod::bpf ? "as configured" : "auto: the BPF program loaded") : why_not;
    } else if (asked == WatchMethod::tracepoints) {
      kernel_ = TraceWatch::open(host_, {watched_cpus_, threshold_ns, own}, why_not);
      method_reason_ = kernel_ ? "as configured" : why_not;
    } else {
      method_reason_ = "as configured";
    }
    if (kernel_) method_ = std::string(kernel_->method());
    if (!kernel_ && asked != WatchMethod::automatic && asked != WatchMethod::counts)
      warnings_.push_back(fmt::format("watch: the {} method did not open, watching by counts: {}",
                                      watch_method_name(asked), why_not));
    const WatchReading first = engine_->read(host_, monotonic_seconds());
    previous_counts_ = first.cpus;
    if (kernel_) {
      std::vector<int> tids;
      for (const WatchedThread& t : first.threads) tids.push_back(t.thread.tid);
      kernel_->set_application(tids);
      previous_bpf_ = kernel_->read();
    }
  }
  if (loop_settings_.enabled) {
    tracker_ = std::make_unique<LoopTracker>(
        LoopTrackerSettings{.directory = loop_settings_.directory,
                            .allowed_users = loop_allowed_users(loop_settings_.users, nullptr),
                            .stale_after = loop_settings_.stale_after,
                            .forget_after = loop_settings_.forget_after});
    read_loops();  // the readings the first sub-window counts from
  }
}

ApplicationRecording::~ApplicationRecording() = default;

void ApplicationRecording::read() {
  read_watch();
  read_loops();
}

void ApplicationRecording::read_watch() {
  if (!engine_) return;
  const WatchReading now = engine_->read(host_, monotonic_seconds());
  if (kernel_) {
    std::vector<int> tids;
    for (const WatchedThread& t : now.threads) tids.push_back(t.thread.tid);
    kernel_->set_application(tids);
    const PairedReading reading = kernel_->read();
    add_watch_windows(
        watched_,
        paired_windows(reading, previous_bpf_, now.window_seconds,
                       static_cast<double>(watch_settings_.outlier_threshold.count()), kTailThresholdsNs),
        method_, static_cast<double>(watch_settings_.outlier_threshold.count()));
    previous_bpf_ = reading;
  } else {
    add_watch_windows(watched_, counts_windows(now, previous_counts_, kTailThresholdsNs), kWatchMethodCounts, 0);
  }
  previous_counts_ = now.cpus;
}

void ApplicationRecording::read_loops() {
  if (!tracker_) return;
  tracker_->scan(host_, unix_seconds());
  for (std::string& event : tracker_->take_events()) warnings_.push_back(std::move(event));
  for (const auto& [file, state] : tracker_->loops()) {
    if (state.refused) continue;
    const LoopSegmentReading& r = state.reading;
    if (r.header.hertz == 0) continue;
    const auto [entry, added] = loops_.try_emplace(r.header.name);
    LoopRecord& record = entry->second;
    if (added) {
      record.file = file;
      record.first = record.previous = r.counts;
      record.first_heartbeat = r.heartbeat_tick;
      record.loop.name = r.header.name;
      record.loop.cpu = r.header.cpu;
      record.loop.counter_hertz = static_cast<double>(r.header.hertz);
      continue;
    }
    if (record.file != file) {
      if (!record.seen)
        warnings_.push_back(fmt::format("loop {}: also in {}, left out of the baseline (recorded from {})",
                                        printable(r.header.name), printable(file), printable(record.file)));
      record.seen = true;
      continue;
    }
    if (r.counts.sampled_ticks < record.previous.sampled_ticks) continue;  // the tracker refuses it next
    add_sub_window(record.loop, r.counts.minus(record.previous), record.loop.counter_hertz);
    set_totals(record.loop, r.counts.minus(record.first), record.loop.counter_hertz);
    set_limits(record.loop, r.floor_ticks, r.threshold_ticks, record.loop.counter_hertz);
    record.loop.max_ns = static_cast<double>(r.max_between(record.first_heartbeat, r.heartbeat_tick)) * 1e9 /
                         record.loop.counter_hertz;
    record.loop.error = state.up ? "" : state.message;
    record.previous = r.counts;
  }
}

std::vector<BaselineWatched> ApplicationRecording::watched() const {
  std::vector<BaselineWatched> out = watched_;
  for (BaselineWatched& w : out) set_watched_totals(w);
  return out;
}

std::vector<BaselineLoop> ApplicationRecording::loops() const {
  std::vector<BaselineLoop> out;
  for (const auto& [name, record] : loops_) out.push_back(record.loop);
  return out;
}

BaselineFields ApplicationRecording::configuration() const {
  BaselineFields fields;
  if (engine_) {
    fields.emplace_back("watch_method", fmt::format("{} ({})", method_, method_reason_));
    if (kernel_)
      fields.emplace_back("watch_outlier_threshold",
                          fmt::format("{}ns", watch_settings_.outlier_threshold.count()));
  }
  if (tracker_) fields.emplace_back("loops_directory", loop_settings_.directory);
  return fields;
}

std::vector<std::string> ApplicationRecording::take_warnings() { return std::exchange(warnings_, {}); }

}  // namespace jitterd
