// A node's rails' cabling against the reference nodes' (CablingAgainstReferences), on
// constructed inventories.
#include "controller/sweep/cabling.h"

#include <catch2/catch.hpp>
#include <memory>

namespace fabricctl::controller::sweep {
namespace {

// A node with eth0 on `leaf0` and eth1 on `leaf1` ("" : no LLDP neighbour).
void Add(Fleet& fleet, const std::string& name, const std::string& leaf0,
         const std::string& leaf1) {
  auto node = std::make_unique<Node>();
  node->name = name;
  int i = 0;
  for (const std::string& leaf : {leaf0, leaf1}) {
    auto* itf = node->inventory.add_interfaces();
    itf->set_name("eth" + std::to_string(i++));
    if (!leaf.empty()) {
      itf->mutable_lldp()->set_system_name(leaf);
      itf->mutable_lldp()->set_port_id("swp" + std::to_string(fleet.nodes.size() + 1));
    }
  }
  fleet.nodes.push_back(std::move(node));
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

TEST_CASE("new nodes cabled as the references are raise nothing, on any leaf of the rail") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf-a", "r1-leaf-a");
  Add(fleet, "ref-2", "r0-leaf-b", "r1-leaf-b");
  Add(fleet, "new-1", "r0-leaf-b", "r1-leaf-a");
  CHECK(CablingAgainstReferences(fleet, Rails(), {"ref-1", "ref-2"}).empty());
}

TEST_CASE("a rail-1 NIC on rail 0's leaf is miscabled, naming the node, rail, seen and expected") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");
  Add(fleet, "ref-2", "r0-leaf", "r1-leaf");
  Add(fleet, "new-1", "r0-leaf", "r0-leaf");
  Add(fleet, "new-2", "r0-leaf", "r1-leaf");
  const auto findings = CablingAgainstReferences(fleet, Rails(), {"ref-1", "ref-2"});
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
  const auto findings = CablingAgainstReferences(fleet, Rails(), {"ref-1"});
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
  CHECK(CablingAgainstReferences(fleet, Rails(), {"ref-1", "ref-2"}).empty());
}

TEST_CASE("two rails' NICs on one switch none of the references shows are both miscabled") {
  Fleet fleet;
  Add(fleet, "ref-1", "su1-r0", "su1-r1");
  Add(fleet, "new-1", "su2-r0", "su2-r0");
  const auto findings = CablingAgainstReferences(fleet, Rails(), {"ref-1"});
  REQUIRE(findings.size() == 2);
  CHECK_THAT(findings[0].detail(), Catch::Contains("the same switch as its eth1 (rail1)"));
  CHECK_THAT(findings[1].detail(), Catch::Contains("the same switch as its eth0 (rail0)"));
  // Where the references' own rails share a switch (one top-of-rack for every NIC), sharing
  // one is no fault.
  Fleet flat;
  Add(flat, "ref-1", "tor-1", "tor-1");
  Add(flat, "new-1", "tor-2", "tor-2");
  CHECK(CablingAgainstReferences(flat, Rails(), {"ref-1"}).empty());
}

TEST_CASE("a NIC with no neighbour where the references have one is miscabled") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "r1-leaf");
  Add(fleet, "new-1", "r0-leaf", "");
  const auto findings = CablingAgainstReferences(fleet, Rails(), {"ref-1"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].evidence().at("seen") == "none");
}

TEST_CASE("a rail no reference shows a neighbour for, or no rails, judge nothing") {
  Fleet fleet;
  Add(fleet, "ref-1", "r0-leaf", "");
  Add(fleet, "new-1", "", "r0-leaf");
  const auto findings = CablingAgainstReferences(fleet, Rails(), {"ref-1"});
  REQUIRE(findings.size() == 1);  // rail0 only: rail1's references show no neighbour
  CHECK(findings[0].rail() == "rail0");
  CHECK(CablingAgainstReferences(fleet, {}, {"ref-1"}).empty());
  CHECK(CablingAgainstReferences(fleet, Rails(), {}).empty());
}

}  // namespace
}  // namespace fabricctl::controller::sweep
