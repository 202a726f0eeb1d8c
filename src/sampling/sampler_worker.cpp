// SPDX-License-Identifier: Apache-2.0
#include "sampling/sampler_worker.h"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "host/affinity.h"
#include "host/text.h"
#include "measure/clock_ns.h"

namespace jitterd {

namespace {
// Window-max slots: a quarter second each, enough of them to cover the window with margin.
constexpr std::chrono::milliseconds kMaxSlot{250};

// Why a task is refused a sampler's CPU while the sampler is off it: it would run on another CPU.
constexpr const char* kOffCpuRefusal = "the CPU is offline or the sampler cannot pin itself to it";

// What a refused task's future holds: "cpu 3: " and why.
std::exception_ptr task_refusal(int cpu, const char* why) {
  return std::make_exception_ptr(std::runtime_error("cpu " + std::to_string(cpu) + ": " + why));
}
}  // namespace

double SamplerSettings::duty_cycle() const {
  if (continuous) return 1.0;
  return std::chrono::duration<double>(spin) / std::chrono::duration<double>(period);
}

SamplerWorker::SamplerWorker(SamplerSettings settings) : settings_(std::move(settings)) {}

SamplerWorker::~SamplerWorker() { stop(); }

void SamplerWorker::start() {
  thread_ = std::thread([this] { thread_main(); });
}

void SamplerWorker::wait_ready() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return ready_; });
}

void SamplerWorker::release() {
  {
    std::lock_guard lock(mutex_);
    released_ = true;
  }
  changed_.notify_all();
}

void SamplerWorker::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  interrupt_span_.store(true, std::memory_order_relaxed);
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool SamplerWorker::alive(std::uint64_t now_tick) const {
  if (!sampling() || !shared_ || off_cpu()) return false;
  const std::uint64_t borrowed = task_started_tick_.load(std::memory_order_acquire);
  if (borrowed != 0) {
    const auto limit = static_cast<std::uint64_t>(std::chrono::nanoseconds(kMaxSamplerBorrow).count());
    return now_tick < borrowed || now_tick - borrowed <= settings_.scale.from_ns(limit);
  }
  return heartbeat_recent(now_tick);
}

bool SamplerWorker::responsive(std::uint64_t now_tick) const {
  if (sampling() && shared_ && off_cpu()) return heartbeat_recent(now_tick);
  return alive(now_tick);
}

bool SamplerWorker::heartbeat_recent(std::uint64_t now_tick) const {
  const std::uint64_t last = shared_->heartbeat_tick.load(std::memory_order_relaxed);
  if (last == 0) return false;
  // A burst sampler sleeps up to `period` between checks; one off its CPU retries every kCpuRetry.
  const auto allowed =
      std::chrono::seconds(1) + (settings_.continuous ? std::chrono::nanoseconds(0) : settings_.period);
  const std::uint64_t allowed_ticks = settings_.scale.from_ns(static_cast<std::uint64_t>(allowed.count()));
  // The heartbeat may be a hair ahead of now_tick when read on another CPU: that is progress.
  return now_tick < last || now_tick - last <= allowed_ticks;
}

std::future<void> SamplerWorker::run_paused(std::function<void()> task) {
  Task queued{std::move(task), {}};
  auto future = queued.done.get_future();
  {
    std::lock_guard lock(mutex_);
    // A thread that has left its loop runs no more tasks, and one off its CPU would run them on
    // another CPU: fail now instead of never, or wrongly.
    const char* refusal = finished_ ? "the sampler thread is not running" : off_cpu() ? kOffCpuRefusal : nullptr;
    if (refusal != nullptr) {
      queued.done.set_exception(task_refusal(settings_.cpu, refusal));
      return future;
    }
    tasks_.push_back(std::move(queued));
  }
  interrupt_span_.store(true, std::memory_order_relaxed);
  changed_.notify_all();
  return future;
}

void SamplerWorker::thread_main() {
  const bool ok = prepare();
  if (ok) {
    warm_up();
    // The warm-up is progress: alive() holds from the start barrier on, not only after the
    // first 1024 gaps (the daemon's first watchdog check comes right after the release).
    publish(shared_->heartbeat_tick, read_ticks(settings_.method));
  }
  {
    std::unique_lock lock(mutex_);
    ready_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return released_ || stopping_; });
  }
  if (ok) sample();
  // Closed here, on the CPU while the thread still runs there: closing a CPU-bound event from
  // elsewhere is an IPI to it. (A thread moved off its CPU closes it remotely, once.)
  smi_ = CpuCounter{};
  cycles_ = CycleCounters{};
  exited_.store(true);
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  // Tasks queued before the loop ended still complete (with sampling already stopped), unless
  // the thread is off its CPU.
  if (off_cpu())
    refuse_pending_tasks();
  else
    run_pending_tasks();
}

