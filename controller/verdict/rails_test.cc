#include "controller/verdict/rails.h"

#include <catch2/catch.hpp>

#include "report/findings.h"

namespace fabricctl::controller {
namespace {

v1::Finding Straggler(const std::string& node) {
  return report::Make(report::kind::kStragglerNode, node, node + " sends slowly");
}

std::vector<RailVerdict> TwoRails() {
  return {{"rail0", "eth0", {}, {}, {}}, {"rail1", "eth1", {}, {}, {}}};
}

TEST_CASE("a straggler on one rail of two is that rail's NIC, drained, named by node and rail") {
  auto rails = TwoRails();
  rails[1].findings = {Straggler("h3")};
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind() == "slow_nic");
  CHECK(out[0].node() == "h3");
  CHECK(out[0].rail() == "rail1");
  CHECK(out[0].device() == "eth1");
  CHECK(out[0].action() == v1::ACTION_DRAIN);
  CHECK(out[0].evidence().at("fine_rails") == "rail0");
}

TEST_CASE("a straggler on every rail is the node's: one straggler_node, no rail") {
  auto rails = TwoRails();
  rails[0].findings = {Straggler("h3")};
  rails[1].findings = {Straggler("h3")};
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind() == "straggler_node");
  CHECK(out[0].rail().empty());
  CHECK(out[0].evidence().at("rails") == "rail0,rail1");
}

TEST_CASE("a link slow on one rail stays a link of that rail") {
  auto rails = TwoRails();
  rails[0].findings = {report::MakePair(report::kind::kSlowLink, "h1", "h2", "slow")};
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind() == "slow_link");
  CHECK(out[0].rail() == "rail0");
  CHECK(out[0].detail() == "rail0: slow");
}

TEST_CASE(
    "a node that lacks a rail is rail_missing there, not unreachable; its other rail judges it") {
  auto rails = TwoRails();
  rails[1].absent["h2"] = "no interface eth1";
  rails[1].findings = {report::Make(report::kind::kNodeUnreachable, "h2", "x")};
  rails[0].findings = {Straggler("h2")};
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind() == "rail_missing");
  CHECK(out[0].rail() == "rail1");
  CHECK(out[0].node() == "h2");
  // Its one rail cannot tell the NIC from the node: the straggler stays the node's, on rail0.
  CHECK(out[1].kind() == "straggler_node");
  CHECK(out[1].rail() == "rail0");
}

TEST_CASE("a bandwidth and a latency finding of one node are two findings, each judged by rails") {
  auto rails = TwoRails();
  v1::Finding bw = Straggler("h3");
  (*bw.mutable_evidence())["median_bw_gbps"] = "1.0";
  v1::Finding lat = Straggler("h3");
  (*lat.mutable_evidence())["median_lat_us"] = "90";
  rails[0].findings = {bw};       // rail0: its NIC sends slowly
  rails[1].findings = {bw, lat};  // rail1: slow and late
  rails[0].unhealthy = {"h3"};
  rails[1].unhealthy = {"h3"};
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 2);
  // Bandwidth on both rails: the node's. Latency on rail1 only, and rail0 did not judge h3
  // fine (it is slow there too): no rail is evidence of a healthy host, so no slow_nic.
  CHECK(out[0].kind() == "straggler_node");
  CHECK(out[0].rail().empty());
  CHECK(out[1].kind() == "straggler_node");
  CHECK(out[1].rail() == "rail1");
  CHECK(out[1].evidence().count("median_lat_us") == 1);
}

TEST_CASE("a straggler's other rails count as fine only where they judged it OK") {
  auto rails = TwoRails();
  rails[0].findings = {Straggler("h3")};
  rails[0].unhealthy = {"h3"};
  rails[1].unhealthy = {"h3"};  // e.g. its probes failed there: not evidence of a healthy host
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind() == "straggler_node");
  CHECK(out[0].rail() == "rail0");
}

TEST_CASE("without rails the findings pass unchanged") {
  std::vector<RailVerdict> rails = {{"", "", {Straggler("h1")}, {}, {}}};
  const auto out = CombineRails(rails);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind() == "straggler_node");
  CHECK(out[0].rail().empty());
}

}  // namespace
}  // namespace fabricctl::controller
