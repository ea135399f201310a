#include "agent/probe_runner.h"

#include <thread>

#include <catch2/catch.hpp>

#include "probes/common/params.h"

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
  CHECK(absl::IsNotFound(server.StopServer("run-1")));
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

TEST_CASE("Requests beyond the node's caps change nothing") {
  probes::ServeContext context;
  context.limits.max_message_bytes = 1024;
  ProbeRunner runner("127.0.0.1", "127.0.0.1", context);
  probes::ProbeParams big = probes::FromSpec(TcpLat());
  big.sizes_bytes = {4096};
  auto refused = runner.StartServer(probes::ToSpec(big), "run-1");
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(std::string(refused.status().message()) ==
        "--sizes: size 4K is above the cap of 1K bytes");
  CHECK(runner.StartServer(TcpLat(), "run-2").ok());  // nothing was held
  v1::ProbeSpec unknown;
  CHECK(absl::IsInvalidArgument(runner.StartServer(unknown, "run-3").status()));
  CHECK(absl::IsInvalidArgument(runner.StartServer(TcpLat(), "").status()));
}

}  // namespace fabricctl::agent

namespace fabricctl::agent {

TEST_CASE("A ring rank holds the slot from its listener to the end of its run, even a refused one") {
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
  auto refused = runner.RunLocal(spec, "ring-1", 5, {*endpoint});
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
  std::thread ta([&] { ra = a.RunLocal(spec, "r", 0, {*ea, *eb}); });
  std::thread tb([&] { rb = b.RunLocal(spec, "r", 1, {*ea, *eb}); });
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

}  // namespace fabricctl::agent
