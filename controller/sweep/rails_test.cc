// Sweeps over rails against fake agents (fake_agent.h): each node's NICs as its inventory
// lists them, each probe placed on its rail's netdev; a real SQLite store.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/config.h"
#include "catch2/catch.hpp"
#include "controller/store/store.h"
#include "controller/sweep/fake_agent.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/runner.h"
#include "tests/testing/sweeps.h"

namespace fabricctl::controller::sweep {
namespace {

std::vector<std::string> NodeNames(int nodes) {
  std::vector<std::string> names;
  for (int i = 1; i <= nodes; ++i) names.push_back("node-" + std::to_string(i));
  return names;
}

// The sweep harness with a rail on each of `netdevs`, every node with a 10 Gb/s NIC on each.
struct RailHarness : Harness {
  RailHarness(const std::string& test, int nodes, const std::vector<std::string>& netdevs)
      : Harness(test, NodeNames(nodes), [&](SweepOptions& options) {
          for (size_t r = 0; r < netdevs.size(); ++r) {
            v1::Rail* rail = options.config.add_rails();
            rail->set_name("rail" + std::to_string(r));
            rail->set_netdev(netdevs[r]);
          }
        }) {
    for (const auto& name : names) {
      for (const auto& netdev : netdevs) fake->AddNic(name, netdev, 10);
    }
  }
  absl::StatusOr<v1::Report> Sweep(const std::vector<std::string>& rails = {}) {
    v1::SweepRequest request;
    request.set_pairing(v1::PAIRING_FULL);
    request.add_probes(v1::TCP_BW);
    for (const auto& r : rails) request.add_rails(r);
    return runner->Run(request, Registry(names), nullptr);
  }
};

// "kind node rail" per finding.
std::set<std::string> Findings(const v1::Report& report) {
  std::set<std::string> out;
  for (const auto& f : report.findings()) out.insert(f.kind() + " " + f.node() + " " + f.rail());
  return out;
}

TEST_CASE("rails: every pair measured on every rail; a NIC slow on rail1 is slow_nic there only") {
  RailHarness h("rails_slow_nic", 5, {"eth0", "eth1"});
  h.fake->AddNic("node-3", "eth1", 2);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Findings(*report) == std::set<std::string>{"slow_nic node-3 rail1"});
  REQUIRE(report->findings_size() == 1);
  CHECK(report->findings(0).device() == "eth1");
  CHECK(report->summary().drain_size() == 1);
  CHECK(report->health().rails_size() == 2);
  int rail0 = 0, rail1 = 0;
  for (const auto& p : report->health().pairs()) {
    (p.rail() == "rail0" ? rail0 : rail1)++;
    for (const auto& r : p.results()) CHECK(r.rail() == p.rail());
    if (p.rail() == "rail0") CHECK(p.bw_gbps() == Approx(10));
  }
  CHECK(rail0 == 10);
  CHECK(rail1 == 10);
  // Each node's NIC per rail, from its inventory.
  const v1::NodeHealth& node = report->health().nodes(0);
  REQUIRE(node.rails_size() == 2);
  CHECK(node.rails(1).rail() == "rail1");
  CHECK(node.rails(1).netdev() == "eth1");
  CHECK(node.rails(1).address() == "10.0.1.1");
  CHECK(node.rails(1).up());
  CHECK(node.rails(1).mtu() == 1500);
  CHECK(node.rails(1).missing().empty());
}

TEST_CASE("rails: a node slow on every rail is a straggler_node, no rail") {
  RailHarness h("rails_slow_node", 5, {"eth0", "eth1"});
  h.fake->AddNic("node-2", "eth0", 2);
  h.fake->AddNic("node-2", "eth1", 2);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Findings(*report) == std::set<std::string>{"straggler_node node-2 "});
}

