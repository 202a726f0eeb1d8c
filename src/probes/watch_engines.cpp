// SPDX-License-Identifier: Apache-2.0
// The watch probe's engines (probes/watch_probe.h): which CPUs it watches (`watch.cpus: auto`
// followed), the counts engine and the kernel engine its method asks for, opened and published to
// the loops probe (ProbeContext::watch_engine), and each run's readings of them.
#include <unistd.h>

#include <thread>

#include "host/cpu_list.h"
#include "host/isolation_sources.h"
#include "measure/clock_ns.h"
#include "probes/watch_probe.h"

namespace jitterd {
namespace {

double monotonic_seconds() { return static_cast<double>(clock_ns(CLOCK_MONOTONIC)) * 1e-9; }

}  // namespace

std::string WatchProbe::follow_auto_cpus(const ProbeContext& context) {
  const auto now = std::chrono::steady_clock::now();
  if (!watched_) {
    watched_ = context.watched;  // the sampling plan's choice, made at start or reload
    resolved_at_ = now;
    return "";
  }
  if (!settings_.cpus_automatic || now - resolved_at_ < kAutoWatchFollowPeriod) return "";
  resolved_at_ = now;
  std::vector<int> cpus = auto_watch_cpus(context.host, context.sampled);
  // Never a CPU jitterd's own threads run on: those stay as the plan chose until a reload.
  const std::vector<int> housekeeping = cpus_intersection(cpus, sorted_cpus(context.housekeeping));
  cpus = cpus_minus(cpus, housekeeping);
  if (cpus == *watched_) return "";
  std::string line = "watch: auto: the isolated cpus changed: watching " + describe_cpu_list(cpus) + " (was " +
                     describe_cpu_list(*watched_) + ")";
  if (!housekeeping.empty())
    line += "; cpus " + format_cpu_list(housekeeping) +
            " are isolated now but host jitterd's own threads, so are not watched until a reload (SIGHUP)";
  watched_ = std::move(cpus);
  return line;
}

WatchProbe::~WatchProbe() {
  if (published_) published_->publish(nullptr);
}

void WatchProbe::open_engines(const ProbeContext& context) {
  if (published_) published_->publish(nullptr);
  published_ = context.watch_engine;
  open_kernel_engine(context);
  // For the loops probe: the trace engine shared, the BPF engine's owner kept alive with it.
  if (published_ && trace_)
    published_->publish(trace_);
  else if (published_ && kernel_)
    published_->publish(std::shared_ptr<KernelWatch>(bpf_owner_, kernel_));
}

void WatchProbe::open_kernel_engine(const ProbeContext& context) {
  const std::vector<int>& watched = *watched_;
  engine_ = std::make_unique<CountsEngine>(settings_.application, watched);
  kernel_ = nullptr;
  trace_.reset();
  previous_bpf_.reset();
  history_ = {};
  top_ = WatchTop(static_cast<std::uint64_t>(settings_.window.count()));
  windows_.clear();
  stolen_.clear();
  method_ = "counts";
  if (settings_.method == WatchMethod::counts) {
    reason_ = "as configured";
    return;
  }
  if (watched.empty()) {
    reason_ = "no CPU is watched";
    return;
  }
  if (settings_.method == WatchMethod::tracepoints) {
    const TraceWatch::Options options{watched, static_cast<std::uint64_t>(settings_.outlier_threshold.count()),
                                      static_cast<int>(::getpid()), kTraceWatchRingBytes};
    trace_ = TraceWatch::open(context.host, options, reason_);
    if (trace_) {
      kernel_ = trace_.get();
      method_ = "tracepoints";
      reason_ = "as configured";
    }
    return;
  }
  // The context's one engine, shared with the attribution probe (watch/shared_bpf_watch.h).
  // `auto` does not go on to tracepoints where it fails: their rings interrupt the watched CPU.
  bpf_owner_ = context.bpf;
  BpfWatch* bpf = bpf_owner_ ? bpf_owner_->get(context.sampler_thread_of) : nullptr;
  if (bpf && bpf->cpus() != watched) {
    // watch.cpus: auto followed the isolated CPUs to a new set; the program's CPUs are fixed
    // when it loads, and a reload makes a new plan, context and program.
    reason_ = "the BPF program watches cpus " + describe_cpu_list(bpf->cpus()) +
              ", chosen when it loaded; the isolated cpus changed since: a reload (SIGHUP) loads it for the new "
              "ones";
  } else if (bpf) {
    kernel_ = bpf;
    method_ = "bpf";
    reason_ = settings_.method == WatchMethod::bpf ? "as configured" : "auto: the BPF program loaded";
  } else {
    reason_ = bpf_owner_ ? bpf_owner_->why_not() : "no BPF engine in this context";
  }
}

WatchReading WatchProbe::take_reading(ProbeContext& context) {
  if (!engine_ || engine_->cpus() != *watched_) {
    open_engines(context);
    const WatchReading first = engine_->read(context.host, monotonic_seconds());
    previous_ = first.cpus;  // the baseline of the first window
    read_bpf(first);
    const auto until = std::chrono::steady_clock::now() + settings_.interval;
    while (std::chrono::steady_clock::now() < until) {
      context.check_cancelled();
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(std::chrono::milliseconds(100), settings_.interval));
    }
  }
  return engine_->read(context.host, monotonic_seconds());
}

std::optional<PairedReading> WatchProbe::read_bpf(const WatchReading& reading) {
  if (!kernel_) return std::nullopt;
  std::vector<int> tids;
  for (const WatchedThread& t : reading.threads) tids.push_back(t.thread.tid);
  kernel_->set_application(tids);
  PairedReading now = kernel_->read();
  history_.add(now);
  if (!previous_bpf_) previous_bpf_ = now;  // the first reading: the baseline of the first window
  return now;
}

}  // namespace jitterd
