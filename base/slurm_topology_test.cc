#include "base/slurm_topology.h"

#include <catch2/catch.hpp>

namespace fabricctl {

// The example of Slurm's topology.conf(5) manual page (a three-level tree), with its comments.
constexpr char kSlurmManualExample[] = R"(# topology.conf
# Switch Configuration
SwitchName=s0 Nodes=tux[0-5]
SwitchName=s1 Nodes=tux[6-11]
SwitchName=s2 Nodes=tux[12-17]  LinkSpeed=100
SwitchName=s3 Switches=s[0-2]
)";

TEST_CASE("topology.conf: every node's switches from its own upward") {
  auto tree = ParseSlurmTopology(kSlurmManualExample, "topology.conf");
  REQUIRE(tree.ok());
  CHECK(tree->size() == 18);
  CHECK(tree->at("tux0") == std::vector<std::string>{"s0", "s3"});
  CHECK(tree->at("tux17") == std::vector<std::string>{"s2", "s3"});
}

TEST_CASE("topology.conf: keys in any case, continuations, a switch without parent") {
  auto tree =
      ParseSlurmTopology("switchname=leaf1 \\\n  nodes=a,b\nSWITCHNAME=leaf2 NODES=c\n", "t");
  REQUIRE(tree.ok());
  CHECK(tree->at("b") == std::vector<std::string>{"leaf1"});
  CHECK(tree->at("c") == std::vector<std::string>{"leaf2"});
}

TEST_CASE("topology.conf: errors name the file and the line") {
  auto twice =
      ParseSlurmTopology("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n", "topo.conf");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message() == "topo.conf:2: node 'n2' is under both a and b");
  auto no_name = ParseSlurmTopology("\n\nNodes=n1\n", "topo.conf");
  REQUIRE_FALSE(no_name.ok());
  CHECK(no_name.status().message() == "topo.conf:3: a line without SwitchName=");
  auto bad = ParseSlurmTopology("SwitchName=a Nodes=n[1-\n", "topo.conf");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("topo.conf:1: ") == 0);
  auto cycle =
      ParseSlurmTopology("SwitchName=a Nodes=n1 Switches=b\nSwitchName=b Switches=a\n", "t");
  REQUIRE_FALSE(cycle.ok());
  CHECK(cycle.status().message().find("cycle") != std::string::npos);
  auto junk = ParseSlurmTopology("SwitchName=a garbage\n", "t");
  REQUIRE_FALSE(junk.ok());
  CHECK(junk.status().message() == "t:1: expected KEY=VALUE, got 'garbage'");
}

}  // namespace fabricctl
