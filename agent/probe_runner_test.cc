#include "agent/probe_runner.h"

#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <thread>

#include "probes/common/params.h"
#include "tests/testing/testing.h"

namespace fabricctl::agent {
namespace {

v1::ProbeSpec TcpLat() {
  probes::ProbeParams p;
  p.kind = v1::TCP_LAT;
  p.sizes_bytes = {64};
  p.iterations = 100;
  p.timeout = absl::Seconds(20);
  return probes::ToSpec(p);
}

v1::RunLocalProbeRequest Local(const v1::ProbeSpec& spec, const std::string& run_id, uint32_t rank,
                               const std::vector<v1::Endpoint>& ranks, uint32_t world_size = 0,
                               uint32_t local_ranks = 0) {
  v1::RunLocalProbeRequest request;
  *request.mutable_spec() = spec;
  request.set_run_id(run_id);
  request.set_rank(rank);
  for (const auto& e : ranks) *request.add_ranks() = e;
  request.set_world_size(world_size);
  request.set_local_ranks(local_ranks);
  return request;
}

std::string Absolute(const std::string& path) {
  char buffer[PATH_MAX];
  REQUIRE(::realpath(path.c_str(), buffer) != nullptr);
  return buffer;
}

}  // namespace

TEST_CASE("A server half and a client half measure through two runners") {
  ProbeRunner server("127.0.0.1", "127.0.0.1", {});
  ProbeRunner client("127.0.0.1", "127.0.0.1", {});
  auto endpoint = server.StartServer(TcpLat(), "run-1");
  REQUIRE(endpoint.ok());
  CHECK(endpoint->address().rfind("127.0.0.1:", 0) == 0);
  auto result = client.RunClient(TcpLat(), *endpoint);
  REQUIRE(result.ok());
  CHECK(result->outcome() == v1::PROBE_OK);
  CHECK(result->lat_size() == 1);
  CHECK(server.StopServer("run-1").ok());
  CHECK(absl::IsNotFound(server.StopServer("run-1").status()));
}

namespace {

// A stranger on the data network: connects to a server half and says `hello`; the answer, if
// any, or why there was none.
std::string Greet(const std::string& address, const v1::ProbeHello& hello) {
  auto host_port = ParseHostPort(address, "address");
  REQUIRE(host_port.ok());
  auto fd = net::ConnectTcp(host_port->host, host_port->port, absl::Seconds(5));
  REQUIRE(fd.ok());
  REQUIRE(net::SendFrame(fd->get(), hello, absl::Now() + absl::Seconds(5)).ok());
  v1::ProbeWelcome welcome;
  auto s = net::RecvFrame(fd->get(), &welcome, absl::Now() + absl::Seconds(5));
  return s.ok() ? "welcome: " + welcome.error() : "no answer";
}

}  // namespace

TEST_CASE("A server half takes only its run's client: strangers change nothing") {
  ProbeRunner server("127.0.0.1", "127.0.0.1", {});
  ProbeRunner client("127.0.0.1", "127.0.0.1", {});
  auto endpoint = server.StartServer(TcpLat(), "run-1");
  REQUIRE(endpoint.ok());
  CHECK(endpoint->token().size() == 16);
  // A goodbye without the secret does not end the session; neither does a measurement asked
  // for without it, or one with a guessed secret.
  v1::ProbeHello bye;
  bye.set_bye(true);
  CHECK(Greet(endpoint->address(), bye) == "no answer");
  v1::ProbeHello hello;
  *hello.mutable_spec() = TcpLat();
  hello.set_size_bytes(64);
  CHECK(Greet(endpoint->address(), hello) == "no answer");
  hello.set_token(std::string(16, 'x'));
  CHECK(Greet(endpoint->address(), hello) == "no answer");
  // With the secret, but asking for more than the run was started for: refused.
  hello.set_token(endpoint->token());
  hello.mutable_spec()->mutable_measurement()->set_iterations(10'000'000);
  CHECK(Greet(endpoint->address(), hello).find("another measurement") != std::string::npos);
  // The run's own client still measures, and the server half reports no failure of its own.
  auto result = client.RunClient(TcpLat(), *endpoint);
  REQUIRE(result.ok());
  CHECK(result->outcome() == v1::PROBE_OK);
  auto own = server.StopServer("run-1");
  REQUIRE(own.ok());
  CHECK(own->outcome() == v1::PROBE_OUTCOME_UNSPECIFIED);
  // Without the secret the client's own hellos are refused: it fails, typed.
  ProbeRunner other("127.0.0.1", "127.0.0.1", {});
  auto second = server.StartServer(TcpLat(), "run-2");
  REQUIRE(second.ok());
  v1::Endpoint no_secret = *second;
  no_secret.clear_token();
  v1::ProbeSpec quick = TcpLat();
  quick.mutable_timeout()->set_seconds(3);
  auto refused = other.RunClient(quick, no_secret);
  REQUIRE(refused.ok());
  CHECK(refused->outcome() != v1::PROBE_OK);
  CHECK(refused->cause() != v1::FAILURE_CAUSE_UNSPECIFIED);
  CHECK(server.StopServer("run-2").ok());
}

TEST_CASE("One heavy probe at a time per node") {
  ProbeRunner runner("127.0.0.1", "127.0.0.1", {});
  REQUIRE(runner.StartServer(TcpLat(), "run-1").ok());
  auto second = runner.StartServer(TcpLat(), "run-2");
  REQUIRE_FALSE(second.ok());
  CHECK(absl::IsResourceExhausted(second.status()));
  CHECK(std::string(second.status().message()).find("run-1") != std::string::npos);
  auto client = runner.RunClient(TcpLat(), v1::Endpoint());
  CHECK_FALSE(client.ok());
  REQUIRE(runner.StopServer("run-1").ok());
  // The slot is free again.
  CHECK(runner.StartServer(TcpLat(), "run-3").ok());
}

TEST_CASE("On a rail: the halves use the rail interface's address, one probe per rail at a time") {
  // Loopback stands in for a rail's interface: the one interface every test machine has.
  v1::ProbeSpec on_lo = TcpLat();
  on_lo.mutable_tcp()->set_netdev("lo");
  ProbeRunner runner("0.0.0.0", "node.example", {});
  auto endpoint = runner.StartServer(on_lo, "rail-1");
  REQUIRE(endpoint.ok());
  CHECK(endpoint->address().rfind("127.0.0.1:", 0) == 0);  // not the agent's own address
  // The same rail is busy, and so is the node for a probe without a rail.
  auto same = runner.StartServer(on_lo, "rail-2");
  REQUIRE(absl::IsResourceExhausted(same.status()));
  CHECK(std::string(same.status().message()).find("on lo") != std::string::npos);
  CHECK(absl::IsResourceExhausted(runner.StartServer(TcpLat(), "node-1").status()));
  ProbeRunner client("127.0.0.1", "127.0.0.1", {});
  auto result = client.RunClient(on_lo, *endpoint);
  REQUIRE(result.ok());
  CHECK(result->outcome() == v1::PROBE_OK);
  REQUIRE(runner.StopServer("rail-1").ok());
  // The rail's slot is free again, and a run id is taken once.
  REQUIRE(runner.StartServer(on_lo, "rail-4").ok());
  CHECK(runner.StopServer("rail-4").ok());
  // A rail this node lacks is refused, naming it.
  v1::ProbeSpec missing = TcpLat();
  missing.mutable_tcp()->set_netdev("nonexist9");
  auto refused = runner.StartServer(missing, "rail-3");
  REQUIRE(absl::IsFailedPrecondition(refused.status()));
  CHECK(refused.status().message() == "rail interface nonexist9: no such interface on this node");
}

TEST_CASE("Requests beyond the node's caps change nothing") {
  probes::ServeContext context;
  context.limits.max_message_bytes = 1024;
  ProbeRunner runner("127.0.0.1", "127.0.0.1", context);
  probes::ProbeParams big = probes::FromSpec(TcpLat());
  big.sizes_bytes = {4096};
  auto refused = runner.StartServer(probes::ToSpec(big), "run-1");
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(std::string(refused.status().message()) == "--sizes: size 4K is above the cap of 1K bytes");
  CHECK(runner.StartServer(TcpLat(), "run-2").ok());  // nothing was held
  v1::ProbeSpec unknown;
  CHECK(absl::IsInvalidArgument(runner.StartServer(unknown, "run-3").status()));
  CHECK(absl::IsInvalidArgument(runner.StartServer(TcpLat(), "").status()));
}

}  // namespace fabricctl::agent

