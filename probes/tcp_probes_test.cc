// The TCP probes over real loopback sockets: a ProbeServer on a port the OS picks, and the
// client half against it. Only the shape and plausibility of results are asserted; figures
// belong to the benchmarks (bench/).
#include <endian.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "probes/client.h"
#include "probes/server.h"
#include "probes/table.h"
#include "probes/trace/tcp.h"

namespace fabricctl::probes {
namespace {

struct RunningServer {
  std::unique_ptr<ProbeServer> server;
  std::thread thread;
  absl::Status result;

  explicit RunningServer(ProbeLimits limits = {}, bool one_off = false) {
    auto listening = ProbeServer::Listen("127.0.0.1", 0, ServeContext(limits, {}));
    REQUIRE(listening.ok());
    server = *std::move(listening);
    thread = std::thread([this, one_off] { result = server->Serve(one_off); });
  }
  ~RunningServer() {
    server->Stop();
    thread.join();
  }
  ServerAddress address() const { return {"127.0.0.1", server->port()}; }
};

ProbeParams Params(v1::ProbeKind kind, std::vector<uint64_t> sizes, uint64_t iterations) {
  ProbeParams p;
  p.kind = kind;
  p.sizes_bytes = std::move(sizes);
  p.iterations = iterations;
  return p;
}

}  // namespace

TEST_CASE("The table lists the TCP probes by name and kind") {
  REQUIRE(FindProbe("tcp_bw") != nullptr);
  CHECK(FindProbe("tcp_bw")->kind() == v1::TCP_BW);
  CHECK(FindProbe(v1::TCP_LAT)->name() == std::string("tcp_lat"));
  CHECK(FindProbe("udp_bw") == nullptr);
  CHECK(
      ProbeNames() ==
      "rdma_write_bw, rdma_send_bw, rdma_read_bw, rdma_write_lat, rdma_send_lat, tcp_bw, tcp_lat");
}

TEST_CASE("tcp_bw measures every size over several streams") {
  RunningServer server;
  ProbeParams p = Params(v1::TCP_BW, {4096, 65536, 1 << 20}, 200);
  p.tcp_streams = 3;
  p.warmup_iterations = 5;
  ProbeRun run = RunProbeClient(p, server.address(), {}, false);
  INFO(run.reason);
  REQUIRE(run.outcome == Outcome::kOk);
  REQUIRE(run.bw.size() == 3);
  for (const BwPoint& point : run.bw) {
    // Every byte sent arrived: 3 streams x 200 messages.
    CHECK(point.iterations == 600);
    CHECK(point.bw_avg_gbps > 0);
    CHECK(point.msg_rate_mpps > 0);
    CHECK_FALSE(point.bw_peak_gbps.has_value());
  }
  CHECK(run.bw[2].size_bytes == (1 << 20));
}

TEST_CASE("tcp_bw in duration mode sends whole messages for about that long") {
  RunningServer server;
  ProbeParams p = Params(v1::TCP_BW, {65536}, 0);
  p.duration = absl::Milliseconds(300);
  absl::Time start = absl::Now();
  ProbeRun run = RunProbeClient(p, server.address(), {}, false);
  REQUIRE(run.outcome == Outcome::kOk);
  REQUIRE(run.bw.size() == 1);
  CHECK(run.bw[0].iterations > 0);
  CHECK(absl::Now() - start >= absl::Milliseconds(300));
}

TEST_CASE("tcp_bw keeps each stream as a flow, and traces each with its own 5-tuple") {
  RunningServer server;
  ProbeParams p = Params(v1::TCP_BW, {65536}, 0);
  p.duration = absl::Milliseconds(200);
  p.tcp_streams = 3;
  p.trace_flows = true;
  ProbeRun run = RunProbeClient(p, server.address(), {}, false);
  INFO(run.reason);
  REQUIRE(run.outcome == Outcome::kOk);
  REQUIRE(run.bw.size() == 1);
  const std::vector<Flow>& flows = run.bw[0].flows;
  REQUIRE(flows.size() == 3);
  std::set<std::string> sources;
  double sum = 0;
  for (const Flow& f : flows) {
    INFO(f.source << " > " << f.destination << ": " << f.trace_note);
    sources.insert(f.source);
    CHECK(f.protocol == "tcp");
    CHECK(f.source.rfind("127.0.0.1:", 0) == 0);
    CHECK(f.destination == absl::StrCat("127.0.0.1:", server.server->port()));
    CHECK(f.bw_gbps > 0);
    sum += f.bw_gbps;
    // Loopback: the first TTL reaches the destination, with no router on the way. The stream's
    // own port was free to bind again (its connection reset, no TIME_WAIT).
    CHECK(f.traced);
    CHECK(f.hops.empty());
    CHECK(f.trace_note.empty());
  }
  CHECK(sources.size() == 3);  // each flow its own source port
  // The point's figure is their sum, over the longest of the streams' windows.
  CHECK(sum >= run.bw[0].bw_avg_gbps * 0.9);
  CHECK(sum <= run.bw[0].bw_avg_gbps * 1.5);
}

TEST_CASE("A trace of a flow that is not an address says so") {
  Flow f;
  f.source = "node-1:80";
  f.destination = "127.0.0.1:1";
  TraceTcpFlow(f, {}, nullptr);
  CHECK_FALSE(f.traced);
  CHECK(f.trace_note == "not an IPv4 address and port: 'node-1:80'");
}

TEST_CASE("tcp_lat reports perftest's latency columns") {
  RunningServer server;
  ProbeParams p = Params(v1::TCP_LAT, {2, 4096}, 500);
  p.warmup_iterations = 10;
  ProbeRun run = RunProbeClient(p, server.address(), {}, false);
  INFO(run.reason);
  REQUIRE(run.outcome == Outcome::kOk);
  REQUIRE(run.lat.size() == 2);
  for (const LatPoint& point : run.lat) {
    CHECK(point.iterations == 500);
    CHECK(point.t_min_us > 0);
    CHECK(point.t_min_us <= point.t_typical_us);
    CHECK(point.t_typical_us <= point.t_p99_us);
    CHECK(point.t_p99_us <= point.t_p999_us);
    CHECK(point.t_p999_us <= point.t_max_us);
  }
}

TEST_CASE("The server refuses what exceeds its caps, and the client says why") {
  ProbeLimits server_limits;
  server_limits.max_message_bytes = 4096;
  RunningServer server(server_limits);
  ProbeRun run = RunProbeClient(Params(v1::TCP_BW, {65536}, 10), server.address(), {}, false);
  CHECK(run.outcome == Outcome::kFailed);
  CHECK(run.reason == "server refused: --sizes: size 64K is above the cap of 4K bytes");
  CHECK(run.bw.empty());
}

TEST_CASE("The client refuses a bad request before sending anything") {
  ProbeRun run = RunProbeClient(Params(v1::TCP_BW, {0}, 10), {"127.0.0.1", 1}, {}, false);
  CHECK(run.outcome == Outcome::kFailed);
  CHECK(run.reason == "--sizes: size 0");
}

TEST_CASE("An unreachable server is a failure naming the address, not a measurement") {
  auto listening = ProbeServer::Listen("127.0.0.1", 0, ServeContext{});
  REQUIRE(listening.ok());
  uint16_t port = (*listening)->port();
  listening->reset();
  ProbeRun run = RunProbeClient(Params(v1::TCP_LAT, {2}, 10), {"127.0.0.1", port}, {}, false);
  CHECK(run.outcome == Outcome::kFailed);
  CHECK(run.reason.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(run.lat.empty());
}

TEST_CASE("A one-off server exits when its client ends the session") {
  auto listening = ProbeServer::Listen("127.0.0.1", 0, ServeContext{});
  REQUIRE(listening.ok());
  ProbeServer& server = **listening;
  absl::Status served = absl::UnknownError("not finished");
  std::thread thread([&] { served = server.Serve(/*one_off=*/true); });
  ProbeRun run =
      RunProbeClient(Params(v1::TCP_LAT, {64}, 50), {"127.0.0.1", server.port()}, {}, true);
  thread.join();  // returns because of the bye, not because of Stop()
  CHECK(run.outcome == Outcome::kOk);
  CHECK(served.ok());
}

namespace {

// A server half that lies about what it received: it answers every timed phase with
// `bytes` received in `window_ns` (the wire form of tcp_bw's answer), whatever arrived.
void ServeLies(net::Listener& listener, uint64_t bytes, uint64_t window_ns, int phases) {
  for (int i = 0; i < phases; ++i) {
    auto fd = net::AcceptTcp(listener, absl::Seconds(10));
    if (!fd.ok()) return;
    v1::ProbeHello hello;
    if (!net::RecvFrame(fd->get(), &hello, absl::Now() + absl::Seconds(5)).ok()) return;
    (void)net::SendFrame(fd->get(), v1::ProbeWelcome(), absl::Now() + absl::Seconds(5));
    char buffer[65536];
    (void)::recv(fd->get(), buffer, sizeof(buffer), 0);  // the first bytes: the timed part began
    const uint64_t wire[2] = {htobe64(bytes), htobe64(window_ns)};
    (void)::send(fd->get(), wire, sizeof(wire), MSG_NOSIGNAL);
    while (::recv(fd->get(), buffer, sizeof(buffer), 0) > 0) {
    }
  }
}

}  // namespace

TEST_CASE("a server's count is checked: more than was sent, or no window, is no figure") {
  for (const auto& [lie_bytes, lie_window_ns] : std::vector<std::pair<uint64_t, uint64_t>>{
           {1ull << 50, 200'000'000},  // a petabyte in 0.2 s
           {65536, 0},                 // no measuring window: an infinite rate
       }) {
    auto listener = net::ListenTcp("127.0.0.1", 0);
    REQUIRE(listener.ok());
    const uint64_t bytes = lie_bytes, window_ns = lie_window_ns;  // a lambda captures variables
    std::thread liar([&] { ServeLies(*listener, bytes, window_ns, 1); });
    ProbeParams params = Params(v1::TCP_BW, {65536}, 0);
    params.iterations = 0;
    params.duration = absl::Milliseconds(200);
    ProbeRun run = RunProbeClient(params, {"127.0.0.1", listener->port}, {}, false);
    liar.join();
    INFO(run.reason);
    CHECK(run.outcome == Outcome::kFailed);
    CHECK(run.cause == v1::CAUSE_INVALID_FIGURES);
    CHECK(run.server_side);
    CHECK(run.bw.empty());
  }
}

}  // namespace fabricctl::probes
