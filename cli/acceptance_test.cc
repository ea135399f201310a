// fabricctl accept's judgement (cli/acceptance.h) on constructed registries and reports.
#include "cli/acceptance.h"

#include <catch2/catch.hpp>

#include "report/findings.h"

namespace fabricctl::cli {
namespace {

v1::NodeStatus* Add(v1::ListNodesResponse& registry, const std::string& name, bool known_good,
                    int64_t passed_s = 100, const std::string& spine = "") {
  v1::NodeStatus* node = registry.add_nodes();
  node->mutable_inventory()->set_node_name(name);
  node->set_state(v1::NODE_ONLINE);
  if (!spine.empty()) (*node->mutable_inventory()->mutable_labels())["spine"] = spine;
  if (known_good) {
    node->mutable_known_good()->set_sweep_id(1);
    node->mutable_known_good()->mutable_passed()->set_seconds(passed_s);
  }
  return node;
}

TEST_CASE("references are known-good online nodes, those sharing a label with the new first") {
  v1::ListNodesResponse registry;
  Add(registry, "new-1", false, 0, "s2");
  Add(registry, "old-a", true, 500, "s1");
  Add(registry, "old-b", true, 100, "s2");
  Add(registry, "old-c", true, 300, "s2");
  Add(registry, "old-d", true, 900, "s1");
  Add(registry, "old-e", true, 50, "s1");
  Add(registry, "lost", true, 999, "s2")->mutable_known_good()->mutable_lost()->set_seconds(1);
  Add(registry, "never", false, 0, "s2");
  Add(registry, "offline", true, 999, "s2")->set_state(v1::NODE_STALE);
  // The agents' own labels place nobody: only the site's placement does.
  google::protobuf::RepeatedPtrField<v1::NodeLabels> placed;
  CHECK(AutoReferences({"new-1"}, registry, placed) ==
        std::vector<std::string>{"old-d", "old-a", "old-c", "old-b"});
  for (const auto& node : registry.nodes()) {
    v1::NodeLabels* entry = placed.Add();
    entry->set_node(node.inventory().node_name());
    *entry->mutable_labels() = node.inventory().labels();
  }
  CHECK(AutoReferences({"new-1"}, registry, placed) ==
        std::vector<std::string>{"old-c", "old-b", "old-d", "old-a"});
  // A node that labels itself into the new node's spine is not preferred for it.
  (*registry.mutable_nodes(5)->mutable_inventory()->mutable_labels())["spine"] = "s2";  // old-e
  CHECK(AutoReferences({"new-1"}, registry, placed) ==
        std::vector<std::string>{"old-c", "old-b", "old-d", "old-a"});
}

TEST_CASE("a named reference must be registered and not new; one not known-good is warned of") {
  v1::ListNodesResponse registry;
  Add(registry, "new-1", false);
  Add(registry, "old-a", true);
  Add(registry, "old-b", false);
  std::vector<std::string> warnings;
  CHECK(CheckReferences({"old-a", "old-b"}, {"new-1"}, registry, &warnings).ok());
  CHECK(warnings == std::vector<std::string>{"reference old-b is not known-good"});
  CHECK(CheckReferences({"new-1"}, {"new-1"}, registry, &warnings).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(CheckReferences({"ghost"}, {"new-1"}, registry, &warnings).message()),
             Catch::Contains("ghost is not registered"));
}

v1::Finding Finding(const std::string& kind, const std::string& node,
                    const std::string& peer = "") {
  v1::Finding f =
      peer.empty() ? report::Make(kind, node, "d") : report::MakePair(kind, node, peer, "d");
  return f;
}

TEST_CASE("each new node is accepted or rejected by the checks its findings fail") {
  v1::Report pass1, pass2;
  *pass1.add_findings() = Finding(report::kind::kBelowReference, "new-1");
  *pass1.add_findings() = Finding(report::kind::kMiscabled, "new-2");
  *pass1.add_findings() = Finding(report::kind::kKnownGood, "new-3");  // ok: no failure
  *pass2.add_findings() = Finding(report::kind::kBelowReference, "new-1");
  *pass2.add_findings() = Finding(report::kind::kSlowLink, "ref-1", "new-3");
  *pass2.add_findings() = Finding(report::kind::kStragglerNode, "ref-2");
  const v1::Acceptance a =
      Judge({"new-1", "new-2", "new-3", "new-4"}, {"ref-1", "ref-2"}, {pass1, pass2});
  REQUIRE(a.nodes_size() == 4);
  CHECK_FALSE(a.nodes(0).accepted());
  CHECK(a.nodes(0).checks(3).name() == "fabric");
  CHECK_FALSE(a.nodes(0).checks(3).passed());
  CHECK(a.nodes(0).checks(3).findings(0).evidence().at("passes") == "2 of 2");
  CHECK(a.nodes(0).checks(1).passed());  // configuration
  CHECK_FALSE(a.nodes(1).accepted());
  CHECK(a.nodes(1).checks(2).name() == "cabling");
  CHECK_FALSE(a.nodes(1).checks(2).passed());
  CHECK(a.nodes(1).checks(2).findings(0).evidence().at("passes") == "1 of 2");
  CHECK_FALSE(a.nodes(2).accepted());  // the slow link with a reference is the new node's
  CHECK(a.nodes(3).accepted());
  REQUIRE(a.reference_findings_size() == 1);
  CHECK(a.reference_findings(0).node() == "ref-2");
  CHECK(AcceptanceExitCode(a) == 2);
}

TEST_CASE("every node accepted exits 0; a pass that gave no verdict, or none, accepts nobody") {
  v1::Acceptance a = Judge({"new-1"}, {"ref-1", "ref-2"}, {v1::Report()});
  a.add_sweep_ids(7);
  CHECK(a.nodes(0).accepted());
  CHECK(AcceptanceExitCode(a) == 0);
  a.set_incomplete("pass 2: the controller went away");
  CHECK(AcceptanceExitCode(a) == 3);
  v1::Acceptance none = Judge({"new-1"}, {}, {});
  CHECK(AcceptanceExitCode(none) == 3);
}

TEST_CASE("a finding about no new node and no reference still counts in the exit code") {
  v1::Report pass;
  v1::Finding f = Finding(report::kind::kFleetSplit, "");
  *pass.add_findings() = f;
  v1::Acceptance a = Judge({"new-1"}, {"ref-1", "ref-2"}, {pass});
  a.add_sweep_ids(1);
  REQUIRE(a.other_findings_size() == 1);
  CHECK(a.nodes(0).accepted());
  CHECK(AcceptanceExitCode(a) == (f.severity() == v1::SEVERITY_CRITICAL ? 2 : 1));
}

TEST_CASE("a configuration finding every reference has too is shared, not the new node's fault") {
  v1::Report pass;
  for (const char* node : {"ref-1", "ref-2", "new-1"})
    *pass.add_findings() = Finding(report::kind::kEcnDisabled, node);
  *pass.add_findings() = Finding(report::kind::kPfcMisconfigured, "ref-1");  // one reference
  *pass.add_findings() = Finding(report::kind::kPfcMisconfigured, "new-1");
  v1::Acceptance a = Judge({"new-1"}, {"ref-1", "ref-2"}, {pass});
  a.add_sweep_ids(1);
  REQUIRE(a.shared_findings_size() == 1);
  CHECK(a.shared_findings(0).kind() == "ecn_disabled");
  CHECK_FALSE(a.nodes(0).accepted());
  REQUIRE(a.nodes(0).checks(1).findings_size() == 1);
  CHECK(a.nodes(0).checks(1).findings(0).kind() == "pfc_misconfigured");
  // The references' own configuration findings do not fail the run; a slow reference would.
  v1::Report clean;
  for (const char* node : {"ref-1", "ref-2"})
    *clean.add_findings() = Finding(report::kind::kEcnDisabled, node);
  v1::Acceptance b = Judge({"new-1"}, {"ref-1", "ref-2"}, {clean});
  b.add_sweep_ids(1);
  CHECK(AcceptanceExitCode(b) == 0);
  *clean.add_findings() = Finding(report::kind::kStragglerNode, "ref-2");
  v1::Acceptance c = Judge({"new-1"}, {"ref-1", "ref-2"}, {clean});
  c.add_sweep_ids(1);
  CHECK(AcceptanceExitCode(c) == 2);
}

// A measured pair, the same figures both ways.
void Pair(v1::Report& report, const std::string& node, const std::string& peer, double bw_gbps,
          double lat_us, const std::string& rail = "") {
  v1::PairHealth* p = report.mutable_health()->add_pairs();
  p->set_node(node);
  p->set_peer(peer);
  p->set_rail(rail);
  p->set_status(v1::HEALTH_OK);
  p->set_bw_gbps(bw_gbps);
  p->set_bw_reverse_gbps(bw_gbps);
  p->set_lat_us(lat_us);
}

TEST_CASE("a new node's figures are its medians with the references, beside theirs") {
  v1::Report pass1, pass2;
  for (v1::Report* pass : {&pass1, &pass2}) {
    Pair(*pass, "ref-1", "ref-2", 100, 10);
    Pair(*pass, "new-1", "ref-1", 60, 15);  // a rack at 60 %
    Pair(*pass, "ref-2", "new-1", 61, 16);
  }
  Pair(pass2, "new-1", "new-2", 5, 90);  // between new nodes: not a figure with the references
  const v1::Acceptance a = Judge({"new-1", "new-2"}, {"ref-1", "ref-2"}, {pass1, pass2});
  REQUIRE(a.nodes(0).figures_size() == 1);
  const v1::Acceptance::Figures& f = a.nodes(0).figures(0);
  CHECK(f.rail().empty());
  CHECK(f.bw_gbps() == Approx(60.5));
  CHECK(f.reference_bw_gbps() == Approx(100));
  CHECK(f.bw_gbps() / f.reference_bw_gbps() == Approx(0.6).margin(0.01));
  CHECK(f.lat_us() == Approx(15.5));
  CHECK(f.reference_lat_us() == Approx(10));
  CHECK(f.partners() == 2);
  // new-2 met no reference: its figures are absent, not 0; the references' stand.
  REQUIRE(a.nodes(1).figures_size() == 1);
  const v1::Acceptance::Figures& none = a.nodes(1).figures(0);
  CHECK_FALSE(none.has_bw_gbps());
  CHECK_FALSE(none.has_lat_us());
  CHECK(none.has_reference_bw_gbps());
  CHECK(none.partners() == 0);
}

TEST_CASE("with rails, a new node has figures per rail; without references, among the others") {
  v1::Report pass;
  pass.mutable_health()->add_rails("rail0");
  pass.mutable_health()->add_rails("rail1");
  Pair(pass, "ref-1", "ref-2", 400, 5, "rail0");
  Pair(pass, "ref-1", "ref-2", 380, 6, "rail1");
  Pair(pass, "new-1", "ref-1", 200, 9, "rail1");
  const v1::Acceptance a = Judge({"new-1"}, {"ref-1", "ref-2"}, {pass});
  REQUIRE(a.nodes(0).figures_size() == 2);
  CHECK(a.nodes(0).figures(0).rail() == "rail0");
  CHECK_FALSE(a.nodes(0).figures(0).has_bw_gbps());
  CHECK(a.nodes(0).figures(0).reference_bw_gbps() == Approx(400));
  CHECK(a.nodes(0).figures(1).bw_gbps() == Approx(200));
  CHECK(a.nodes(0).figures(1).reference_bw_gbps() == Approx(380));
  v1::Report alone;
  Pair(alone, "new-1", "new-2", 50, 7);
  const v1::Acceptance b = Judge({"new-1", "new-2"}, {}, {alone});
  REQUIRE(b.nodes(1).figures_size() == 1);
  CHECK(b.nodes(1).figures(0).bw_gbps() == Approx(50));
  CHECK(b.nodes(1).figures(0).partners() == 1);
  CHECK_FALSE(b.nodes(1).figures(0).has_reference_bw_gbps());
  CHECK(Judge({"new-1"}, {"ref-1", "ref-2"}, {}).nodes(0).figures_size() == 0);
}

}  // namespace
}  // namespace fabricctl::cli