namespace fabricctl::agent {

TEST_CASE(
    "A ring rank holds the slot from its listener to the end of its run, even a refused one") {
  probes::ProbeParams p;
  p.kind = v1::ALLREDUCE;
  p.sizes_bytes = {4096};
  p.iterations = 2;
  const v1::ProbeSpec spec = probes::ToSpec(p);
  ProbeRunner runner("127.0.0.1", "127.0.0.1", {});
  auto endpoint = runner.StartServer(spec, "ring-1");
  REQUIRE(endpoint.ok());
  CHECK(absl::IsResourceExhausted(runner.StartServer(TcpLat(), "run-2").status()));
  // A bad request for the ring ends the run and frees the node.
  auto refused = runner.RunLocal(Local(spec, "ring-1", 5, {*endpoint}));
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(runner.StartServer(TcpLat(), "run-3").ok());
}

TEST_CASE("Two runners form a ring and sum correctly") {
  probes::ProbeParams p;
  p.kind = v1::ALLREDUCE;
  p.sizes_bytes = {4096, 65536};
  p.iterations = 3;
  const v1::ProbeSpec spec = probes::ToSpec(p);
  ProbeRunner a("127.0.0.1", "127.0.0.1", {}), b("127.0.0.1", "127.0.0.1", {});
  auto ea = a.StartServer(spec, "r");
  auto eb = b.StartServer(spec, "r");
  REQUIRE(ea.ok());
  REQUIRE(eb.ok());
  absl::StatusOr<v1::ProbeResult> ra, rb;
  std::thread ta([&] { ra = a.RunLocal(Local(spec, "r", 0, {*ea, *eb})); });
  std::thread tb([&] { rb = b.RunLocal(Local(spec, "r", 1, {*ea, *eb})); });
  ta.join();
  tb.join();
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  CHECK(ra->outcome() == v1::PROBE_OK);
  REQUIRE(ra->collective_size() == 2);
  CHECK(ra->collective(1).size_bytes() == 65536);
  CHECK(ra->collective(1).wrong() == 0);
  CHECK(ra->collective(1).busbw_gbytes() > 0);
}

// NCCL through the agents' runners, with the CUDA and NCCL test stand-ins of tests/fake_gpu (no
// GPU here): rank 0's node makes the unique id, two nodes of two "GPUs" each run four ranks.
TEST_CASE("Two runners run an NCCL all-reduce of four ranks and judge its logs") {
  ::setenv("FABRIC_CUDA_LIBRARY", Absolute("tests/fake_gpu/libfake_cuda.so").c_str(), 1);
  ::setenv("FABRIC_NCCL_LIBRARY", Absolute("tests/fake_gpu/libfake_nccl.so").c_str(), 1);
  ::setenv("FABRIC_FAKE_GPUS", "2", 1);
  const std::string logs = testing::TestPath("nccl-logs");
  probes::ProbeParams p;
  p.kind = v1::ALLREDUCE;
  p.allreduce_backend = "nccl";
  p.sizes_bytes = {4096, 1 << 16};
  p.iterations = 2;
  p.timeout = absl::Seconds(60);
  const v1::ProbeSpec spec = probes::ToSpec(p);
  ProbeRunner a("127.0.0.1", "127.0.0.1", {}, "node-a", logs);
  ProbeRunner b("127.0.0.1", "127.0.0.1", {}, "node-b", logs);
  for (const char* ib_disable : {"0", "1"}) {
    ::setenv("NCCL_IB_DISABLE", ib_disable, 1);
    const std::string run = std::string("nccl-") + ib_disable;
    auto ea = a.StartServer(spec, run, 0);
    auto eb = b.StartServer(spec, run, 2);
    REQUIRE(ea.ok());
    REQUIRE(eb.ok());
    CHECK(ea->nccl_unique_id().size() == 128);
    CHECK(eb->nccl_unique_id().empty());
    CHECK(absl::IsResourceExhausted(a.StartServer(TcpLat(), "other").status()));
    absl::StatusOr<v1::ProbeResult> ra, rb;
    std::thread ta([&] { ra = a.RunLocal(Local(spec, run, 0, {*ea, *eb}, 4, 2)); });
    std::thread tb([&] { rb = b.RunLocal(Local(spec, run, 2, {*ea, *eb}, 4, 2)); });
    ta.join();
    tb.join();
    REQUIRE(ra.ok());
    REQUIRE(rb.ok());
    for (const auto* r : {&*ra, &*rb}) {
      INFO(r->reason());
      REQUIRE(r->outcome() == v1::PROBE_OK);
      REQUIRE(r->collective_size() == 2);
      CHECK(r->collective(1).wrong() == 0);
      CHECK(r->collective(1).busbw_gbytes() ==
            Approx(r->collective(1).algbw_gbytes() * 2.0 * 3 / 4));
      CHECK(r->device() == "nccl 2.21.5, 2 GPUs");
    }
    if (std::string(ib_disable) == "0") {
      CHECK(rb->nccl().net() == "IB");
      CHECK(rb->nccl().gpudirect_rdma());
      CHECK(rb->findings().empty());
    } else {
      CHECK(rb->nccl().net() == "Socket");
      REQUIRE(rb->findings_size() == 1);
      CHECK(rb->findings(0).kind() == "tcp_fallback");
      CHECK(rb->findings(0).node() == "node-b");
      CHECK(rb->findings(0).device() == logs + "/nccl-1.rank2.log");
    }
    CHECK(a.StartServer(TcpLat(), "free").ok());  // the runs freed the slots
    CHECK(a.StopServer("free").ok());
  }
  ::unsetenv("NCCL_IB_DISABLE");
  // A request that does not match the started run is refused, and still frees the slot.
  REQUIRE(a.StartServer(spec, "bad", 0).ok());
  CHECK(absl::IsInvalidArgument(a.RunLocal(Local(spec, "bad", 0, {}, 4, 2)).status()));
  CHECK(a.StartServer(TcpLat(), "after-bad").ok());
}

}  // namespace fabricctl::agent

