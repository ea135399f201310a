// A node's configuration against reference nodes' (ConfigAgainstReferences), on constructed
// inventories.
#include "controller/verdict/reference_config.h"

#include <catch2/catch.hpp>
#include <deque>
#include <vector>

namespace fabricctl::controller {
namespace {

v1::NodeInventory Built(uint32_t mtu, double rate_gbps) {
  v1::NodeInventory inv;
  inv.set_agent_version("0.2.0");
  auto* eth = inv.add_interfaces();
  eth->set_name("eth0");
  eth->add_addresses("10.0.0.1");
  eth->set_speed_mbps(400000);
  eth->set_mtu(mtu);
  auto* port = inv.add_rdma_devices()->add_ports();
  inv.mutable_rdma_devices(0)->set_name("mlx5_0");
  port->set_port(1);
  port->set_rate_gbps(rate_gbps);
  port->set_active_mtu(4096);
  port->set_link_layer("Ethernet");
  return inv;
}

// Nodes as the rule sees them, and the inventories they view.
struct Fleet {
  std::deque<v1::NodeInventory> inventories;
  std::vector<NodeFacts> nodes;
  operator const std::vector<NodeFacts>&() const { return nodes; }  // NOLINT: a test's shorthand
};

void Add(Fleet& fleet, const std::string& name, const v1::NodeInventory& inv,
         bool reachable = true) {
  v1::NodeInventory& inventory = fleet.inventories.emplace_back(inv);
  inventory.set_node_name(name);
  inventory.set_agent_started_unix_ms(fleet.nodes.size() + 1);
  fleet.nodes.push_back(NodeFacts{name, reachable, inventory});
}

TEST_CASE("nodes built like the references, each started at its own time, differ in nothing") {
  Fleet fleet;
  Add(fleet, "ref-1", Built(9000, 400));
  Add(fleet, "ref-2", Built(9000, 400));
  Add(fleet, "new-1", Built(9000, 400));
  CHECK(ConfigAgainstReferences(fleet, {"ref-1", "ref-2"}).empty());
}

TEST_CASE("a new node with a smaller MTU and a slower port is config_drift, naming both") {
  Fleet fleet;
  Add(fleet, "ref-1", Built(9000, 400));
  Add(fleet, "new-1", Built(1500, 200));
  Add(fleet, "new-2", Built(9000, 400));
  const auto findings = ConfigAgainstReferences(fleet, {"ref-1"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].kind() == "config_drift");
  CHECK(findings[0].node() == "new-1");
  CHECK(findings[0].severity() == v1::SEVERITY_CRITICAL);
  CHECK(findings[0].evidence().at("reference") == "ref-1");
  CHECK(findings[0].evidence().at("differences") == "2");
  CHECK_THAT(findings[0].detail(), Catch::Contains("eth0: 400000 Mb/s, MTU 9000 -> "
                                                   "400000 Mb/s, MTU 1500"));
  CHECK_THAT(findings[0].detail(), Catch::Contains("mlx5_0:1: 400 Gb/s"));
  CHECK(findings[0].evidence().at("node.interface eth0") == "400000 Mb/s, MTU 1500");
  CHECK(findings[0].evidence().at("reference.interface eth0") == "400000 Mb/s, MTU 9000");
  CHECK(findings[0].evidence().at("node.RDMA port mlx5_0:1") == "200 Gb/s, MTU 4096, Ethernet");
}

// Built() with mlx5_0's firmware as its agent reads it ("" for an agent that does not).
v1::NodeInventory WithFirmware(const std::string& fw_ver) {
  v1::NodeInventory inv = Built(9000, 400);
  inv.mutable_rdma_devices(0)->set_fw_ver(fw_ver);
  return inv;
}

TEST_CASE("older NIC firmware is config_drift; an agent that does not read firmware is not") {
  Fleet fleet;
  Add(fleet, "ref-1", WithFirmware("28.39.1002"));
  Add(fleet, "new-1", WithFirmware("28.36.1010"));
  Add(fleet, "new-2", WithFirmware(""));
  Add(fleet, "new-3", WithFirmware("28.39.1002"));
  const auto findings = ConfigAgainstReferences(fleet, {"ref-1"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].node() == "new-1");
  CHECK(findings[0].evidence().at("differences") == "1");
  CHECK_THAT(findings[0].detail(),
             Catch::Contains("RDMA device mlx5_0 firmware: 28.39.1002 -> 28.36.1010"));
  CHECK(findings[0].evidence().at("node.RDMA device mlx5_0 firmware") == "28.36.1010");
  CHECK(findings[0].evidence().at("reference.RDMA device mlx5_0 firmware") == "28.39.1002");
}

TEST_CASE("each node is judged against the reference of its own kind") {
  Fleet fleet;
  Add(fleet, "ref-a", Built(9000, 400));
  Add(fleet, "ref-b", Built(9000, 200));  // an older generation, also in service
  Add(fleet, "new-a", Built(9000, 400));
  Add(fleet, "new-b", Built(9000, 200));
  CHECK(ConfigAgainstReferences(fleet, {"ref-a", "ref-b"}).empty());
}

TEST_CASE("without a reachable reference there is nothing to compare against") {
  Fleet fleet;
  Add(fleet, "ref-1", Built(9000, 400), /*reachable=*/false);
  Add(fleet, "new-1", Built(1500, 400));
  CHECK(ConfigAgainstReferences(fleet, {"ref-1"}).empty());
  CHECK(ConfigAgainstReferences(fleet, {}).empty());
}

TEST_CASE("an unreachable node is not judged: its inventory is not known") {
  Fleet fleet;
  Add(fleet, "ref-1", Built(9000, 400));
  Add(fleet, "new-1", v1::NodeInventory(), /*reachable=*/false);
  CHECK(ConfigAgainstReferences(fleet, {"ref-1"}).empty());
}

}  // namespace
TEST_CASE("config_drift is against what most references have, saying how many") {
  Fleet fleet;
  Add(fleet, "ref-1", WithFirmware("28.39.1002"));
  Add(fleet, "ref-2", WithFirmware("28.39.1002"));
  Add(fleet, "ref-3", WithFirmware("28.36.1010"));  // one reference behind
  Add(fleet, "new-1", WithFirmware("28.36.1010"));  // like the odd one: still drift
  Add(fleet, "new-2", WithFirmware("28.39.1002"));  // like most: none
  const auto findings = ConfigAgainstReferences(fleet, {"ref-1", "ref-2", "ref-3"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].node() == "new-1");
  CHECK_THAT(findings[0].detail(),
             Catch::Contains("RDMA device mlx5_0 firmware: 28.39.1002 -> 28.36.1010 (2 of 3 "
                             "references)"));
  CHECK(findings[0].evidence().at("references_holding.RDMA device mlx5_0 firmware") == "2");
  CHECK(findings[0].evidence().at("references") == "3");
}

}  // namespace fabricctl::controller
