// What a member that lies can do to the verdict, through the production paths: the trust
// boundary that takes agents' answers (controller/sweep/trust.h), a whole sweep over fake
// agents (one of which lies), the analysis, and the placement of nodes in the topology. A
// liar may make itself look bad; it must not make an honest node look bad, nor hide a faulty
// one.
#include <algorithm>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "controller/sweep/fleet.h"
#include "controller/sweep/trust.h"
#include "controller/verdict/analysis.h"
#include "controller/verdict/testing.h"
#include "tests/testing/sweeps.h"

namespace fabricctl::controller {
namespace {

std::vector<std::string> NodesNamedBy(const std::vector<v1::Finding>& findings,
                                      const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    if (f.kind() == kind) out.push_back(f.node());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE(
    "An agent's slow_switch, slow_path or slow_uplink finding does not pass the trust boundary") {
  std::vector<v1::AuditResult> audits(1);
  audits[0].set_audit("counters");
  for (const char* kind : {"slow_switch", "slow_path", "slow_uplink", "fleet_split", "slow_link"}) {
    v1::Finding* f = audits[0].add_findings();
    f->set_kind(kind);
    f->set_severity(v1::SEVERITY_CRITICAL);
    f->set_detail("the leaf above node-b is slow");
  }
  v1::Finding* own = audits[0].add_findings();  // what a node can know of itself stays
  own->set_kind("link_down");
  CHECK(sweep::AcceptAudits("node-a", &audits) == 5);
  REQUIRE(audits[0].findings_size() == 1);
  CHECK(audits[0].findings(0).kind() == "link_down");
}

TEST_CASE("A rank that lies about its ring link's time blames no honest neighbour") {
  sweep::Harness h("lying_rank", {"node-0", "node-1", "node-2", "node-3"});
  h.fake->LieAboutRingLink("node-2", 0.001);  // "my 8 MiB left in a nanosecond"
  v1::SweepRequest request;
  request.set_pairing(v1::PAIRING_FULL);
  request.add_probes(v1::TCP_BW);
  request.add_probes(v1::ALLREDUCE);
  request.set_allreduce_backend("tcp");
  auto report = h.runner->Run(request, sweep::Registry(h.names), nullptr);
  REQUIRE(report.ok());
  std::vector<v1::Finding> findings(report->findings().begin(), report->findings().end());
  INFO(sweep::Kinds(*report).size() << " findings");
  // Without a floor on the time, the liar's link made every honest link look over a million
  // times slower than a typical one, and its neighbour was named.
  CHECK(NodesNamedBy(findings, "allreduce_below_threshold").empty());
  // The liar's result is refused as impossible, and the failure is named on the liar itself.
  const auto failed = NodesNamedBy(findings, "probe_failed");
  REQUIRE(failed == std::vector<std::string>{"node-2"});
  for (const auto& f : findings) {
    if (f.kind() == "probe_failed") CHECK(f.detail().find("faster than") != std::string::npos);
  }
}

// Node 1 is slow with every peer; node 2 lies: its pair with node 1 is fast, its other pairs
// as slow as node 1's. Nodes 1 and 2 then look like a group behind one slow path.
float LiarFigures(uint32_t a, uint32_t b) {
  const bool faulty = a == 1 || b == 1, liar = a == 2 || b == 2;
  return (faulty || liar) && !(faulty && liar) ? 25.0f : 100.0f;
}

TEST_CASE("One liar cannot turn a faulty node into a slow path that drains nobody") {
  for (uint32_t n : {6u, 8u, 12u}) {
    INFO(n << " nodes");
    const AnalysisResult r = WithRetests(Sweep(n, LiarFigures), LiarFigures);
    CHECK(NodesNamedBy(r.findings, "slow_path").empty());
    const auto blamed = NodesNamedBy(r.findings, "straggler_node");
    CHECK(std::count(blamed.begin(), blamed.end(), "node-1") == 1);
    // The liar made itself look as bad as the faulty node: it may be named, nobody else.
    for (const auto& node : blamed) CHECK((node == "node-1" || node == "node-2"));
  }
}

TEST_CASE("An agent's --label cannot move its node into another node's leaf") {
  v1::Config config;
  config.mutable_topology()->add_levels("leaf");
  for (const auto& [node, leaf] : {std::pair{"node-1", "leaf-1"}, std::pair{"node-5", "leaf-2"}}) {
    v1::NodeLabels* entry = config.add_nodes();
    entry->set_node(node);
    (*entry->mutable_labels())["leaf"] = leaf;
  }
  sweep::Node liar;
  liar.name = "node-5";
  (*liar.inventory.mutable_labels())["leaf"] = "leaf-1";  // the faulty node's leaf
  (*liar.inventory.mutable_labels())["rack"] = "r7";
  const sweep::Placement placement(config);
  std::string placed_by;
  const auto labels = placement.LabelsOf(liar, &placed_by);
  CHECK(labels.at("leaf") == "leaf-2");
  CHECK(placed_by == "configuration");
  CHECK(labels.at("rack") == "r7");  // a label the administrator did not give is the agent's
  // Where nothing else places a node, its own label does, and the report says so.
  sweep::Node unplaced;
  unplaced.name = "node-9";
  (*unplaced.inventory.mutable_labels())["leaf"] = "leaf-3";
  CHECK(placement.LabelsOf(unplaced, &placed_by).at("leaf") == "leaf-3");
  CHECK(placed_by == "agent label");
}

TEST_CASE("An agent cannot point its peers' probes at another host") {
  sweep::Harness h("redirect", {"node-0", "node-1", "node-2", "node-3"});
  h.fake->AnswerServerAs("node-2", sweep::FakeAgents::AddressOf("victim"));
  auto report = h.Sweep();
  REQUIRE(report.ok());
  int refused = 0;
  for (const auto& pair : report->health().pairs()) {
    for (const auto& r : pair.results()) {
      if (r.reason().find("none of its own addresses") == std::string::npos) continue;
      ++refused;
      CHECK((r.node() == "node-2" || r.peer() == "node-2"));
    }
  }
  CHECK(refused > 0);  // every probe node-2 served was refused before any client ran
  for (const auto& f : report->findings()) {
    INFO(f.kind() << " " << f.node() << " " << f.peer());
    CHECK((f.node() == "node-2" || f.peer() == "node-2"));
  }
}

TEST_CASE("Sweeps do not prune the history: a member cannot push a sweep out by sweeping") {
  // history.keep_sweeps: 3, and four small sweeps: sweep 1 used to be pruned by the fourth.
  sweep::Harness h("no_prune_by_sweeps", {"a", "b"},
                   [](SweepOptions& o) { o.config.mutable_history()->set_keep_sweeps(3); });
  for (int i = 0; i < 4; ++i) REQUIRE(h.Sweep().ok());
  auto sweeps = h.store->ListSweeps(10);
  REQUIRE(sweeps.ok());
  CHECK(sweeps->size() == 4);
  // The retention is applied on the controller's schedule or an administrator's word.
  auto pruned = h.runner->PruneHistory(h.runner->HistoryPolicy());
  REQUIRE(pruned.ok());
  CHECK(pruned->sweeps == 1);  // sweep 1, beyond the newest three
}

}  // namespace
}  // namespace fabricctl::controller