namespace fabricctl::agent {

// A GPU-memory server half lives in a child process: it holds the slot, StopServer ends it and
// frees the slot, and a runner stopped with one up ends it too (no CUDA is touched until a
// client comes, so no GPU is needed here).
TEST_CASE("A GPU-memory server half runs in a child and is stopped with the runner") {
  probes::ProbeParams p;
  p.kind = v1::RDMA_WRITE_BW;
  p.sizes_bytes = {65536};
  p.iterations = 10;
  p.timeout = absl::Seconds(20);
  p.rdma.server_gpu_memory = true;
  const v1::ProbeSpec spec = probes::ToSpec(p);
  {
    ProbeRunner runner("127.0.0.1", "127.0.0.1", {});
    auto endpoint = runner.StartServer(spec, "gpu-1");
    REQUIRE(endpoint.ok());
    CHECK(endpoint->address().rfind("127.0.0.1:", 0) == 0);
    CHECK(absl::IsResourceExhausted(runner.StartServer(TcpLat(), "other").status()));
    REQUIRE(runner.StopServer("gpu-1").ok());
    CHECK(runner.StartServer(TcpLat(), "after").ok());  // the slot came back
    REQUIRE(runner.StopServer("after").ok());
    REQUIRE(runner.StartServer(spec, "gpu-2").ok());
  }  // destroyed with gpu-2's child still serving: stopped, not crashed
}

}  // namespace fabricctl::agent
