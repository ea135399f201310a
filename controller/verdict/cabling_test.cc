// A new node's cabling against the plan, the rails' leaf patterns and the reference nodes'
// (CablingOfNewNodes), on
// constructed inventories.
#include "controller/verdict/cabling.h"

#include <catch2/catch.hpp>
#include <deque>
#include <vector>

#include "absl/strings/str_format.h"

namespace fabricctl::controller {
namespace {

// Nodes as the rule sees them, and the inventories they view.
struct Fleet {
  std::deque<v1::NodeInventory> inventories;
  std::vector<NodeFacts> nodes;
  operator const std::vector<NodeFacts>&() const { return nodes; }  // NOLINT: a test's shorthand
};

// A node with eth0 on `leaf0` and eth1 on `leaf1` ("" : no LLDP neighbour).
void Add(Fleet& fleet, const std::string& name, const std::string& leaf0,
         const std::string& leaf1) {
  v1::NodeInventory& inventory = fleet.inventories.emplace_back();
  int i = 0;
  for (const std::string& leaf : {leaf0, leaf1}) {
    auto* itf = inventory.add_interfaces();
    itf->set_name("eth" + std::to_string(i++));
    if (!leaf.empty()) {
      itf->mutable_lldp()->set_system_name(leaf);
      itf->mutable_lldp()->set_port_id("swp" + std::to_string(fleet.nodes.size() + 1));
    }
  }
  fleet.nodes.push_back(NodeFacts{name, true, inventory});
}

google::protobuf::RepeatedPtrField<v1::Rail> Rails() {
  google::protobuf::RepeatedPtrField<v1::Rail> rails;
  for (int i = 0; i < 2; ++i) {
    v1::Rail* rail = rails.Add();
    rail->set_name("rail" + std::to_string(i));
    rail->set_netdev("eth" + std::to_string(i));
  }
  return rails;
}

v1::Config Config() {
  v1::Config config;
  *config.mutable_rails() = Rails();
  return config;
}

TEST_CASE("new nodes cabled as the references are raise nothing, on any leaf of the rail") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf-a", "r1-leaf-a");
  Add(fleet, "ref-2", "r0-leaf-b", "r1-leaf-b");
  Add(fleet, "new-1", "r0-leaf-b", "r1-leaf-a");
  CHECK(CablingOfNewNodes(fleet, Config(), {"ref-1", "ref-2"}).empty());
}

TEST_CASE("a rail-1 NIC on rail 0's leaf is miscabled, naming the node, rail, seen and expected") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");
  Add(fleet, "ref-2", "r0-leaf", "r1-leaf");
  Add(fleet, "new-1", "r0-leaf", "r0-leaf");
  Add(fleet, "new-2", "r0-leaf", "r1-leaf");
  const auto findings = CablingOfNewNodes(fleet, Config(), {"ref-1", "ref-2"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].kind() == "miscabled");
  CHECK(findings[0].node() == "new-1");
  CHECK(findings[0].rail() == "rail1");
  CHECK(findings[0].device() == "eth1");
  CHECK(findings[0].evidence().at("seen") == "r0-leaf");
  CHECK(findings[0].evidence().at("expected") == "r1-leaf");
  CHECK_THAT(findings[0].detail(), Catch::Contains("a leaf of rail0"));
}

TEST_CASE("two NICs swapped are two findings, each naming the other's rail") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");
  Add(fleet, "new-1", "r1-leaf", "r0-leaf");
  const auto findings = CablingOfNewNodes(fleet, Config(), {"ref-1"});
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].rail() == "rail0");
  CHECK_THAT(findings[0].detail(), Catch::Contains("a leaf of rail1"));
  CHECK(findings[1].rail() == "rail1");
  CHECK_THAT(findings[1].detail(), Catch::Contains("a leaf of rail0"));
}

TEST_CASE("a new rack on leaves of its own, one per rail, is not judged miscabled") {
  Fleet fleet;
  Add(fleet, "ref-1", "su1-r0", "su1-r1");
  Add(fleet, "ref-2", "su1-r0", "su1-r1");
  Add(fleet, "new-1", "su2-r0", "su2-r1");  // the new scalable unit's own rail leaves
  CHECK(CablingOfNewNodes(fleet, Config(), {"ref-1", "ref-2"}).empty());
}

