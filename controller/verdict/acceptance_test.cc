// fabricctl accept's verdict (controller/verdict/acceptance.h) on constructed reports.
#include "controller/verdict/acceptance.h"

#include <catch2/catch.hpp>

#include "report/findings.h"

namespace fabricctl::controller {
namespace {

v1::Finding Finding(const std::string& kind, const std::string& node,
                    const std::string& peer = "") {
  v1::Finding f =
      peer.empty() ? report::Make(kind, node, "d") : report::MakePair(kind, node, peer, "d");
  return f;
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

// A pass (sweep `id`) that measured every node named, each new node with each reference.
v1::Report Pass(int64_t id, const std::vector<std::string>& fresh,
                const std::vector<std::string>& refs) {
  v1::Report r;
  r.mutable_sweep()->set_sweep_id(id);
  for (const auto* list : {&fresh, &refs}) {
    for (const std::string& n : *list) r.mutable_health()->add_nodes()->set_node(n);
  }
  for (const std::string& n : fresh) {
    for (const std::string& ref : refs) Pair(r, n, ref, 100, 10);
  }
  return r;
}

const std::vector<std::string> kRefs = {"ref-1", "ref-2"};

TEST_CASE("each new node is accepted or rejected by the checks its findings fail") {
  const std::vector<std::string> fresh = {"new-1", "new-2", "new-3", "new-4"};
  v1::Report pass1 = Pass(1, fresh, kRefs), pass2 = Pass(2, fresh, kRefs);
  *pass1.add_findings() = Finding(report::kind::kBelowReference, "new-1");
  *pass1.add_findings() = Finding(report::kind::kMiscabled, "new-2");
  *pass1.add_findings() = Finding(report::kind::kKnownGood, "new-3");  // ok: no failure
  *pass2.add_findings() = Finding(report::kind::kBelowReference, "new-1");
  *pass2.add_findings() = Finding(report::kind::kSlowLink, "ref-1", "new-3");
  *pass1.add_findings() = Finding(report::kind::kSlowLink, "ref-1", "new-3");
  *pass2.add_findings() = Finding(report::kind::kStragglerNode, "ref-2");
  const v1::Acceptance a = JudgeAcceptance(fresh, kRefs, {pass1, pass2});
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
  CHECK(a.exit_code() == 2);
}

TEST_CASE("every node accepted exits 0; a pass that gave no verdict, or none, accepts nobody") {
  const std::vector<v1::Report> passes = {Pass(7, {"new-1"}, kRefs)};
  v1::Acceptance a = JudgeAcceptance({"new-1"}, kRefs, passes);
  CHECK(a.nodes(0).accepted());
  CHECK(a.exit_code() == 0);
  CHECK(JudgeAcceptance({"new-1"}, kRefs, passes, "pass 2: the controller went away").exit_code() ==
        3);
  v1::Acceptance none = JudgeAcceptance({"new-1"}, {}, {});
  CHECK(none.exit_code() == 3);
}

TEST_CASE("a finding about no new node and no reference still counts in the exit code") {
  v1::Report pass = Pass(1, {"new-1"}, kRefs);
  v1::Finding f = Finding(report::kind::kFleetSplit, "");
  *pass.add_findings() = f;
  v1::Acceptance a = JudgeAcceptance({"new-1"}, kRefs, {pass});
  REQUIRE(a.other_findings_size() == 1);
  CHECK(a.nodes(0).accepted());
  CHECK(a.exit_code() == (f.severity() == v1::SEVERITY_CRITICAL ? 2u : 1u));
}

TEST_CASE("a configuration finding every reference has too is shared, not the new node's fault") {
  v1::Report pass = Pass(1, {"new-1"}, kRefs);
  for (const char* node : {"ref-1", "ref-2", "new-1"})
    *pass.add_findings() = Finding(report::kind::kEcnDisabled, node);
  *pass.add_findings() = Finding(report::kind::kPfcMisconfigured, "ref-1");  // one reference
  *pass.add_findings() = Finding(report::kind::kPfcMisconfigured, "new-1");
  v1::Acceptance a = JudgeAcceptance({"new-1"}, kRefs, {pass});
  REQUIRE(a.shared_findings_size() == 1);
  CHECK(a.shared_findings(0).kind() == "ecn_disabled");
  CHECK_FALSE(a.nodes(0).accepted());
  REQUIRE(a.nodes(0).checks(1).findings_size() == 1);
  CHECK(a.nodes(0).checks(1).findings(0).kind() == "pfc_misconfigured");
  // The references' own configuration findings do not fail the run; a slow reference would.
  v1::Report clean = Pass(1, {"new-1"}, kRefs);
  for (const char* node : {"ref-1", "ref-2"})
    *clean.add_findings() = Finding(report::kind::kEcnDisabled, node);
  CHECK(JudgeAcceptance({"new-1"}, kRefs, {clean}).exit_code() == 0);
  *clean.add_findings() = Finding(report::kind::kStragglerNode, "ref-2");
  CHECK(JudgeAcceptance({"new-1"}, kRefs, {clean}).exit_code() == 2);
}

TEST_CASE("a pair slow in some passes and not in others is unstable") {
  std::vector<v1::Report> passes;
  for (int64_t id = 11; id <= 14; ++id) passes.push_back(Pass(id, {"new-1", "new-2"}, kRefs));
  *passes[1].add_findings() = Finding(report::kind::kSlowLink, "new-1", "ref-2");
  *passes[3].add_findings() = Finding(report::kind::kSlowLink, "new-1", "ref-2");
  *passes[2].add_findings() = Finding(report::kind::kStragglerNode, "new-2");
  const v1::Acceptance a = JudgeAcceptance({"new-1", "new-2"}, kRefs, passes);
  REQUIRE(a.nodes(0).checks(3).findings_size() == 1);
  const v1::Finding& pair = a.nodes(0).checks(3).findings(0);
  CHECK(pair.kind() == "unstable");
  CHECK(pair.peer() == "ref-2");
  CHECK(pair.severity() == v1::SEVERITY_WARNING);
  CHECK(pair.evidence().at("slow_link_sweeps") == "12,14");
  CHECK_THAT(pair.detail(), Catch::Contains("slow_link in 2 of 4 passes (sweeps 12,14)"));
  // A node's own finding that comes and goes: the node is unstable (the critical level).
  const v1::Finding& node = a.nodes(1).checks(3).findings(0);
  CHECK(node.kind() == "unstable");
  CHECK(node.severity() == v1::SEVERITY_CRITICAL);
  CHECK(node.evidence().at("kinds") == "straggler_node");
  CHECK_FALSE(a.nodes(1).accepted());
  // In every pass it is what it is, not unstable.
  for (v1::Report& p : passes)
    *p.add_findings() = Finding(report::kind::kSlowLink, "new-1", "ref-2");
  CHECK(JudgeAcceptance({"new-1"}, kRefs, passes).nodes(0).checks(3).findings(0).kind() ==
        "slow_link");
}

// The link watch's result for `node` in `pass`, with one observed count.
void Watch(v1::Report& pass, const std::string& node, const std::string& key,
           const std::string& value) {
  for (v1::NodeHealth& n : *pass.mutable_health()->mutable_nodes()) {
    if (n.node() != node) continue;
    v1::AuditResult* a = n.add_audits();
    a->set_audit("link_watch");
    a->set_outcome(v1::AUDIT_RAN);
    (*a->mutable_observed())["links"] = "eth0 eth1";
    if (!key.empty()) (*a->mutable_observed())[key] = value;
  }
}

TEST_CASE("flaps and error counters that grew during the burn-in reject the node, with counts") {
  std::vector<v1::Report> passes;
  for (int64_t id = 1; id <= 3; ++id) passes.push_back(Pass(id, {"new-1", "new-2"}, kRefs));
  Watch(passes[0], "new-1", "eth0 symbol_error", "+5");  // before the burn-in: no growth by itself
  Watch(passes[1], "new-1", "eth0 symbol_error", "+45");
  Watch(passes[2], "new-1", "eth0 symbol_error", "+45");
  Watch(passes[0], "new-2", "eth1 fec_corrected", "+10");  // corrected: the code at work
  Watch(passes[2], "new-2", "eth1 fec_corrected", "+9000");
  Watch(passes[1], "new-2", "", "");
  const v1::Acceptance a = JudgeAcceptance({"new-1", "new-2"}, kRefs, passes);
  CHECK(a.nodes(1).accepted());
  REQUIRE_FALSE(a.nodes(0).accepted());
  const v1::Finding& f = a.nodes(0).checks(3).findings(0);
  CHECK(f.kind() == "link_errors");
  CHECK(f.device() == "eth0");
  CHECK(f.evidence().at("during_burn_in") == "+40");
  // A flap between passes.
  Watch(passes[0], "new-2", "eth1 flaps", "1");
  Watch(passes[2], "new-2", "eth1 flaps", "2");
  const v1::Acceptance b = JudgeAcceptance({"new-2"}, kRefs, passes);
  REQUIRE_FALSE(b.nodes(0).accepted());
  CHECK(b.nodes(0).checks(3).findings(0).kind() == "link_flapping");
  CHECK(b.nodes(0).checks(3).findings(0).evidence().at("during_burn_in") == "1");
}

TEST_CASE("a pass that did not measure a new node, or too few partners, accepts nothing of it") {
  v1::Report pass1 = Pass(5, {"new-1", "new-2"}, kRefs);
  v1::Report pass2 = Pass(6, {"new-2"}, kRefs);  // new-1 was not in sweep 6
  const v1::Acceptance a = JudgeAcceptance({"new-1", "new-2"}, kRefs, {pass1, pass2});
  CHECK_FALSE(a.nodes(0).accepted());
  CHECK(a.nodes(0).checks(0).name() == "reachable");
  CHECK_THAT(a.nodes(0).checks(0).findings(0).detail(), Catch::Contains("sweep(s) 6"));
  CHECK(a.nodes(1).accepted());
  // Measured with one reference only: not judged, not accepted.
  v1::Report thin = Pass(7, {"new-1"}, {"ref-1"});
  thin.mutable_health()->add_nodes()->set_node("ref-2");
  const v1::Acceptance b = JudgeAcceptance({"new-1"}, kRefs, {thin});
  CHECK_FALSE(b.nodes(0).accepted());
  CHECK(b.nodes(0).checks(3).findings(0).kind() == "insufficient_data");
}

TEST_CASE("a new node's figures are its medians with the references, beside theirs") {
  v1::Report pass1 = Pass(1, {"new-1", "new-2"}, {}), pass2 = Pass(2, {"new-1", "new-2"}, {});
  for (v1::Report* pass : {&pass1, &pass2}) {
    Pair(*pass, "ref-1", "ref-2", 100, 10);
    Pair(*pass, "new-1", "ref-1", 60, 15);  // a rack at 60 %
    Pair(*pass, "ref-2", "new-1", 61, 16);
  }
  Pair(pass2, "new-1", "new-2", 5, 90);  // between new nodes: not a figure with the references
  const v1::Acceptance a = JudgeAcceptance({"new-1", "new-2"}, kRefs, {pass1, pass2});
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
  v1::Report pass = Pass(1, {"new-1"}, {});
  pass.mutable_health()->add_rails("rail0");
  pass.mutable_health()->add_rails("rail1");
  Pair(pass, "ref-1", "ref-2", 400, 5, "rail0");
  Pair(pass, "ref-1", "ref-2", 380, 6, "rail1");
  Pair(pass, "new-1", "ref-1", 200, 9, "rail1");
  const v1::Acceptance a = JudgeAcceptance({"new-1"}, kRefs, {pass});
  REQUIRE(a.nodes(0).figures_size() == 2);
  CHECK(a.nodes(0).figures(0).rail() == "rail0");
  CHECK_FALSE(a.nodes(0).figures(0).has_bw_gbps());
  CHECK(a.nodes(0).figures(0).reference_bw_gbps() == Approx(400));
  CHECK(a.nodes(0).figures(1).bw_gbps() == Approx(200));
  CHECK(a.nodes(0).figures(1).reference_bw_gbps() == Approx(380));
  v1::Report alone = Pass(1, {"new-1", "new-2"}, {});
  Pair(alone, "new-1", "new-2", 50, 7);
  const v1::Acceptance b = JudgeAcceptance({"new-1", "new-2"}, {}, {alone});
  REQUIRE(b.nodes(1).figures_size() == 1);
  CHECK(b.nodes(1).figures(0).bw_gbps() == Approx(50));
  CHECK(b.nodes(1).figures(0).partners() == 1);
  CHECK_FALSE(b.nodes(1).figures(0).has_reference_bw_gbps());
  CHECK(b.nodes(1).accepted());
  CHECK(JudgeAcceptance({"new-1"}, kRefs, {}).nodes(0).figures_size() == 0);
}

}  // namespace
}  // namespace fabricctl::controller
