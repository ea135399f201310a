#include "controller/service.h"

#include <unistd.h>

#include <catch2/catch.hpp>

namespace fabricctl::controller {
namespace {

std::unique_ptr<Store> FreshStore() {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/registry.db";
  for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((path + suffix).c_str());
  auto store = Store::Open(path);
  REQUIRE(store.ok());
  return *std::move(store);
}

v1::RegisterRequest Registration(const std::string& name) {
  v1::RegisterRequest request;
  request.mutable_inventory()->set_node_name(name);
  request.mutable_inventory()->set_agent_address("127.0.0.1:7401");
  return request;
}

}  // namespace

TEST_CASE("Registration, heartbeats and staleness follow the injected clock") {
  auto store = FreshStore();
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  RegistryOptions options;
  options.heartbeat_interval = absl::Seconds(1);
  options.stale_after = absl::Seconds(3);
  options.now = [&] { return now; };
  ControllerServiceImpl service(store.get(), options);
  grpc::ServerContext context;

  v1::RegisterResponse registered;
  auto request = Registration("node-1");
  REQUIRE(service.Register(&context, &request, &registered).ok());
  CHECK(registered.heartbeat_interval().seconds() == 1);

  v1::ListNodesRequest list;
  v1::ListNodesResponse nodes;
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  REQUIRE(nodes.nodes_size() == 1);
  CHECK(nodes.nodes(0).state() == v1::NODE_ONLINE);
  CHECK(nodes.stale_after().seconds() == 3);

  now += absl::Seconds(4);
  nodes.Clear();
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  CHECK(nodes.nodes(0).state() == v1::NODE_STALE);

  v1::HeartbeatRequest beat;
  beat.set_node_name("node-1");
  v1::HeartbeatResponse beat_response;
  REQUIRE(service.Heartbeat(&context, &beat, &beat_response).ok());
  CHECK(beat_response.known());
  nodes.Clear();
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  CHECK(nodes.nodes(0).state() == v1::NODE_ONLINE);
  CHECK(nodes.nodes(0).last_seen().seconds() == 1'700'000'004);
  CHECK(nodes.nodes(0).first_seen().seconds() == 1'700'000'000);

  beat.set_node_name("node-unknown");
  REQUIRE(service.Heartbeat(&context, &beat, &beat_response).ok());
  CHECK_FALSE(beat_response.known());
}

TEST_CASE("A bad registration is refused with INVALID_ARGUMENT and stores nothing") {
  auto store = FreshStore();
  ControllerServiceImpl service(store.get(), RegistryOptions{});
  grpc::ServerContext context;
  v1::RegisterResponse response;

  auto check_refused = [&](v1::RegisterRequest request, const std::string& needle) {
    grpc::Status status = service.Register(&context, &request, &response);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(status.error_message().find(needle) != std::string::npos);
  };
  check_refused(Registration(""), "inventory.node_name is empty");
  check_refused(Registration("bad name"), "may hold only");
  check_refused(Registration(std::string(300, 'a')), "longer than 253");
  auto no_port = Registration("n1");
  no_port.mutable_inventory()->set_agent_address("127.0.0.1");
  check_refused(no_port, "inventory.agent_address");
  auto port_zero = Registration("n1");
  port_zero.mutable_inventory()->set_agent_address("127.0.0.1:0");
  check_refused(port_zero, "port 0");
  auto too_many = Registration("n1");
  for (int i = 0; i < 65; ++i) too_many.mutable_inventory()->add_gpus();
  check_refused(too_many, "inventory.gpus has 65 entries; at most 64");

  auto nodes = store->ListNodes({});
  REQUIRE(nodes.ok());
  CHECK(nodes->empty());
}

}  // namespace fabricctl::controller
