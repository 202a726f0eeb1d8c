// SPDX-License-Identifier: Apache-2.0
#include "probes/pacing_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "host/text.h"
#include "measure/pacer.h"

namespace jitterd {

namespace {
// A UDP socket pair on loopback: `sender` is connected to `receiver`, both non-blocking. The
// receiver is drained between runs; datagrams beyond its buffer are dropped by the kernel, which
// does not slow the sender down.
class LoopbackUdp {
 public:
  LoopbackUdp() {
    receiver_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sender_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (receiver_ < 0 || sender_ < 0 || bind(receiver_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(receiver_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        connect(sender_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int err = errno;
      close_all();
      throw std::runtime_error(std::string("cannot set up the loopback UDP socket pair: ") + std::strerror(err));
    }
  }
  ~LoopbackUdp() { close_all(); }
  LoopbackUdp(const LoopbackUdp&) = delete;
  LoopbackUdp& operator=(const LoopbackUdp&) = delete;

  void send() const {
    const char byte = 0;
    (void)::send(sender_, &byte, 1, 0);
  }
  void drain() const {
    char buffer[64];
    while (recv(receiver_, buffer, sizeof buffer, 0) > 0) {
    }
  }

 private:
  void close_all() {
    if (receiver_ >= 0) close(receiver_);
    if (sender_ >= 0) close(sender_);
  }
  int receiver_ = -1;
  int sender_ = -1;
};

int rate_decimals(double rate) { return rate == static_cast<double>(static_cast<long long>(rate)) ? 0 : 3; }
std::string rate_label(double rate) { return decimal_text(rate, rate_decimals(rate)); }

// One pacer at one rate: starts a short lead after now so the first slot is not already late.
template <typename Now, typename Send>
PacingResult pace(Now&& now, Send&& send, double units_per_second, double rate,
                  std::chrono::nanoseconds duration) {
  const auto count = static_cast<std::uint64_t>(rate * std::chrono::duration<double>(duration).count());
  const PacingSlots slots(now() + static_cast<std::uint64_t>(units_per_second * 1e-4), units_per_second, rate);
  return run_pacer(now, send, slots, std::max<std::uint64_t>(count, 2));
}
}  // namespace

const std::vector<double>& pacing_lateness_bounds() {
  static const std::vector<double> bounds = {1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2};
  return bounds;
}

std::vector<ProbeMetric> pacing_metrics(const std::vector<PacingRun>& runs, double unthrottled_counter,
                                        double unthrottled_clock) {
  std::vector<ProbeMetric> out;
  for (const PacingRun& r : runs) {
    const TickScale scale(r.units_per_second);
    const ProbeLabels labels{{"method", r.method}, {"rate", rate_label(r.rate)}};
    out.push_back(gauge("jitterd_pacing_achieved_ratio", "Achieved send rate divided by the target rate.", labels,
                        r.result.ratio));
    out.push_back(gauge("jitterd_pacing_max_lateness_seconds", "Largest lateness of one send behind its slot.",
                        labels, scale.to_seconds(r.result.max_lateness)));
    // Sum of bucket midpoints: the histogram knows each lateness only to its bucket.
    const double lateness_sum =
        r.result.lateness.approximate_mean() * static_cast<double>(r.result.lateness.total()) / r.units_per_second;
    out.push_back(histogram_seconds("jitterd_pacing_lateness_seconds",
                                    "Lateness of each send behind its scheduled slot (sum from bucket midpoints).",
                                    labels, r.result.lateness, scale, pacing_lateness_bounds(), lateness_sum));
  }
  for (const auto& [method, rate] :
       {std::pair{"counter", unthrottled_counter}, {"clock_gettime", unthrottled_clock}}) {
    out.push_back(gauge("jitterd_pacing_unthrottled_sends_per_second",
                        "Sends per second back to back, without pacing.", {{"method", method}}, rate));
  }
  return out;
}

ProbeResult PacingProbe::run(ProbeContext& context) {
  const int cpu = settings_.cpu.value_or(context.housekeeping.front());
  std::optional<LoopbackUdp> udp;
  if (settings_.send == PacingSend::udp) udp.emplace();
  const auto send = [&] {
    if (udp) udp->send();
  };
  const double hz = context.frequency.hertz;
  std::vector<PacingRun> runs;
  double unthrottled_counter = 0, unthrottled_clock = 0;
  // One borrow of the CPU per step (a rate, or an unthrottled run), never the whole run: a
  // sampled CPU's sampler resumes between steps, and no step outlasts `duration`.
  const auto step = [&](const std::function<void()>& work) {
    context.check_cancelled();
    context.run_on_cpu(cpu, [&] {
      if (udp) udp->drain();
      work();
    });
  };
  dispatch_tick_method(context.method, [&]<TickMethod M>() {
    const auto ticks = [] { return read_ticks<M>(); };
    for (double rate : settings_.rates) {
      step([&] { runs.push_back({"counter", rate, pace(ticks, send, hz, rate, settings_.duration), hz}); });
    }
    step([&] { unthrottled_counter = unthrottled_rate(ticks, send, static_cast<std::uint64_t>(hz * 0.1), hz); });
  });
  for (double rate : settings_.rates) {
    step([&] {
      runs.push_back({"clock_gettime", rate, pace(monotonic_ns, send, 1e9, rate, settings_.duration), 1e9});
    });
  }
  step([&] { unthrottled_clock = unthrottled_rate(monotonic_ns, send, 100'000'000, 1e9); });
  if (udp) udp->drain();

  ProbeResult result;
  ProbeTable table{
      "pacing on cpu " + std::to_string(cpu) + ", " + (udp ? "UDP datagram to loopback" : "no-op") +
          " per send, " + decimal_text(std::chrono::duration<double>(settings_.duration).count(), 3) +
          " s per rate",
      {"method", "target_per_s", "achieved_per_s", "ratio", "p50_late_ns", "p99_late_ns", "max_late_ns"},
      {}};
  result.metrics = pacing_metrics(runs, unthrottled_counter, unthrottled_clock);
  for (const PacingRun& r : runs) {
    const TickScale scale(r.units_per_second);
    result.samples.push_back({{{"method", r.method}, {"target_per_s", rate_label(r.rate)}},
                              {{"p50_late_ns", 0.5}, {"p99_late_ns", 0.99}},
                              1e9 / r.units_per_second,
                              grouped_values(r.result.lateness)});
    table.rows.push_back({r.method, Cell(r.rate, rate_decimals(r.rate)), Cell(r.result.achieved_per_second, 1),
                          Cell(r.result.ratio, 6),
                          Cell(scale.to_seconds(r.result.lateness.quantile(0.5)) * 1e9, 0),
                          Cell(scale.to_seconds(r.result.lateness.quantile(0.99)) * 1e9, 0),
                          Cell(scale.to_seconds(r.result.max_lateness) * 1e9, 0)});
  }
  table.rows.push_back({"unthrottled", Cell(), Cell(unthrottled_counter, 0), Cell(), Cell(), Cell(), Cell()});
  result.tables.push_back(std::move(table));
  result.notes.push_back("lateness percentiles are the upper edge of a histogram bucket (<= 6.25% high)");
  return result;
}

}  // namespace jitterd
