// A local user who sees a ring all-reduce rank's listening port, against the ring over real
// loopback sockets: idle connections, a wrong secret, the right secret with the wrong rank.
// The real left neighbour must still join, in about the time it takes it alone.
#include <arpa/inet.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "base/socket.h"
#include "catch2/catch.hpp"
#include "probes/collective/ring.h"

namespace fabricctl::probes {
namespace {

struct Ranks {
  std::vector<net::Listener> listeners;
  std::vector<RankAddress> addresses;
  explicit Ranks(uint32_t n) {
    for (uint32_t r = 0; r < n; ++r) {
      auto l = net::ListenTcp("127.0.0.1", 0);
      REQUIRE(l.ok());
      addresses.push_back({"127.0.0.1", l->port, "secret-of-rank-" + std::to_string(r)});
      listeners.push_back(*std::move(l));
    }
  }
  // Every rank joins the ring and sums a few floats; the statuses, in rank order.
  std::vector<absl::Status> Run(absl::Duration timeout) {
    const uint32_t n = static_cast<uint32_t>(addresses.size());
    std::vector<absl::Status> status(n);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        auto links = JoinRing(r, addresses, listeners[r], timeout);
        if (!links.ok()) {
          status[r] = links.status();
          return;
        }
        std::vector<float> data(1000, 1.0f);
        TcpRing ring(*links);
        status[r] = RingAllreduce(ring, r, n, absl::MakeSpan(data), absl::Now() + timeout, nullptr);
        if (status[r].ok() && data[7] != static_cast<float>(n))
          status[r] = absl::DataLossError("wrong sum");
      });
    }
    for (auto& t : threads) t.join();
    return status;
  }
};

std::string Hello(const std::string& secret, uint32_t rank) {
  std::string hello(1, static_cast<char>(secret.size()));
  hello += secret;
  const uint32_t big = htonl(rank);
  hello.append(reinterpret_cast<const char*>(&big), sizeof(big));
  return hello;
}

TEST_CASE("idle connections to a rank's listener do not keep its neighbour out") {
  Ranks ranks(3);
  // 40 connections that never say a word, opened before the ring starts: each used to cost a
  // second, one after another, and the neighbour timed out behind them.
  std::vector<net::UniqueFd> idle;
  for (int i = 0; i < 40; ++i) {
    auto fd = net::ConnectTcp("127.0.0.1", ranks.addresses[1].port, absl::Seconds(2));
    REQUIRE(fd.ok());
    idle.push_back(*std::move(fd));
  }
  const absl::Time start = absl::Now();
  const auto status = ranks.Run(absl::Seconds(8));
  for (const auto& s : status) CHECK(s.ok());
  INFO("joined in " << absl::FormatDuration(absl::Now() - start));
  CHECK(absl::Now() - start < absl::Seconds(6));
}

TEST_CASE("a wrong secret, or the right secret from the wrong rank, is not the neighbour") {
  Ranks ranks(3);
  std::atomic<bool> stop{false};
  // Strangers keep coming while the ring joins: a wrong secret, rank 1's secret naming rank 2
  // (not its left neighbour), garbage, a connection closed at once.
  std::thread strangers([&] {
    const std::vector<std::string> hellos = {Hello("not-the-secret-x", 0),
                                             Hello(ranks.addresses[1].token, 2),
                                             std::string(200, '\xff'), ""};
    for (int i = 0; !stop && i < 400; ++i) {
      auto fd = net::ConnectTcp("127.0.0.1", ranks.addresses[1].port, absl::Seconds(1));
      if (!fd.ok()) continue;
      const std::string& h = hellos[i % hellos.size()];
      (void)net::SendAll(fd->get(), h.data(), h.size(), absl::Now() + absl::Seconds(1));
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  const auto status = ranks.Run(absl::Seconds(8));
  stop = true;
  strangers.join();
  for (uint32_t r = 0; r < status.size(); ++r) {
    INFO("rank " << r << ": " << status[r].message());
    CHECK(status[r].ok());
  }
}

}  // namespace
}  // namespace fabricctl::probes
