#ifndef FABRICCTL_PROBES_COMMON_STATS_H_
#define FABRICCTL_PROBES_COMMON_STATS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "probes/common/result.h"

namespace fabricctl::probes {

// The measurement formulas, as perftest defines them (src/perftest_parameters.c,
// print_report_bw and print_report_lat), so that our rows compare line by line with
// ib_write_bw and ib_write_lat. Times are in nanoseconds of a monotonic clock.

// Average bandwidth of `messages` messages of `size_bytes` moved in `elapsed_ns`:
//   bw_avg_gbps   = size * messages * 8 / elapsed_s / 1e9      (perftest --report_gbits)
//   msg_rate_mpps = messages / elapsed_s / 1e6
// perftest's elapsed time runs from the first post to the last completion.
BwPoint AverageBandwidth(uint64_t size_bytes, uint64_t messages, int64_t elapsed_ns);

// A completion that covers every message up to and including `last_message` (with CQ
// moderation one completion stands for cq_mod messages).
struct Completion {
  uint64_t last_message;
  int64_t time_ns;
};

// perftest's peak: the shortest time per message over any window that starts at a post and
// ends at a completion,
//   opt_delta = min over i <= j of (completed[j] - posted[i]) / (j - i + 1)
//   bw_peak   = size * 8 / opt_delta
// Empty input gives nullopt. Cost O(posts x completions); perftest stops computing it above
// 20000 iterations, and so do callers.
std::optional<double> PeakBandwidthGbps(uint64_t size_bytes, const std::vector<int64_t>& posted_ns,
                                        const std::vector<Completion>& completions);

// Latency statistics from round-trip samples, perftest's way:
//   sort ascending; drop the 2 largest (LAT_MEASURE_TAIL) from count n -> m = n - 2
//   t_min = s[0], t_max = s[m] (the largest shown is the 2nd largest sample)
//   t_typical = median of s[0..m-1] (mean of the two middles when m is even)
//   t_avg = mean of s[0..m-1]
//   t_stdev = population standard deviation of s[0..m-1]. perftest truncates each deviation
//             to an integer number of cycles (so it mostly prints 0.00); we do not.
//   p99 = s[ceil(m * 0.99)], p99.9 = s[ceil(m * 0.999)]
// each divided by `rtt_factor` (2 for ping-pong write/send: one-way latency; 1 for read).
// Needs at least 3 samples.
std::optional<LatPoint> LatencyStats(uint64_t size_bytes, std::vector<int64_t> rtt_ns,
                                     double rtt_factor);

// Gb/s to MiB/s: perftest's factor 10^9 / (2^20 * 8) = 119.2.
inline double GbpsToMiBps(double gbps) { return gbps * 1e9 / 8.0 / (1 << 20); }

// nccl-tests' figures for all_reduce (nccl-tests' doc/PERFORMANCE.md): algbw = bytes / 1e9 /
// seconds, busbw = algbw * 2(n-1)/n, in GB/s.
double AllreduceAlgBwGBytes(uint64_t bytes, double seconds);
double AllreduceBusBwGBytes(uint64_t bytes, double seconds, uint32_t nranks);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_STATS_H_
