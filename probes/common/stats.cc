#include "probes/common/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fabricctl::probes {

// perftest excludes this many of the largest latency samples (LAT_MEASURE_TAIL).
constexpr size_t kLatencyTail = 2;

BwPoint AverageBandwidth(uint64_t size_bytes, uint64_t messages, int64_t elapsed_ns) {
  BwPoint point;
  point.size_bytes = size_bytes;
  point.iterations = messages;
  if (elapsed_ns <= 0) return point;
  const double seconds = static_cast<double>(elapsed_ns) * 1e-9;
  point.bw_avg_gbps =
      static_cast<double>(size_bytes) * static_cast<double>(messages) * 8.0 / seconds / 1e9;
  point.msg_rate_mpps = static_cast<double>(messages) / seconds / 1e6;
  return point;
}

std::optional<double> PeakBandwidthGbps(uint64_t size_bytes, const std::vector<int64_t>& posted_ns,
                                        const std::vector<Completion>& completions) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < posted_ns.size(); ++i) {
    for (const Completion& c : completions) {
      if (c.last_message < i || c.last_message >= posted_ns.size()) continue;
      double per_message = static_cast<double>(c.time_ns - posted_ns[i]) /
                           static_cast<double>(c.last_message - i + 1);
      if (per_message > 0) best = std::min(best, per_message);
    }
  }
  if (!std::isfinite(best)) return std::nullopt;
  return static_cast<double>(size_bytes) * 8.0 / best;  // bits per ns = Gb/s
}

std::optional<LatPoint> LatencyStats(uint64_t size_bytes, std::vector<int64_t> rtt_ns,
                                     double rtt_factor) {
  if (rtt_ns.size() < kLatencyTail + 1 || rtt_factor <= 0) return std::nullopt;
  std::sort(rtt_ns.begin(), rtt_ns.end());
  const size_t m = rtt_ns.size() - kLatencyTail;
  auto us = [&](double ns) { return ns / 1e3 / rtt_factor; };
  LatPoint p;
  p.size_bytes = size_bytes;
  p.iterations = rtt_ns.size();
  p.t_min_us = us(static_cast<double>(rtt_ns[0]));
  p.t_max_us = us(static_cast<double>(rtt_ns[m]));
  p.t_typical_us =
      m % 2 == 1
          ? us(static_cast<double>(rtt_ns[m / 2]))
          : us((static_cast<double>(rtt_ns[m / 2 - 1]) + static_cast<double>(rtt_ns[m / 2])) / 2.0);
  double sum = 0;
  for (size_t i = 0; i < m; ++i) sum += static_cast<double>(rtt_ns[i]);
  const double mean = sum / static_cast<double>(m);
  double squares = 0;
  for (size_t i = 0; i < m; ++i) {
    double d = static_cast<double>(rtt_ns[i]) - mean;
    squares += d * d;
  }
  p.t_avg_us = us(mean);
  p.t_stdev_us = us(std::sqrt(squares / static_cast<double>(m)));
  auto percentile = [&](double q) {
    size_t index = static_cast<size_t>(std::ceil(static_cast<double>(m) * q));
    return us(static_cast<double>(rtt_ns[std::min(index, rtt_ns.size() - 1)]));
  };
  p.t_p99_us = percentile(0.99);
  p.t_p999_us = percentile(0.999);
  return p;
}

double AllreduceAlgBwGBytes(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / 1e9 / seconds : 0;
}

double AllreduceBusBwGBytes(uint64_t bytes, double seconds, uint32_t nranks) {
  if (nranks == 0) return 0;
  return AllreduceAlgBwGBytes(bytes, seconds) * 2.0 * (nranks - 1) / nranks;
}

}  // namespace fabricctl::probes
