#include "controller/verdict/give_back.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

v1::Report Completed() {
  v1::Report report;
  report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  report.mutable_sweep()->set_sweep_id(9);
  return report;
}

// A node of the report, its link watch run when `watched`.
void AddNode(v1::Report* report, const std::string& name, v1::HealthStatus status,
             bool watched = true) {
  v1::NodeHealth* node = report->mutable_health()->add_nodes();
  node->set_node(name);
  node->set_status(status);
  v1::AuditResult* watch = node->add_audits();
  watch->set_audit("link_watch");
  watch->set_outcome(watched ? v1::AUDIT_RAN : v1::AUDIT_SKIPPED);
  // The pass the verdict earned it (controller/verdict/earned.h): tcp_bw with three peers.
  v1::NodePass* pass = node->mutable_pass();
  pass->set_earned(status == v1::HEALTH_OK);
  if (pass->earned()) {
    pass->add_probes(v1::TCP_BW);
    v1::RailPass* rail = pass->add_rails();
    rail->set_peers(3);
    rail->add_probes(v1::TCP_BW);
  }
}

Drain Drained(const std::string& node, absl::Duration ago) {
  return Drain{node, 7, kNow - ago, "straggler_node"};
}

v1::Undrain On() {
  v1::Undrain undrain;
  undrain.set_enabled(true);
  undrain.mutable_after()->set_seconds(1800);
  return undrain;
}

}  // namespace

TEST_CASE("a passing sweep gives back what an earlier verdict drained, after undrain.after") {
  v1::Report report = Completed();
  AddNode(&report, "node-1", v1::HEALTH_OK);       // drained 2 h ago, passed: given back
  AddNode(&report, "node-2", v1::HEALTH_OK);       // drained 10 min ago: too soon
  AddNode(&report, "node-3", v1::HEALTH_WARNING);  // flagged again (a warning): kept
  AddNode(&report, "node-4", v1::HEALTH_OK, /*watched=*/false);  // its watch did not answer
  AddNode(&report, "node-5", v1::HEALTH_OK);       // never drained: nothing to give back
  AddNode(&report, "node-6", v1::HEALTH_UNKNOWN);  // unreachable: no verdict
  const std::vector<Drain> drained = {
      Drained("node-1", absl::Hours(2)), Drained("node-2", absl::Minutes(10)),
      Drained("node-3", absl::Hours(2)), Drained("node-4", absl::Hours(2)),
      Drained("node-6", absl::Hours(2))};

  SECTION("on") {
    GiveBack(On(), drained, kNow, &report);
    REQUIRE(report.summary().given_back_size() == 1);
    CHECK(report.summary().given_back(0) == "node-1");
    REQUIRE(report.findings_size() == 1);
    CHECK(report.sweep().findings_count() == 1);
    const v1::Finding& f = report.findings(0);
    CHECK(f.kind() == "drain_given_back");
    CHECK(f.severity() == v1::SEVERITY_OK);
    CHECK(f.node() == "node-1");
    CHECK(f.detail() ==
          "node-1: drained by sweep 7 (straggler_node) 120 min ago; sweep 9 re-measured it "
          "(tcp_bw with 3 peers) and passed it, its link watch quiet: give it back");
    CHECK(f.evidence().at("drained_in_sweep") == "7");
    CHECK(f.evidence().at("drained_for") == "straggler_node");
    CHECK(f.evidence().at("passed_in_sweep") == "9");
    CHECK(f.evidence().at("probes") == "tcp_bw");
    CHECK(f.evidence().at("rail_peers") == "3");
  }
  SECTION("off, the default: nothing") {
    GiveBack(v1::Undrain(), drained, kNow, &report);
    CHECK(report.summary().given_back_size() == 0);
    CHECK(report.findings_size() == 0);
  }
  SECTION("a sweep that earned it no pass (no pair measured it, a finding concerns it) keeps it") {
    report.mutable_health()->mutable_nodes(0)->mutable_pass()->set_earned(false);
    GiveBack(On(), drained, kNow, &report);
    CHECK(report.summary().given_back_size() == 0);
  }
  SECTION("a drain for what an audit finds needs the audits run and passed") {
    std::vector<Drain> for_mtu = {Drain{"node-1", 7, kNow - absl::Hours(2), "mtu_mismatch"}};
    GiveBack(On(), for_mtu, kNow, &report);
    CHECK(report.summary().given_back_size() == 0);  // the sweep ran no audit
    v1::AuditResult* mtu = report.mutable_health()->mutable_nodes(0)->add_audits();
    mtu->set_audit("mtu");
    mtu->set_outcome(v1::AUDIT_RAN);
    GiveBack(On(), for_mtu, kNow, &report);
    CHECK(report.summary().given_back_size() == 1);
  }
  SECTION("a node this very report drains again stays drained") {
    report.mutable_summary()->add_drain("node-1");
    GiveBack(On(), drained, kNow, &report);
    CHECK(report.summary().given_back_size() == 0);
  }
  SECTION("an interrupted sweep gives nothing back") {
    report.mutable_sweep()->set_state(v1::SWEEP_INTERRUPTED);
    GiveBack(On(), drained, kNow, &report);
    CHECK(report.summary().given_back_size() == 0);
  }
}

}  // namespace fabricctl::controller
