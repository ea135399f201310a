#include "controller/verdict/earned.h"

#include <catch2/catch.hpp>
#include <map>

#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// A completed sweep's report over `nodes`, each healthy.
v1::Report Report(const std::vector<std::string>& nodes) {
  v1::Report report;
  report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  for (const auto& name : nodes) {
    v1::NodeHealth* n = report.mutable_health()->add_nodes();
    n->set_node(name);
    n->set_status(v1::HEALTH_OK);
  }
  return report;
}

// A judged pair a <-> b measured by `kind` (both directions) on `rail`.
void Pair(v1::Report* report, const std::string& a, const std::string& b,
          v1::ProbeKind kind = v1::TCP_BW, const std::string& rail = "",
          v1::HealthStatus status = v1::HEALTH_OK) {
  v1::PairHealth* p = report->mutable_health()->add_pairs();
  p->set_node(a);
  p->set_peer(b);
  p->set_rail(rail);
  p->set_status(status);
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    v1::ProbeResult* r = p->add_results();
    r->set_kind(kind);
    r->set_outcome(v1::PROBE_OK);
    r->set_node(from);
    r->set_peer(to);
    r->set_rail(rail);
  }
}

// Every pair of `nodes`.
void Mesh(v1::Report* report, const std::vector<std::string>& nodes,
          v1::ProbeKind kind = v1::TCP_BW) {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t j = i + 1; j < nodes.size(); ++j) Pair(report, nodes[i], nodes[j], kind);
}

std::map<std::string, v1::NodePass> Passes(const v1::Report& report) {
  std::map<std::string, v1::NodePass> out;
  for (const auto& n : report.health().nodes()) out[n.node()] = n.pass();
  return out;
}

}  // namespace

TEST_CASE("a node measured with min_peers peers and nothing against it earns a pass") {
  v1::Report report = Report({"a", "b", "c"});
  Mesh(&report, {"a", "b", "c"});
  report.mutable_sweep()->add_probes(v1::TCP_LAT);
  report.mutable_sweep()->add_probes(v1::TCP_BW);
  EarnPasses(2, &report);
  for (const auto& [node, pass] : Passes(report)) {
    INFO(node);
    CHECK(pass.earned());
    CHECK(pass.bandwidth_probe() == v1::TCP_BW);  // what its stored figures are of
    CHECK_FALSE(pass.ends());
    REQUIRE(pass.probes_size() == 1);
    CHECK(pass.probes(0) == v1::TCP_BW);
    REQUIRE(pass.rails_size() == 1);
    CHECK(pass.rails(0).peers() == 2);
  }
}

TEST_CASE("a sweep that measured no pair, or too few peers, passes nobody and ends nothing") {
  SECTION("one node") {
    v1::Report report = Report({"a"});
    EarnPasses(2, &report);
    CHECK_FALSE(Passes(report)["a"].earned());
    CHECK_FALSE(Passes(report)["a"].ends());
    CHECK(Passes(report)["a"].why_not() == "no pair probe measured it");
  }
  SECTION("two nodes: one peer each") {
    v1::Report report = Report({"a", "b"});
    Pair(&report, "a", "b");
    EarnPasses(2, &report);
    CHECK_FALSE(Passes(report)["a"].earned());
    CHECK(Passes(report)["a"].why_not() ==
          "measured with 1 peer, fewer than known_good.min_peers (2)");
    EarnPasses(1, &report);  // a site that asks for one
    CHECK(Passes(report)["a"].earned());
  }
  SECTION("audits and GPU copies only") {
    v1::Report report = Report({"a", "b", "c"});
    Mesh(&report, {"a", "b", "c"}, v1::GPU_COPY);
    EarnPasses(2, &report);
    CHECK_FALSE(Passes(report)["b"].earned());
  }
  SECTION("a pair not judged does not count") {
    v1::Report report = Report({"a", "b", "c"});
    Pair(&report, "a", "b");
    Pair(&report, "a", "c", v1::TCP_BW, "", v1::HEALTH_UNKNOWN);
    EarnPasses(2, &report);
    CHECK_FALSE(Passes(report)["a"].earned());
  }
}

TEST_CASE("a rail the node is on must be covered too") {
  v1::Report report = Report({"a", "b", "c"});
  for (auto& n : *report.mutable_health()->mutable_nodes()) {
    n.add_rails()->set_rail("rail0");
    n.add_rails()->set_rail("rail1");
  }
  Pair(&report, "a", "b", v1::TCP_BW, "rail0");
  Pair(&report, "a", "c", v1::TCP_BW, "rail0");
  Pair(&report, "a", "b", v1::TCP_BW, "rail1");  // one peer on rail1
  EarnPasses(2, &report);
  const v1::NodePass a = Passes(report)["a"];
  CHECK_FALSE(a.earned());
  CHECK(a.why_not() == "measured on rail1 with 1 peer, fewer than known_good.min_peers (2)");
  REQUIRE(a.rails_size() == 2);
  CHECK(a.rails(0).peers() == 2);
  CHECK(a.rails(1).peers() == 1);
}

