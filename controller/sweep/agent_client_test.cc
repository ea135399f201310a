// The controller's gRPC client of the agents, against a real gRPC server on loopback.
#include "controller/sweep/agent_client.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "proto/agent.grpc.pb.h"

namespace fabricctl::controller::sweep {
namespace {

// An agent that answers GetInventory with its name.
class NamedAgent : public v1::AgentService::Service {
  grpc::Status GetInventory(grpc::ServerContext*, const v1::GetInventoryRequest*,
                            v1::NodeInventory* out) override {
    out->set_node_name("node-a");
    return grpc::Status::OK;
  }
};

// A server on 127.0.0.1:`port` (0: any), and the port it listens on.
std::unique_ptr<grpc::Server> Serve(NamedAgent& agent, int port, int* bound) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                           bound);
  builder.RegisterService(&agent);
  return builder.BuildAndStart();
}

}  // namespace

TEST_CASE("an agent that listens a moment after the first connect failed still answers") {
  NamedAgent agent;
  int port = 0;
  Serve(agent, 0, &port)->Shutdown();  // a free port, nothing listening on it now
  REQUIRE(port > 0);
  auto client = NewGrpcAgentClient(grpc::InsecureChannelCredentials());
  std::unique_ptr<grpc::Server> late;
  std::thread starter([&] {
    absl::SleepFor(absl::Milliseconds(300));
    int again = 0;
    late = Serve(agent, port, &again);
  });
  auto inventory = client->GetInventory("127.0.0.1:" + std::to_string(port), absl::Seconds(10));
  starter.join();
  REQUIRE(inventory.ok());
  CHECK(inventory->node_name() == "node-a");
  late->Shutdown();
}

TEST_CASE("an agent that never listens: unreachable, with the connect's reason, not a deadline") {
  NamedAgent agent;
  int port = 0;
  Serve(agent, 0, &port)->Shutdown();
  auto client = NewGrpcAgentClient(grpc::InsecureChannelCredentials());
  auto inventory = client->GetInventory("127.0.0.1:" + std::to_string(port), absl::Seconds(2));
  REQUIRE_FALSE(inventory.ok());
  CHECK(absl::IsUnavailable(inventory.status()));
  INFO(inventory.status().message());
  CHECK(inventory.status().message().find("connect") != std::string::npos);
}

}  // namespace fabricctl::controller::sweep
