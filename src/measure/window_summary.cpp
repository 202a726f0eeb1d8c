#include "measure/window_summary.h"

#include <algorithm>

namespace jitterd {

WindowSummary summarize(const HistogramSnapshot& snapshot, std::uint64_t max_ticks, const TickScale& scale) {
  WindowSummary s;
  s.samples = snapshot.total();
  if (s.samples == 0) return s;
  s.valid = true;
  s.max = scale.to_seconds(max_ticks);
  // A bucket's upper edge can exceed the true maximum; the maximum is exact, so cap by it.
  auto q = [&](double quantile) {
    std::uint64_t ticks = snapshot.quantile(quantile);
    if (max_ticks != 0) ticks = std::min(ticks, max_ticks);
    return scale.to_seconds(ticks);
  };
  s.p50 = q(0.5);
  s.p99 = q(0.99);
  s.p999 = q(0.999);
  s.p9999 = q(0.9999);
  return s;
}

}  // namespace jitterd
