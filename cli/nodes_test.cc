#include "cli/nodes.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"

namespace fabricctl::cli {
namespace {

v1::ListNodesResponse ThreeNodes(absl::Time now) {
  v1::ListNodesResponse response;
  response.mutable_stale_after()->set_seconds(30);
  auto* a = response.add_nodes();
  a->mutable_inventory()->set_node_name("node-a");
  a->mutable_inventory()->set_agent_address("127.0.0.1:7401");
  a->mutable_inventory()->set_agent_version("0.1.0");
  a->mutable_inventory()->add_rdma_devices()->set_name("mlx5_0");
  a->set_state(v1::NODE_ONLINE);
  a->mutable_last_seen()->set_seconds(absl::ToUnixSeconds(now) - 3);
  a->mutable_known_good()->set_sweep_id(12);
  a->mutable_known_good()->mutable_passed()->set_seconds(absl::ToUnixSeconds(now) - 3 * 3600);
  a->mutable_known_good()->add_probes(v1::TCP_BW);
  a->mutable_known_good()->add_rails()->set_peers(3);
  auto* b = response.add_nodes();
  b->mutable_inventory()->set_node_name("node-b");
  b->mutable_inventory()->set_agent_address("127.0.0.1:7402");
  b->set_state(v1::NODE_STALE);
  b->mutable_last_seen()->set_seconds(absl::ToUnixSeconds(now) - 600);
  b->mutable_known_good()->set_sweep_id(11);
  b->mutable_known_good()->mutable_passed()->set_seconds(absl::ToUnixSeconds(now) - 86400);
  b->mutable_known_good()->mutable_lost()->set_seconds(absl::ToUnixSeconds(now) - 300);
  b->mutable_known_good()->set_lost_why("its agent restarted");
  auto* c = response.add_nodes();
  c->mutable_inventory()->set_node_name("node-c");
  c->mutable_inventory()->set_agent_address("127.0.0.1:7403");
  c->set_state(v1::NODE_ONLINE);
  c->mutable_last_seen()->set_seconds(absl::ToUnixSeconds(now) - 1);
  return response;
}

}  // namespace

TEST_CASE("The text table shows state, age, known-good state, address and RDMA devices") {
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  std::ostringstream out;
  RenderNodesText(ThreeNodes(now), now, out);
  CHECK(out.str() ==
        "NODE    STATE   LAST SEEN  KNOWN-GOOD                   ADDRESS         RDMA    GPUS  "
        "VERSION\n"
        "node-a  online  3s ago     sweep 12, 3h ago, tcp_bw x3  127.0.0.1:7401  mlx5_0  0     "
        "0.1.0\n"
        "node-b  stale   10m ago    lost 5m ago                  127.0.0.1:7402  none    0     \n"
        "node-c  online  1s ago     never                        127.0.0.1:7403  none    0     \n"
        "3 nodes: 2 online, 1 stale (stale after 30s without a heartbeat)\n"
        "  no longer known-good: node-b: its agent restarted\n");
}

TEST_CASE("The RDMA column carries the devices' firmware, each version where they differ") {
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  v1::ListNodesResponse response = ThreeNodes(now);
  auto* inv = response.mutable_nodes(0)->mutable_inventory();
  inv->mutable_rdma_devices(0)->set_fw_ver("28.39.1002");
  auto* second = inv->add_rdma_devices();
  second->set_name("mlx5_1");
  second->set_fw_ver("28.39.1002");
  std::ostringstream same;
  RenderNodesText(response, now, same);
  CHECK(same.str().find("mlx5_0,mlx5_1 fw 28.39.1002  ") != std::string::npos);
  second->set_fw_ver("28.35.2000");
  std::ostringstream mixed;
  RenderNodesText(response, now, mixed);
  CHECK(mixed.str().find("mlx5_0,mlx5_1 fw 28.39.1002/28.35.2000  ") != std::string::npos);
}

TEST_CASE("An empty registry says so") {
  std::ostringstream out;
  v1::ListNodesResponse empty;
  RenderNodesText(empty, absl::Now(), out);
  CHECK(out.str() == "0 nodes: 0 online, 0 stale (stale after 0s without a heartbeat)\n");
}

TEST_CASE("JSON output round-trips through the proto") {
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  std::string json = RenderNodesJson(ThreeNodes(now));
  CHECK(json.find("\"node_name\": \"node-a\"") != std::string::npos);
  CHECK(json.find("\"NODE_STALE\"") != std::string::npos);
  v1::ListNodesResponse parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  CHECK(parsed.nodes_size() == 3);
  CHECK(parsed.nodes(0).known_good().sweep_id() == 12);
  CHECK(parsed.nodes(1).state() == v1::NODE_STALE);
}

TEST_CASE("Ages read naturally") {
  CHECK(FormatAge(absl::Seconds(5)) == "5s ago");
  CHECK(FormatAge(absl::Seconds(119)) == "119s ago");
  CHECK(FormatAge(absl::Minutes(5)) == "5m ago");
  CHECK(FormatAge(absl::Hours(3)) == "3h ago");
  CHECK(FormatAge(absl::Hours(72)) == "3d ago");
  CHECK(FormatAge(-absl::Seconds(2)) == "0s ago");
}

TEST_CASE("A controller that is not running is UNKNOWN within the deadline") {
  NodesOptions options;
  options.controller.address = "127.0.0.1:1";
  options.controller.timeout = absl::Seconds(3);
  std::ostringstream out, err;
  absl::Time start = absl::Now();
  CHECK(RunNodes(options, out, err) == 3);
  CHECK(absl::Now() - start < absl::Seconds(4));
  CHECK(err.str().rfind("fabricctl nodes: controller 127.0.0.1:1 ", 0) == 0);
  CHECK(out.str().empty());
}

TEST_CASE("A bad format is UNKNOWN before any call") {
  NodesOptions options;
  options.format = "yaml";
  std::ostringstream out, err;
  CHECK(RunNodes(options, out, err) == 3);
  CHECK(err.str() == "fabricctl nodes: --format: 'yaml' is not text or json\n");
}

}  // namespace fabricctl::cli