TEST_CASE("two rails' NICs on one switch none of the references shows are both miscabled") {
  Fleet fleet;
  Add(fleet, "ref-1", "su1-r0", "su1-r1");
  Add(fleet, "new-1", "su2-r0", "su2-r0");
  const auto findings = CablingOfNewNodes(fleet, Config(), {"ref-1"});
  REQUIRE(findings.size() == 2);
  CHECK_THAT(findings[0].detail(), Catch::Contains("the same switch as its eth1 (rail1)"));
  CHECK_THAT(findings[1].detail(), Catch::Contains("the same switch as its eth0 (rail0)"));
  // Where the references' own rails share a switch (one top-of-rack for every NIC), sharing
  // one is no fault.
  Fleet flat;
  Add(flat, "ref-1", "tor-1", "tor-1");
  Add(flat, "new-1", "tor-2", "tor-2");
  CHECK(CablingOfNewNodes(flat, Config(), {"ref-1"}).empty());
}

TEST_CASE("a NIC with no neighbour where the references have one is miscabled") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");
  Add(fleet, "new-1", "r0-leaf", "");
  const auto findings = CablingOfNewNodes(fleet, Config(), {"ref-1"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].evidence().at("seen") == "none");
}

TEST_CASE("a rail no reference shows a neighbour for, or no rails, judge nothing") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "");
  Add(fleet, "new-1", "", "r0-leaf");
  const auto findings = CablingOfNewNodes(fleet, Config(), {"ref-1"});
  REQUIRE(findings.size() == 1);  // rail0 only: rail1's references show no neighbour
  CHECK(findings[0].rail() == "rail0");
  CHECK(CablingOfNewNodes(fleet, v1::Config(), {"ref-1"}).empty());
  CHECK(CablingOfNewNodes(fleet, Config(), {}).empty());
}

void Plan(v1::Config& config, const std::string& node, const std::string& netdev,
          const std::string& switch_name, const std::string& port) {
  v1::Cable* cable = config.mutable_topology()->add_cables();
  cable->set_node(node);
  cable->set_netdev(netdev);
  cable->set_switch_name(switch_name);
  cable->set_port(port);
}

TEST_CASE("the cabling plan: the planned switch and port, or a finding naming both") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");  // eth0 at swp1
  Add(fleet, "new-1", "r0-leaf", "r1-leaf");  // swp2
  Add(fleet, "new-2", "r0-leaf", "r1-leaf");  // swp3
  Add(fleet, "new-3", "r0-leaf", "r1-leaf");  // swp4
  v1::Config config = Config();
  Plan(config, "new-1", "eth0", "r0-leaf", "swp2");  // as planned
  Plan(config, "new-1", "eth1", "r1-leaf", "");      // no port: any port of the switch
  Plan(config, "new-2", "eth0", "r0-leaf", "swp9");  // the wrong port of the right switch
  Plan(config, "new-3", "eth1", "r1-leaf-b", "");    // the rail's leaf, not the planned one
  Plan(config, "new-3", "eth7", "r0-leaf", "swp7");  // an interface it does not have
  const auto findings = CablingOfNewNodes(fleet, config, {"ref-1"});
  REQUIRE(findings.size() == 3);
  CHECK(findings[0].node() == "new-2");
  CHECK(findings[0].rail() == "rail0");
  CHECK(findings[0].evidence().at("expected") == "r0-leaf port swp9");
  CHECK(findings[0].evidence().at("seen") == "r0-leaf port swp3");
  CHECK(findings[0].evidence().at("source") == "cabling plan");
  CHECK_THAT(findings[0].detail(),
             Catch::Contains("new-2's eth0 (rail0) is cabled to r0-leaf port swp3; the cabling "
                             "plan cables it to r0-leaf port swp9"));
  CHECK(findings[1].node() == "new-3");
  CHECK(findings[1].device() == "eth1");
  CHECK(findings[1].evidence().at("expected") == "r1-leaf-b");
  CHECK(findings[2].device() == "eth7");
  CHECK(findings[2].rail().empty());
  CHECK(findings[2].evidence().at("seen") == "no interface");
}

TEST_CASE("the plan wins over the references' rule for the interfaces it names") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");
  Add(fleet, "new-1", "r0-leaf", "r0-leaf");  // eth1 on rail 0's leaf, as planned
  v1::Config config = Config();
  Plan(config, "new-1", "eth1", "r0-leaf", "");
  CHECK(CablingOfNewNodes(fleet, config, {"ref-1"}).empty());
  // Without the plan, the references' rule names it.
  CHECK(CablingOfNewNodes(fleet, Config(), {"ref-1"}).size() == 1);
}

