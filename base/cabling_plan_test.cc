#include "base/cabling_plan.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "tests/testing/testing.h"

namespace fabricctl {
namespace {

constexpr char kPlan[] = R"(# node  netdev  switch     port
gpu001    eth0    leaf-r0-a  Ethernet1/1
gpu001    eth1    leaf-r1-a  Ethernet1/1   # rail 1
gpu[002-003] eth0 leaf-r0-a

)";

TEST_CASE("cabling plan: cables with and without ports, a hostlist, comments") {
  auto plan = ParseCablingPlan(kPlan, "cabling.txt");
  REQUIRE(plan.ok());
  REQUIRE(plan->size() == 4);
  CHECK((*plan)[1].node() == "gpu001");
  CHECK((*plan)[1].netdev() == "eth1");
  CHECK((*plan)[1].switch_name() == "leaf-r1-a");
  CHECK((*plan)[1].port() == "Ethernet1/1");
  CHECK((*plan)[3].node() == "gpu003");
  CHECK((*plan)[3].port().empty());
  // A list of nodes is a hostlist too: a cable each.
  auto listed = ParseCablingPlan("a,b eth0 s\n", "plan");
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[1].node() == "b");
}

TEST_CASE("cabling plan: every mistake names the file and the line") {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c : {
           Case{"a eth0\n", "plan:1: expected 'node netdev switch [port]', got 2 fields"},
           Case{"a eth0 s p x\n", "plan:1: expected 'node netdev switch [port]', got 5 fields"},
           Case{"a eth0 s 1\na eth0 t 2\n", "plan:2: a's eth0 is planned already (line 1)"},
           Case{"a eth0 s 1\nb eth0 s 1\n", "plan:2: s port 1 is planned already (line 1)"},
           Case{"n[1-2] eth0 s 1\n", "plan:1: a hostlist of nodes with one port"},
           Case{"a eth/0 s\n", "plan:1: 'eth/0' is not an interface name"},
           Case{"a averyveryverylongname s\n", "is not an interface name"},
           Case{"n[2-1] eth0 s\n", "plan:1: "},
       }) {
    CAPTURE(c.text);
    auto plan = ParseCablingPlan(c.text, "plan");
    REQUIRE(!plan.ok());
    CHECK(plan.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(plan.status().message()), Catch::Contains(c.error));
  }
}

TEST_CASE("cabling plan: bounded in cables, a hostlist included") {
  CHECK(ParseCablingPlan("n[1-3] eth0 s\n", "plan", 3).ok());
  auto over = ParseCablingPlan("n[1-3] eth0 s\nm eth0 s\n", "plan", 3);
  REQUIRE(!over.ok());
  CHECK_THAT(std::string(over.status().message()), Catch::Contains("plan:2: more than 3 cables"));
  CHECK(!ParseCablingPlan("n[1-4] eth0 s\n", "plan", 3).ok());
}

TEST_CASE("cabling plan: loaded beside the cables written in the configuration") {
  const std::string path = testing::TestPath("cabling.txt");
  std::ofstream(path) << kPlan;
  v1::Topology topology;
  v1::Cable* inline_cable = topology.add_cables();
  inline_cable->set_node("gpu009");
  inline_cable->set_netdev("eth0");
  inline_cable->set_switch_name("leaf-r0-b");
  REQUIRE(LoadCablingPlan(&topology, path).ok());
  CHECK(topology.cables_size() == 5);

  // The same interface in both is refused, naming it.
  v1::Topology twice;
  *twice.add_cables() = topology.cables(1);  // gpu001 eth0 from the file
  const absl::Status s = LoadCablingPlan(&twice, path);
  CHECK_THAT(std::string(s.message()), Catch::Contains("gpu001's eth0 is planned already"));

  // A missing file names the key.
  v1::Topology none;
  const absl::Status missing = LoadCablingPlan(&none, path + ".absent");
  CHECK_THAT(std::string(missing.message()), Catch::Contains("topology.cabling"));
  CHECK(LoadCablingPlan(&none, "").ok());
}

}  // namespace
}  // namespace fabricctl