// Pin first, then allocate: the memory is first touched, and so placed, on the sampled CPU.
bool SamplerWorker::prepare() {
  startup_.tid = gettid();
  if (const int err = try_restrict_current_thread({settings_.cpu})) {
    startup_.error =
        "cpu " + std::to_string(settings_.cpu) + ": cannot pin the sampler thread: " + errno_text(err);
    return false;
  }
  startup_.pinned = true;
  if (settings_.realtime_priority > 0) {
    sched_param param{};
    param.sched_priority = settings_.realtime_priority;
    if (sched_setscheduler(0, SCHED_FIFO, &param) == 0) {
      startup_.realtime_priority = settings_.realtime_priority;
    } else {
      startup_.warnings.push_back("cpu " + std::to_string(settings_.cpu) + ": SCHED_FIFO priority " +
                                  std::to_string(settings_.realtime_priority) + " refused (" + errno_text(errno) +
                                  "); sampling at normal priority");
    }
  }
  const auto slot_ticks = settings_.scale.from_ns(std::chrono::nanoseconds(kMaxSlot).count());
  const auto slot_count = static_cast<std::size_t>(settings_.window / kMaxSlot) + 8;
  shared_ = std::make_unique<SamplerShared>(settings_.ring_capacity, slot_ticks, slot_count);
  if (settings_.lock_memory) {
    // The sampler's own pages only: mlockall would pin the whole daemon and can starve it of
    // address space under a small RLIMIT_MEMLOCK.
    int err = 0;
    const std::pair<const void*, std::size_t> regions[] = {
        {shared_.get(), sizeof(SamplerShared)},
        {shared_->interruptions.storage(), shared_->interruptions.storage_bytes()},
        {shared_->window_max.storage(), shared_->window_max.storage_bytes()},
    };
    for (const auto& [address, bytes] : regions) {
      if (err == 0 && mlock(address, bytes) != 0) err = errno;
    }
    if (err == 0) {
      startup_.memory_locked = true;
    } else {
      startup_.warnings.push_back("cpu " + std::to_string(settings_.cpu) + ": cannot lock sampler memory (" +
                                  errno_text(err) + "); page faults may show up as gaps");
    }
  }
  open_counters();
  return true;
}

// On the sampled CPU (sched_setaffinity has moved the thread before it returned), so the kernel
// installs the event locally rather than by a function-call IPI.
void SamplerWorker::open_counters() {
  const bool frequency = settings_.aperf_event && settings_.mperf_event;
  if (!settings_.smi_event && !frequency) return;
  if (sched_getcpu() != settings_.cpu) {
    const std::string why = "the sampler thread was not on cpu " + std::to_string(settings_.cpu) + " to open it";
    if (settings_.smi_event) startup_.smi_error = why;
    if (frequency) startup_.frequency_error = why;
    return;
  }
  if (settings_.smi_event) smi_ = CpuCounter::open(*settings_.smi_event, settings_.cpu, &startup_.smi_error);
  if (frequency)
    cycles_ = open_cycle_counters(*settings_.aperf_event, *settings_.mperf_event, settings_.cpu,
                                  &startup_.frequency_error);
  read_counters(std::nullopt);
}

// Between spans, on the sampled CPU only: a read from anywhere else would interrupt it.
std::optional<std::uint64_t> SamplerWorker::read_smis() const {
  if (!smi_.is_open() || sched_getcpu() != settings_.cpu) return std::nullopt;
  return smi_.read();
}

// After a span (or at the open, with no span): the count, and the SMIs since `span_start`, the
// read that began the span, as the span's.
void SamplerWorker::read_counters(std::optional<std::uint64_t> span_start) {
  if (!shared_) return;
  if (cycles_.is_open() && sched_getcpu() == settings_.cpu)
    if (const std::optional<CycleCounts> cycles = cycles_.read())
      publish_cycles(*shared_, cycles->actual, cycles->reference);
  last_smis_ = read_smis();
  if (!last_smis_) return;
  if (span_start && *last_smis_ >= *span_start) smis_in_spans_ += *last_smis_ - *span_start;
  publish(shared_->smi_in_spans, smis_in_spans_);
  publish(shared_->smi_count, *last_smis_);
  shared_->smi_counted.store(true, std::memory_order_release);
}

void SamplerWorker::warm_up() {
  SamplerShared scratch(16, shared_->window_max.slot_ticks(), 4);
  SamplerWriterState state;
  const std::uint64_t end =
      read_ticks(settings_.method) + settings_.scale.from_ns(static_cast<std::uint64_t>(settings_.warmup.count()));
  // A warm-up cut short by a migration gives a floor from fewer gaps; the first span after it
  // finds the thread off its CPU and waits.
  dispatch_tick_method(settings_.method, [&]<TickMethod M>() {
    static_cast<void>(run_sampler_span<M>(scratch, state, std::numeric_limits<std::uint64_t>::max(), end,
                                          interrupt_span_, settings_.cpu));
  });
  startup_.floor_ticks = state.min_gap == std::numeric_limits<std::uint64_t>::max() ? 0 : state.min_gap;
  if (settings_.threshold) {
    startup_.threshold_ticks = settings_.scale.from_ns(static_cast<std::uint64_t>(settings_.threshold->count()));
  } else {
    startup_.threshold_ticks = std::max<std::uint64_t>(1, startup_.floor_ticks) * settings_.floor_multiple;
  }
}