TEST_CASE("a rail's leaf_pattern judges its NICs instead of the references' leaves") {
  Fleet fleet;
  Add(fleet, "ref-1", "leaf-r0-1", "leaf-r1-1");
  Add(fleet, "new-1", "leaf-r0-7", "leaf-r1-7");  // a new rack's own leaves: by the pattern, fine
  Add(fleet, "new-2", "leaf-r0-7", "leaf-r0-8");  // rail 1 on a rail-0 leaf of its own
  Add(fleet, "new-3", "leaf-r0-7", "");           // no neighbour
  v1::Config config = Config();
  config.mutable_rails(0)->set_leaf_pattern("leaf-r0-*");
  config.mutable_rails(1)->set_leaf_pattern("leaf-r1-*");
  const auto findings = CablingOfNewNodes(fleet, config, {"ref-1"});
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].node() == "new-2");
  CHECK(findings[0].rail() == "rail1");
  CHECK(findings[0].evidence().at("seen") == "leaf-r0-8");
  CHECK(findings[0].evidence().at("expected") == "leaf-r1-*");
  CHECK(findings[0].evidence().at("source") == "leaf_pattern");
  CHECK_THAT(findings[0].detail(), Catch::Contains("rail1's leaves match 'leaf-r1-*'"));
  CHECK(findings[1].node() == "new-3");
  CHECK(findings[1].evidence().at("seen") == "none");
  // The same fleet without patterns: new-2's own unknown leaf is not judged by the references.
  CHECK(CablingOfNewNodes(fleet, Config(), {"ref-1"}).size() == 1);  // new-3's missing neighbour
}

TEST_CASE("nothing is judged in a sweep without references") {
  Fleet fleet;
  Add(fleet, "new-1", "x", "y");
  v1::Config config = Config();
  Plan(config, "new-1", "eth0", "r0-leaf", "");
  CHECK(CablingOfNewNodes(fleet, config, {}).empty());
}

}  // namespace
namespace {

// An InfiniBand node: HCAs mlx5_0 (rail0, ib0) and mlx5_1 (rail1, ib1) with GUIDs of its own,
// cabled as `config`'s ibnetdiscover file says (ib_cables: `leaf0`/`leaf1` at `port0`/`port1`;
// "" : not in the file). Its interfaces ib0 and ib1 have no LLDP neighbour.
void AddIb(Fleet& fleet, v1::Config& config, const std::string& name, int guid,
           const std::string& leaf0, const std::string& leaf1, uint32_t port0 = 1,
           uint32_t port1 = 1) {
  v1::NodeInventory& inventory = fleet.inventories.emplace_back();
  for (int i = 0; i < 2; ++i) {
    inventory.add_interfaces()->set_name("ib" + std::to_string(i));
    v1::RdmaDevice* hca = inventory.add_rdma_devices();
    hca->set_name("mlx5_" + std::to_string(i));
    // sysfs's form; ibnetdiscover writes the same GUID as 0x...
    hca->set_node_guid(absl::StrFormat("0c42:a103:00%02x:%04x", guid, i));
    v1::RdmaPort* port = hca->add_ports();
    port->set_port(1);
    port->set_netdev("ib" + std::to_string(i));
    const std::string& leaf = i == 0 ? leaf0 : leaf1;
    if (leaf.empty()) continue;
    v1::IbCable* cable = config.mutable_topology()->add_ib_cables();
    cable->set_node(name);
    cable->set_device(hca->name());
    cable->set_ca_guid(absl::StrFormat("0x0c42a10300%02x%04x", guid, i));
    cable->set_port(1);
    cable->set_switch_name(leaf);
    cable->set_switch_port(i == 0 ? port0 : port1);
  }
  fleet.nodes.push_back(NodeFacts{name, true, inventory});
}

v1::Config IbConfig() {
  v1::Config config;
  for (int i = 0; i < 2; ++i) {
    v1::Rail* rail = config.add_rails();
    rail->set_name("rail" + std::to_string(i));
    rail->set_netdev("ib" + std::to_string(i));
  }
  return config;
}

}  // namespace

TEST_CASE("InfiniBand: ibnetdiscover's view where LLDP sees nothing, matched by the HCA's GUID") {
  Fleet fleet;
  v1::Config config = IbConfig();
  AddIb(fleet, config, "ref-1", 1, "r0-leaf", "r1-leaf");
  AddIb(fleet, config, "ref-2", 2, "r0-leaf", "r1-leaf");
  AddIb(fleet, config, "new-1", 3, "r0-leaf", "r1-leaf");  // as the references
  AddIb(fleet, config, "new-2", 4, "r1-leaf", "r0-leaf");  // its HCAs swapped
  AddIb(fleet, config, "new-3", 5, "r0-leaf", "");         // mlx5_1 cabled to nothing
  const auto findings = CablingOfNewNodes(fleet, config, {"ref-1", "ref-2"});
  REQUIRE(findings.size() == 3);
  CHECK(findings[0].node() == "new-2");
  CHECK(findings[0].rail() == "rail0");
  CHECK(findings[0].evidence().at("seen") == "r1-leaf");
  CHECK(findings[0].evidence().at("seen_by") == "ibnetdiscover");
  CHECK_THAT(findings[0].detail(),
             Catch::Contains("new-2's ib0 (rail0) is cabled to r1-leaf, a leaf of rail1 (port 1)"));
  CHECK(findings[1].node() == "new-2");
  CHECK(findings[1].rail() == "rail1");
  CHECK(findings[2].node() == "new-3");
  CHECK(findings[2].rail() == "rail1");
  CHECK_THAT(findings[2].detail(),
             Catch::Contains("new-3's ib1 (rail1) has no neighbour (neither LLDP nor "
                             "ibnetdiscover shows one)"));

  SECTION("by the NodeDescription's HCA name where the GUID is not in the file") {
    for (auto& cable : *config.mutable_topology()->mutable_ib_cables()) cable.set_ca_guid("");
    CHECK(CablingOfNewNodes(fleet, config, {"ref-1", "ref-2"}).size() == 3);
  }
}

