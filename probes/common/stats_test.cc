#include "probes/common/stats.h"

#include <catch2/catch.hpp>

#include "probes/common/table.h"

namespace fabricctl::probes {

TEST_CASE("Average bandwidth and message rate, worked by hand") {
  // 1000 messages of 64 KiB in 1 ms: 65,536,000 B * 8 / 1e-3 s = 524.288 Gb/s; 1 Mpps.
  BwPoint p = AverageBandwidth(65536, 1000, 1'000'000);
  CHECK(p.size_bytes == 65536);
  CHECK(p.iterations == 1000);
  CHECK(p.bw_avg_gbps == Approx(524.288));
  CHECK(p.msg_rate_mpps == Approx(1.0));
  CHECK(GbpsToMiBps(p.bw_avg_gbps) == Approx(62500.0));  // 65,536,000 B / 2^20 / 1 ms
  CHECK_FALSE(p.bw_peak_gbps.has_value());
  CHECK(AverageBandwidth(8, 10, 0).bw_avg_gbps == 0);
}

TEST_CASE("Peak bandwidth is the fastest post-to-completion window, worked by hand") {
  // Four 1000-byte messages posted at 0, 10, 20, 30 ns, completions (cq_mod 2) after
  // message 1 at 100 ns and after message 3 at 130 ns. Windows:
  //   i=0: j=1 (100-0)/2 = 50, j=3 (130-0)/4 = 32.5
  //   i=1: j=1 (100-10)/1 = 90, j=3 (130-10)/3 = 40
  //   i=2: j=3 (130-20)/2 = 55;  i=3: j=3 (130-30)/1 = 100
  // best 32.5 ns per message -> 8000 bits / 32.5 ns = 246.15 Gb/s.
  std::vector<int64_t> posted = {0, 10, 20, 30};
  std::vector<Completion> done = {{1, 100}, {3, 130}};
  auto peak = PeakBandwidthGbps(1000, posted, done);
  REQUIRE(peak.has_value());
  CHECK(*peak == Approx(8000.0 / 32.5));
  CHECK_FALSE(PeakBandwidthGbps(1000, {}, {}).has_value());
}

TEST_CASE("Latency statistics follow perftest, worked by hand") {
  // RTTs 10..1 us (shuffled), rtt_factor 2 -> one-way. Sorted 1..10 us; the 2 largest drop: m = 8.
  //   t_min = 1/2, t_max = s[8] = 9/2, median of 1..8 = 4.5/2, mean 4.5/2,
  //   stdev = sqrt(((3.5^2 + 2.5^2 + 1.5^2 + 0.5^2) * 2) / 8) = sqrt(5.25) / 2,
  //   p99 = s[ceil(7.92)] = s[8] = 9/2, p99.9 = s[ceil(7.992)] = 9/2.
  std::vector<int64_t> rtt = {7000, 1000, 10000, 3000, 5000, 2000, 9000, 4000, 6000, 8000};
  auto p = LatencyStats(2, rtt, 2.0);
  REQUIRE(p.has_value());
  CHECK(p->iterations == 10);
  CHECK(p->t_min_us == Approx(0.5));
  CHECK(p->t_max_us == Approx(4.5));
  CHECK(p->t_typical_us == Approx(2.25));
  CHECK(p->t_avg_us == Approx(2.25));
  CHECK(p->t_stdev_us == Approx(std::sqrt(5.25) / 2));
  CHECK(p->t_p99_us == Approx(4.5));
  CHECK(p->t_p999_us == Approx(4.5));
}

TEST_CASE("Latency median of an odd count, and p99 of a long run") {
  // 1000 samples of 1..1000 ns, factor 1: m = 998, median of 1..998 = 499.5 ns,
  // p99 = s[ceil(988.02)] = s[989] = 990 ns, p99.9 = s[ceil(997.002)] = s[998] = 999 ns.
  std::vector<int64_t> rtt;
  for (int i = 1000; i >= 1; --i) rtt.push_back(i);
  auto p = LatencyStats(64, rtt, 1.0);
  REQUIRE(p.has_value());
  CHECK(p->t_typical_us == Approx(0.4995));
  CHECK(p->t_p99_us == Approx(0.990));
  CHECK(p->t_p999_us == Approx(0.999));
  CHECK(p->t_max_us == Approx(0.999));
  // 5 samples: m = 3, odd: median is s[1].
  auto odd = LatencyStats(64, {5, 1, 3, 4, 2}, 1.0);
  REQUIRE(odd.has_value());
  CHECK(odd->t_typical_us == Approx(0.002));
  CHECK_FALSE(LatencyStats(64, {1, 2}, 1.0).has_value());
}

TEST_CASE("Tables print perftest's columns") {
  BwPoint p = AverageBandwidth(65536, 5000, 2'000'000);
  std::string table = FormatBwTable("TCP BW Test", {{"Server", "h:1"}}, {p}, BwUnit::kGbps);
  CHECK(table.find("                    TCP BW Test\n Server          : h:1\n-----") !=
        std::string::npos);
  CHECK(table.find(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
                   "MsgRate[Mpps]\n") != std::string::npos);
  CHECK(table.find(" 65536      5000             -                  1310.72\t\t     2.500000\n") !=
        std::string::npos);
  BwPoint slow = AverageBandwidth(2, 5000, 1'000'000);  // 0.08 Gb/s: six-decimal format
  CHECK(FormatBwTable("t", {}, {slow}, BwUnit::kGbps).find("0.080000") != std::string::npos);
  CHECK(FormatBwTable("t", {}, {p}, BwUnit::kMiBps).find("BW average[MiB/sec]") !=
        std::string::npos);

  // Each flow one line: a queue pair's 5-tuple with its queue pair numbers, its path.
  Flow roce;
  roce.protocol = "roce";
  roce.source = "192.0.2.1:55410";
  roce.destination = "192.0.2.2:4791";
  roce.queue_pair = "rxe0:1 qp 17 > qp 18";
  roce.bw_gbps = 1.5;
  roce.hops = {{1, "198.18.0.1", "leaf-1"}, {2, "", ""}};
  roce.traced = true;
  CHECK(FormatFlows({roce}) ==
        " flow 0   roce 192.0.2.1:55410 > 192.0.2.2:4791  1.500 Gb/s  [rxe0:1 qp 17 > qp 18]"
        "  path: leaf-1 * >\n" +
            std::string(kResultLine) + "\n");

  auto lat = LatencyStats(2, {1000, 2000, 3000, 4000, 5000}, 1.0);
  std::string lat_table = FormatLatTable("TCP Latency Test", {}, {*lat});
  CHECK(lat_table.find(" 2       5          1.00           4.00         2.00") !=
        std::string::npos);
}

}  // namespace fabricctl::probes