TEST_CASE("rails: every NIC of one rail slow is slow_rail, and nobody is drained") {
  RailHarness h("rails_slow_rail", 5, {"eth0", "eth1"});
  for (const auto& name : h.names) h.fake->AddNic(name, "eth1", 3);  // the rail trained low
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Findings(*report) == std::set<std::string>{"slow_rail  rail1"});
  CHECK(report->summary().drain_size() == 0);
  REQUIRE(report->health().rail_summaries_size() == 2);
  CHECK(report->health().rail_summaries(1).rail() == "rail1");
  CHECK(report->health().rail_summaries(1).median_bw_gbps() == Approx(3));
}

TEST_CASE("rails: a node without a rail is rail_missing there, judged on its other rail") {
  RailHarness h("rails_missing", 5, {"eth0"});
  for (int i = 1; i <= 5; ++i) {
    if (i != 4) h.fake->AddNic("node-" + std::to_string(i), "eth1", 10);
  }
  v1::Config config = DefaultConfig();
  config.mutable_sweep()->set_retests(2);
  config.mutable_sweep()->set_retest_budget(kUnboundedRetests);
  for (const char* netdev : {"eth0", "eth1"}) {
    v1::Rail* rail = config.add_rails();
    rail->set_name(std::string("rail") + (netdev[3] == '0' ? "0" : "1"));
    rail->set_netdev(netdev);
  }
  h.runner->SetConfig(config);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Findings(*report) == std::set<std::string>{"rail_missing node-4 rail1"});
  int node4_rail0 = 0;
  for (const auto& p : report->health().pairs()) {
    const bool node4 = p.node() == "node-4" || p.peer() == "node-4";
    if (p.rail() == "rail1") CHECK_FALSE(node4);
    if (p.rail() == "rail0" && node4) ++node4_rail0;
  }
  CHECK(node4_rail0 == 4);  // measured with every peer on the rail it has
  CHECK(report->summary().drain_size() == 1);
  CHECK(report->summary().drain(0) == "node-4");
  CHECK(report->health().nodes(3).status() == v1::HEALTH_CRITICAL);
  CHECK(report->health().nodes(3).rails(1).missing() == "no interface eth1");
}

TEST_CASE("rails: a rail most nodes lack is the configuration's mistake, not the nodes'") {
  RailHarness h("rails_misnamed", 4, {"eth0"});
  v1::Config config = DefaultConfig();
  for (const char* netdev : {"eth0", "ens9"}) {
    v1::Rail* rail = config.add_rails();
    rail->set_name(netdev);
    rail->set_netdev(netdev);
  }
  h.runner->SetConfig(config);
  auto report = h.Sweep();
  REQUIRE(absl::IsFailedPrecondition(report.status()));
  CHECK(report.status().message() ==
        "rails: rail ens9 (ens9) is missing on 4 of 4 reachable nodes (node-1: no interface ens9): "
        "check the configuration's rails");
}

TEST_CASE("rails: each rail's own leaves; a slow path between two leaves of rail1 is named there") {
  RailHarness h("rails_leaves", 6, {"eth0", "eth1"});
  // Rail 0 is one leaf; rail 1 has two (node-1..3 and node-4..6), given as `leaf@rail1`.
  v1::Config config = DefaultConfig();
  config.mutable_sweep()->set_retests(2);
  config.mutable_sweep()->set_retest_budget(kUnboundedRetests);
  config.mutable_topology()->add_levels("leaf");
  for (int r = 0; r < 2; ++r) {
    v1::Rail* rail = config.add_rails();
    rail->set_name("rail" + std::to_string(r));
    rail->set_netdev("eth" + std::to_string(r));
  }
  for (int i = 1; i <= 6; ++i) {
    v1::NodeLabels* entry = config.add_nodes();
    entry->set_node("node-" + std::to_string(i));
    (*entry->mutable_labels())["leaf"] = "r0-leaf";
    (*entry->mutable_labels())["leaf@rail1"] = i <= 3 ? "r1-a" : "r1-b";
  }
  h.runner->SetConfig(config);
  for (int a = 1; a <= 3; ++a) {
    for (int b = 4; b <= 6; ++b) {
      h.fake->SetLink("node-" + std::to_string(a), "node-" + std::to_string(b), 0.2, "eth1");
    }
  }
  auto report = h.Sweep();
  REQUIRE(report.ok());
  REQUIRE(report->findings_size() == 1);
  CHECK(report->findings(0).kind() == "slow_path");
  CHECK(report->findings(0).rail() == "rail1");
  CHECK(report->findings(0).device() == "r1-a <-> r1-b");
  CHECK(report->summary().drain_size() == 0);
}