TEST_CASE("InfiniBand: a node the ibnetdiscover file predates is not judged by the references") {
  Fleet fleet;
  v1::Config config = IbConfig();
  AddIb(fleet, config, "ref-1", 1, "r0-leaf", "r1-leaf");
  AddIb(fleet, config, "new-1", 2, "", "");  // cabled after the file was taken
  CHECK(CablingOfNewNodes(fleet, config, {"ref-1"}).empty());
  // A plan's cable for it says so, naming what to do.
  Plan(config, "new-1", "mlx5_0", "r0-leaf", "");
  const auto planned = CablingOfNewNodes(fleet, config, {"ref-1"});
  REQUIRE(planned.size() == 1);
  CHECK_THAT(planned[0].detail(), Catch::Contains("file does not show this node"));
  CHECK(planned[0].rail() == "rail0");  // the plan's HCA is rail0's
}

TEST_CASE("InfiniBand: each port of a two-port HCA by its own cable") {
  Fleet fleet;
  v1::Config config = IbConfig();
  // One HCA, mlx5_0, carrying ib0 on port 1 (rail0) and ib1 on port 2 (rail1).
  for (const std::string name : {"ref-1", "new-1"}) {
    v1::NodeInventory& inventory = fleet.inventories.emplace_back();
    v1::RdmaDevice* hca = inventory.add_rdma_devices();
    hca->set_name("mlx5_0");
    hca->set_node_guid(name == "ref-1" ? "0000:0000:0000:0a01" : "0000:0000:0000:0b01");
    for (uint32_t p = 1; p <= 2; ++p) {
      inventory.add_interfaces()->set_name("ib" + std::to_string(p - 1));
      v1::RdmaPort* port = hca->add_ports();
      port->set_port(p);
      port->set_netdev("ib" + std::to_string(p - 1));
      v1::IbCable* cable = config.mutable_topology()->add_ib_cables();
      cable->set_node(name);
      cable->set_device("mlx5_0");
      cable->set_ca_guid(name == "ref-1" ? "0xa01" : "0xb01");
      cable->set_port(p);
      // new-1's two ports swapped
      cable->set_switch_name((p == 1) == (name == "ref-1") ? "r0-leaf" : "r1-leaf");
      cable->set_switch_port(p);
    }
    fleet.nodes.push_back(NodeFacts{name, true, inventory});
  }
  const auto findings = CablingOfNewNodes(fleet, config, {"ref-1"});
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].rail() == "rail0");
  CHECK(findings[0].evidence().at("seen") == "r1-leaf");
  CHECK(findings[1].rail() == "rail1");
  CHECK(findings[1].evidence().at("seen") == "r0-leaf");
}

TEST_CASE("InfiniBand: the cabling plan names an HCA, judged at ibnetdiscover's switch port") {
  Fleet fleet;
  v1::Config config = IbConfig();
  AddIb(fleet, config, "ref-1", 1, "r0-leaf", "r1-leaf");
  AddIb(fleet, config, "new-1", 2, "r0-leaf", "r1-leaf", /*port0=*/9, /*port1=*/3);
  Plan(config, "new-1", "mlx5_0", "r0-leaf", "7");  // the wrong port of the right switch
  Plan(config, "new-1", "mlx5_1", "r1-leaf", "3");  // as planned
  const auto findings = CablingOfNewNodes(fleet, config, {"ref-1"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].device() == "mlx5_0");
  CHECK(findings[0].evidence().at("expected") == "r0-leaf port 7");
  CHECK(findings[0].evidence().at("seen") == "r0-leaf port 9");
  CHECK(findings[0].evidence().at("seen_by") == "ibnetdiscover");
  CHECK_THAT(findings[0].detail(),
             Catch::Contains("new-1's mlx5_0 (rail0) is cabled to r0-leaf port 9 (ibnetdiscover); "
                             "the cabling plan cables it to r0-leaf port 7"));
  CHECK(findings[0].rail() == "rail0");  // the HCA whose port carries rail0's ib0
}

}  // namespace fabricctl::controller
