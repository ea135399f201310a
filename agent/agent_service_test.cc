// The agent's service over real gRPC on loopback (plain text): what its callers' deadlines and
// cancellations do to the probes it runs.
#include "agent/agent_service.h"

#include <catch2/catch.hpp>
#include <thread>

#include "base/socket.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "probes/common/params.h"
#include "proto/agent.grpc.pb.h"

namespace fabricctl::agent {
namespace {

v1::ProbeSpec TcpBw(absl::Duration timeout) {
  probes::ProbeParams p;
  p.kind = v1::TCP_BW;
  p.sizes_bytes = {64 << 10};
  p.duration = absl::Seconds(1);
  p.timeout = timeout;
  return probes::ToSpec(p);
}

struct Agent {
  Agent()
      : runner("127.0.0.1", "127.0.0.1", {}),
        service("", [] { return v1::NodeInventory(); }, &runner, {}) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    stub = v1::AgentService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                         grpc::InsecureChannelCredentials()));
  }
  ~Agent() { server->Shutdown(); }
  grpc::Status StartServer(const std::string& run_id) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::StartProbeServerRequest request;
    *request.mutable_spec() = TcpBw(absl::Seconds(20));
    request.set_run_id(run_id);
    v1::StartProbeServerResponse response;
    return stub->StartProbeServer(&context, request, &response);
  }
  ProbeRunner runner;
  AgentService service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::AgentService::Stub> stub;
};

}  // namespace

TEST_CASE("A client half whose caller's deadline passes stops and frees the node within a second") {
  Agent agent;
  // A peer that accepts and then says nothing: the client half would wait out its own bounds.
  auto silent = net::ListenTcp("127.0.0.1", 0);
  REQUIRE(silent.ok());
  std::vector<net::UniqueFd> held;
  std::thread acceptor([&] {
    for (int i = 0; i < 4; ++i) {
      auto fd = net::AcceptTcp(*silent, absl::Seconds(3));
      if (fd.ok()) held.push_back(*std::move(fd));
    }
  });
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  v1::RunProbeClientRequest request;
  *request.mutable_spec() = TcpBw(absl::Seconds(20));
  request.mutable_server()->set_address("127.0.0.1:" + std::to_string(silent->port));
  v1::RunProbeClientResponse response;
  grpc::Status s = agent.stub->RunProbeClient(&context, request, &response);
  CHECK(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  const absl::Time deadline_passed = absl::Now();
  // The next probe on that agent runs: its slot is free again within a second.
  grpc::Status next;
  do {
    next = agent.StartServer("next");
    if (next.ok()) break;
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() - deadline_passed < absl::Seconds(1));
  CHECK(next.ok());
  CHECK(absl::Now() - deadline_passed < absl::Seconds(1));
  acceptor.join();
}

TEST_CASE(
    "A server half that is stopped, or outlives its deadline, ends its session and frees the "
    "node") {
  ProbeRunner server("127.0.0.1", "127.0.0.1", {});
  auto endpoint = server.StartServer(TcpBw(absl::Seconds(20)), "stopped");
  REQUIRE(endpoint.ok());
  // A client in the middle of a long run.
  probes::ProbeParams p = probes::FromSpec(TcpBw(absl::Seconds(20)));
  p.duration = absl::Seconds(15);
  ProbeRunner client("127.0.0.1", "127.0.0.1", {});
  absl::StatusOr<v1::ProbeResult> result;
  std::thread run([&] { result = client.RunClient(probes::ToSpec(p), *endpoint); });
  absl::SleepFor(absl::Milliseconds(500));
  const absl::Time stopped = absl::Now();
  CHECK(server.StopServer("stopped").ok());
  CHECK(absl::Now() - stopped < absl::Seconds(1));
  run.join();
  CHECK(absl::Now() - stopped < absl::Seconds(2));
  REQUIRE(result.ok());
  CHECK(result->outcome() != v1::PROBE_OK);
  CHECK(server.StartServer(TcpBw(absl::Seconds(20)), "after").ok());
  CHECK(server.StopServer("after").ok());

  // No StopProbeServer at all: the server half's own deadline frees the node.
  REQUIRE(server.StartServer(TcpBw(absl::Seconds(1)), "forgotten").ok());
  const absl::Time started = absl::Now();
  absl::Status next;
  do {
    next = server.StartServer(TcpBw(absl::Seconds(20)), "later").status();
    if (next.ok()) break;
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() - started < absl::Seconds(3));
  CHECK(next.ok());
  CHECK(absl::Now() - started < absl::Seconds(2));
}

}  // namespace fabricctl::agent