TEST_CASE("rails: with LLDP, each rail's leaf is the switch its interface is cabled to") {
  v1::Config config = DefaultConfig();
  config.mutable_topology()->set_lldp(true);
  config.mutable_topology()->add_levels("leaf");
  for (int r = 0; r < 2; ++r) {
    v1::Rail* rail = config.add_rails();
    rail->set_name("rail" + std::to_string(r));
    rail->set_netdev("eth" + std::to_string(r));
  }
  Node node;
  node.name = "gpu1";
  node.inventory.set_agent_address("10.0.0.1:7401");
  for (int r = 0; r < 2; ++r) {
    v1::NetInterface* itf = node.inventory.add_interfaces();
    itf->set_name("eth" + std::to_string(r));
    itf->add_addresses("10.0." + std::to_string(r) + ".1");
    itf->mutable_lldp()->set_system_name("su1-rail" + std::to_string(r) + "-leaf");
  }
  const auto labels = Placement(config).LabelsOf(node);
  CHECK(labels.at("leaf") == "su1-rail0-leaf");  // the agent's interface
  CHECK(GroupAt(labels, "leaf", "rail1") == "su1-rail1-leaf");
  CHECK(GroupAt(labels, "leaf", "rail0") == "su1-rail0-leaf");
  CHECK(GroupAt(labels, "leaf", "") == "su1-rail0-leaf");
  CHECK(GroupAt(labels, "spine", "rail1").empty());
}

TEST_CASE("rails: long node and rail names still make run ids an agent takes") {
  RailHarness h("rails_long_names", 3, {"eth0", "eth1"});
  // 66-character names (the harness's fake agents under the short names stay unused).
  for (auto& name : h.names) name = std::string(60, 'n') + name;
  v1::Config config = DefaultConfig();
  for (int r = 0; r < 2; ++r) {
    v1::Rail* rail = config.add_rails();
    rail->set_name(std::string(50, 'r') + std::to_string(r));
    rail->set_netdev("eth" + std::to_string(r));
  }
  h.runner->SetConfig(config);
  for (const auto& name : h.names) {
    h.fake->Add(name);
    h.fake->AddNic(name, "eth0", 10);
    h.fake->AddNic(name, "eth1", 10);
  }
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(report->findings_size() == 0);
  CHECK(report->health().pairs_size() == 6);
  for (const auto& p : report->health().pairs()) CHECK(p.bw_gbps() == Approx(10));
}

TEST_CASE("rails: the rounds of every rail run at once; --rails picks rails by name") {
  RailHarness h("rails_concurrent", 4, {"eth0", "eth1"});
  for (const auto& n : h.names) h.fake->SetDelay(n, absl::Milliseconds(100));
  auto report = h.Sweep();
  REQUIRE(report.ok());
  // 2 pairs a round on each of 2 rails: more than one rail's 2 at once.
  CHECK(h.fake->PeakRunning() >= 3);
  auto one = h.Sweep({"rail1"});
  REQUIRE(one.ok());
  CHECK(one->health().rails_size() == 1);
  for (const auto& p : one->health().pairs()) CHECK(p.rail() == "rail1");
  auto unknown = h.Sweep({"rail9"});
  CHECK(absl::IsInvalidArgument(unknown.status()));
  CHECK(unknown.status().message() == "--rails: no rail 'rail9' (rails: rail0, rail1)");
}

}  // namespace
}  // namespace fabricctl::controller::sweep
