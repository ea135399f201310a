// The ring all-reduce with every rank a thread of this process, over real loopback sockets.
#include "probes/collective/ring.h"

#include <catch2/catch.hpp>
#include <thread>

#include "probes/common/stats.h"

namespace fabricctl::probes {
namespace {

// Runs an all-reduce of `count` floats on `n` ranks; rank r contributes r * 1000 + i at index
// i, so index i must come out as 1000 * n(n-1)/2 + n * i on every rank. Returns the first
// rank's stats.
RingStats RunRing(uint32_t n, size_t count) {
  std::vector<net::Listener> listeners;
  std::vector<RankAddress> ranks;
  for (uint32_t r = 0; r < n; ++r) {
    auto l = net::ListenTcp("127.0.0.1", 0);
    REQUIRE(l.ok());
    ranks.push_back({"127.0.0.1", l->port});
    listeners.push_back(*std::move(l));
  }
  std::vector<std::vector<float>> data(n, std::vector<float>(count));
  std::vector<absl::Status> status(n);
  std::vector<RingStats> stats(n);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) data[r][i] = static_cast<float>(r * 1000 + i);
    threads.emplace_back([&, r] {
      auto links = JoinRing(r, ranks, listeners[r], absl::Seconds(10));
      if (!links.ok()) {
        status[r] = links.status();
        return;
      }
      TcpRing ring(*links);
      status[r] = RingAllreduce(ring, r, n, absl::MakeSpan(data[r].data(), count),
                                absl::Now() + absl::Seconds(20), &stats[r]);
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << status[r].message());
    REQUIRE(status[r].ok());
    for (size_t i = 0; i < count; ++i) {
      const double want = 1000.0 * n * (n - 1) / 2 + static_cast<double>(n) * i;
      if (data[r][i] != want) {
        FAIL("n=" << n << " count=" << count << " rank " << r << " index " << i << ": "
                  << data[r][i] << " != " << want);
      }
    }
  }
  return stats[0];
}

}  // namespace

TEST_CASE("Correct sums for odd and even rank counts and sizes that do not divide evenly") {
  for (uint32_t n : {2u, 3u, 4u, 5u, 7u}) {
    for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{1023}, size_t{65537}}) {
      RunRing(n, count);
    }
  }
}

TEST_CASE("Each rank sends 2(n-1)/n of the data, the bus-bandwidth factor") {
  const size_t count = 1 << 16;  // divisible by 4
  RingStats stats = RunRing(4, count);
  CHECK(stats.bytes_sent == count * sizeof(float) * 2 * 3 / 4);
}

TEST_CASE("nccl-tests' algbw and busbw, worked by hand") {
  // 1 GB in 0.5 s: algbw 2 GB/s; 8 ranks: busbw 2 * 2 * 7 / 8 = 3.5 GB/s.
  CHECK(AllreduceAlgBwGBytes(1'000'000'000, 0.5) == Approx(2.0));
  CHECK(AllreduceBusBwGBytes(1'000'000'000, 0.5, 8) == Approx(3.5));
  CHECK(AllreduceBusBwGBytes(1'000'000'000, 0.5, 2) == Approx(2.0));
}

TEST_CASE("A neighbour that never comes is a timeout, not a hang") {
  auto mine = net::ListenTcp("127.0.0.1", 0);
  auto ghost = net::ListenTcp("127.0.0.1", 0);  // listens, never accepts or connects
  REQUIRE(mine.ok());
  REQUIRE(ghost.ok());
  std::vector<RankAddress> ranks = {{"127.0.0.1", mine->port}, {"127.0.0.1", ghost->port}};
  absl::Time start = absl::Now();
  auto links = JoinRing(0, ranks, *mine, absl::Milliseconds(500));
  CHECK_FALSE(links.ok());
  CHECK(absl::Now() - start < absl::Seconds(5));
}

}  // namespace fabricctl::probes