TEST_CASE("the kinds covered are those on every rail and with enough peers") {
  v1::Report report = Report({"a", "b", "c"});
  Mesh(&report, {"a", "b", "c"}, v1::TCP_BW);
  Pair(&report, "a", "b", v1::TCP_LAT);  // latency with one peer only
  EarnPasses(2, &report);
  const v1::NodePass a = Passes(report)["a"];
  CHECK(a.earned());
  CHECK(PassCovers(a, {v1::TCP_BW}, {}));
  CHECK_FALSE(PassCovers(a, {v1::TCP_BW, v1::TCP_LAT}, {}));
  CHECK_FALSE(PassCovers(a, {v1::RDMA_WRITE_BW}, {}));
  CHECK(PassCovers(a, {v1::TCP_BW, v1::ALLREDUCE}, {}));  // not a pair kind: no pass needed
  CHECK_FALSE(PassCovers(a, {v1::TCP_BW}, {"rail3"}));
}

// One test per way a finding concerns nodes, and each kind of the catalogue placed in one.
TEST_CASE("a warning or critical finding ends the pass of whom it concerns") {
  const std::vector<std::string> nodes = {"a", "b", "c", "d", "e"};
  auto judged = [&](v1::Finding f) {
    v1::Report report = Report(nodes);
    Mesh(&report, nodes);
    *report.add_findings() = std::move(f);
    EarnPasses(2, &report);
    std::vector<std::string> ended;
    for (const auto& [node, pass] : Passes(report)) {
      CHECK(pass.earned() == !pass.ends());
      if (pass.ends()) ended.push_back(node);
    }
    return ended;
  };
  const std::vector<std::string> every = nodes;
  for (const report::FindingKind& k : report::Catalogue()) {
    INFO(k.name);
    v1::Finding f;
    f.set_kind(k.name);
    f.set_severity(k.severity == v1::SEVERITY_OK ? v1::SEVERITY_OK : v1::SEVERITY_WARNING);
    switch (k.concerns) {
      case report::Concerns::kNobody:
        f.set_node("a");
        CHECK(judged(f).empty());
        break;
      case report::Concerns::kNamed:
        f.set_node("b");
        CHECK(judged(f) == std::vector<std::string>{"b"});
        f.set_peer("d");
        CHECK(judged(f) == std::vector<std::string>{"b", "d"});
        break;
      case report::Concerns::kMembers:
        (*f.mutable_evidence())["members"] = "a,b";
        (*f.mutable_evidence())["peer_members"] = "e";
        CHECK(judged(f) == std::vector<std::string>{"a", "b", "e"});
        f.mutable_evidence()->clear();  // lists nobody: every judged node
        CHECK(judged(f) == every);
        break;
      case report::Concerns::kEveryJudged:
        CHECK(judged(f) == every);
        break;
    }
  }
}

TEST_CASE("the fleet's standing state needs a fleet: three judged nodes at least") {
  auto run = [](const std::vector<std::string>& nodes) {
    v1::Report report = Report(nodes);
    Mesh(&report, nodes);
    for (const auto& n : nodes) {
      v1::Finding f = report::Make(report::kind::kRdmaUnavailable, n, "no RDMA",
                                   report::Level::kAlternate);  // a warning
      (*f.mutable_evidence())["audit"] = "rdma_ports";
      *report.add_findings() = f;
    }
    for (auto& n : *report.mutable_health()->mutable_nodes()) n.set_status(v1::HEALTH_WARNING);
    EarnPasses(1, &report);
    return Passes(report);
  };
  for (const auto& [node, pass] : run({"a", "b", "c"})) CHECK(pass.earned());
  // Two nodes carrying the same warning are two warnings, not a fleet's state.
  for (const auto& [node, pass] : run({"a", "b"})) {
    CHECK_FALSE(pass.earned());
    CHECK(pass.ends());
  }
}

TEST_CASE("a critical verdict with no finding naming the node still passes nothing") {
  v1::Report report = Report({"a", "b", "c"});
  Mesh(&report, {"a", "b", "c"});
  report.mutable_health()->mutable_nodes(1)->set_status(v1::HEALTH_CRITICAL);
  EarnPasses(2, &report);
  CHECK(Passes(report)["a"].earned());
  CHECK_FALSE(Passes(report)["b"].earned());
  CHECK(Passes(report)["b"].ends());
}

}  // namespace fabricctl::controller