bool SamplerWorker::run_span(std::uint64_t end_tick) {
  bool stayed = true;
  dispatch_tick_method(settings_.method, [&]<TickMethod M>() {
    stayed =
        run_sampler_span<M>(*shared_, writer_, startup_.threshold_ticks, end_tick, interrupt_span_, settings_.cpu);
  });
  return stayed;
}

// The thread is off its CPU: the CPU went offline (the kernel then lets the thread run anywhere)
// or its affinity was changed. No sampling until it is pinned back on its CPU; meanwhile probes
// are refused the CPU and the heartbeat goes on, so the watchdog sees a waiting sampler, not a
// stalled one. Returns false when asked to stop.
bool SamplerWorker::wait_for_cpu() {
  off_cpu_since_.store(unix_seconds(), std::memory_order_relaxed);
  pin_error_.store(0, std::memory_order_relaxed);
  off_cpu_.store(true, std::memory_order_relaxed);
  // Counted last, with release (cpu_losses() acquires): whoever sees this loss also sees the
  // sampler off its CPU, or back on it, never the count without the state.
  cpu_losses_.fetch_add(1, std::memory_order_release);
  for (;;) {
    refuse_pending_tasks();
    publish(shared_->heartbeat_tick, read_ticks(settings_.method));
    // sched_setaffinity moves the calling thread before it returns; the CPU check confirms it.
    const int pin_error = try_restrict_current_thread({settings_.cpu});
    pin_error_.store(pin_error, std::memory_order_relaxed);
    if (pin_error == 0 && sched_getcpu() == settings_.cpu) {
      off_cpu_.store(false, std::memory_order_relaxed);
      return true;
    }
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, kCpuRetry, [this] { return stopping_ || !tasks_.empty(); });
    if (stopping_) return false;
  }
}

void SamplerWorker::refuse_pending_tasks() {
  std::deque<Task> refused;
  {
    std::lock_guard lock(mutex_);
    refused.swap(tasks_);
  }
  for (Task& task : refused) task.done.set_exception(task_refusal(settings_.cpu, kOffCpuRefusal));
}

void SamplerWorker::run_pending_tasks() {
  for (;;) {
    Task task;
    {
      std::lock_guard lock(mutex_);
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    // The borrow is progress while it lasts (alive() bounds it); finishing it proves progress
    // too, so the heartbeat is fresh before the borrow mark goes.
    task_started_tick_.store(std::max<std::uint64_t>(1, read_ticks(settings_.method)), std::memory_order_relaxed);
    try {
      task.work();
      task.done.set_value();
    } catch (...) {
      task.done.set_exception(std::current_exception());
    }
    if (shared_) publish(shared_->heartbeat_tick, read_ticks(settings_.method));
    task_started_tick_.store(0, std::memory_order_release);  // publishes the heartbeat with it
  }
}

void SamplerWorker::sample() {
  using clock = std::chrono::steady_clock;
  const std::uint64_t spin_ticks = settings_.scale.from_ns(static_cast<std::uint64_t>(settings_.spin.count()));
  const std::uint64_t read_period_ticks =
      settings_.scale.from_ns(static_cast<std::uint64_t>(std::chrono::nanoseconds(kCounterReadPeriod).count()));
  auto next_burst = clock::now();
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      // Cleared under the lock that guards the queue, so a request made now is never lost.
      if (tasks_.empty()) interrupt_span_.store(false, std::memory_order_relaxed);
    }
    // A CPU may go offline while a burst sampler sleeps: check before a borrowed task runs.
    if (sched_getcpu() != settings_.cpu && !wait_for_cpu()) return;
    run_pending_tasks();
    // A continuous sampler's span starts where the last one's read left it; a burst's after a sleep.
    const std::optional<std::uint64_t> span_start = settings_.continuous ? last_smis_ : read_smis();
    const std::uint64_t now = read_ticks(settings_.method);
    const std::uint64_t end = !settings_.continuous ? now + spin_ticks
                              : counters_open()     ? now + read_period_ticks
                                                    : std::numeric_limits<std::uint64_t>::max();
    if (!run_span(end)) {
      last_smis_.reset();  // off its CPU: what came since is no span's
      if (!wait_for_cpu()) return;
      next_burst = clock::now();
      continue;
    }
    read_counters(span_start);
    if (settings_.continuous) continue;
    next_burst += std::chrono::duration_cast<clock::duration>(settings_.period);
    if (next_burst < clock::now()) next_burst = clock::now();  // a long task: don't burst twice
    std::unique_lock lock(mutex_);
    changed_.wait_until(lock, next_burst, [this] { return stopping_ || !tasks_.empty(); });
  }
}

}  // namespace jitterd
