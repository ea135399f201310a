#include "report/builder.h"

#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "google/protobuf/util/time_util.h"
#include "report/findings.h"

namespace fabricctl::report {
namespace {

using google::protobuf::util::TimeUtil;

// An audit that ran and found `findings`.
v1::AuditResult Audit(const std::string& name, std::vector<v1::Finding> findings) {
  v1::AuditResult a;
  a.set_audit(name);
  a.set_outcome(v1::AUDIT_RAN);
  for (auto& f : findings) *a.add_findings() = std::move(f);
  return a;
}

std::vector<std::string> Drain(const v1::Report& report) {
  return {report.summary().drain().begin(), report.summary().drain().end()};
}

const absl::Time kGenerated = absl::FromUnixSeconds(1700000000) + absl::Milliseconds(250);

}  // namespace

TEST_CASE("The header fields, the configuration and the times") {
  v1::Config config;
  config.mutable_expect()->set_link_rate_gbps(400);
  config.mutable_thresholds()->set_relative_bw(0.8);
  config.mutable_sweep()->set_sample_rounds(3);  // not part of a report
  ReportBuilder builder("sweep", "fabricctl 1.2.3");
  builder.SetConfig(config);
  v1::Report report = builder.Finish(kGenerated, absl::Milliseconds(12345));
  CHECK(report.schema() == "fabricctl.report/v1");
  CHECK(report.source() == "sweep");
  CHECK(report.generator() == "fabricctl 1.2.3");
  CHECK(report.expect().link_rate_gbps() == 400);
  CHECK(report.thresholds().relative_bw() == 0.8);
  CHECK(TimeUtil::TimestampToMilliseconds(report.generated()) == 1700000000250);
  CHECK(TimeUtil::DurationToMilliseconds(report.summary().elapsed()) == 12345);
  CHECK_FALSE(report.has_sweep());
  CHECK(report.summary().nodes() == 0);
  CHECK(report.summary().worst_severity() == v1::SEVERITY_OK);
}

TEST_CASE("Nodes are counted by status") {
  ReportBuilder builder("sweep", "test");
  builder.AddNode("a", v1::HEALTH_OK);
  builder.AddNode("b", v1::HEALTH_OK);
  builder.AddNode("c", v1::HEALTH_WARNING);
  builder.AddNode("d", v1::HEALTH_CRITICAL);
  builder.AddNode("e", v1::HEALTH_UNKNOWN);
  v1::NodeHealth* f = builder.AddNode("f", v1::HEALTH_OK);
  f->set_median_bw_gbps(97.5);  // the node is returned to add figures to
  const v1::Report report = builder.Finish(kGenerated, absl::Seconds(1));
  const v1::Summary& s = report.summary();
  CHECK(s.nodes() == 6);
  CHECK(s.nodes_ok() == 3);
  CHECK(s.nodes_warning() == 1);
  CHECK(s.nodes_critical() == 1);
  CHECK(s.nodes_unknown() == 1);
  REQUIRE(report.health().nodes_size() == 6);
  CHECK(report.health().nodes(0).node() == "a");  // in the order added
  CHECK(report.health().nodes(5).median_bw_gbps() == 97.5);
}

TEST_CASE("A node's audits are kept, their findings reported, and raise its status") {
  ReportBuilder builder("check", "test");
  v1::NodeHealth* ok = builder.AddNode("ok", v1::HEALTH_OK);
  builder.AddAudits(ok, {Audit("mtu", {}), Audit("pcie", {})});
  v1::NodeHealth* warned = builder.AddNode("warned", v1::HEALTH_OK);
  builder.AddAudits(warned, {Audit("acs", {Make(kind::kAcsEnabled, "warned", "ACS on")})});
  v1::NodeHealth* worst = builder.AddNode("worst", v1::HEALTH_OK);
  builder.AddAudits(worst, {Audit("acs", {Make(kind::kAcsEnabled, "worst", "ACS on")}),
                            Audit("rdma_ports", {Make(kind::kLinkDown, "worst", "port down")}),
                            Audit("counters", {Make(kind::kCounterErrors, "worst", "errors")})});
  // Audits never lower a status, and a node of unknown health with a warning is a warning.
  v1::NodeHealth* critical = builder.AddNode("critical", v1::HEALTH_CRITICAL);
  builder.AddAudits(critical, {Audit("acs", {Make(kind::kAcsEnabled, "critical", "ACS on")})});
  v1::NodeHealth* unknown = builder.AddNode("unknown", v1::HEALTH_UNKNOWN);
  builder.AddAudits(unknown, {Audit("mtu", {})});
  v1::NodeHealth* unknown_warned = builder.AddNode("unknown_warned", v1::HEALTH_UNKNOWN);
  builder.AddAudits(unknown_warned,
                    {Audit("acs", {Make(kind::kAcsEnabled, "unknown_warned", "ACS on")})});
  const v1::Report report = builder.Finish(kGenerated, absl::Seconds(1));

  const auto& nodes = report.health().nodes();
  REQUIRE(nodes.size() == 6);
  CHECK(nodes[0].status() == v1::HEALTH_OK);
  CHECK(nodes[0].audits_size() == 2);
  CHECK(nodes[0].audits(1).audit() == "pcie");
  CHECK(nodes[1].status() == v1::HEALTH_WARNING);
  CHECK(nodes[2].status() == v1::HEALTH_CRITICAL);
  CHECK(nodes[2].audits_size() == 3);
  CHECK(nodes[2].audits(1).findings(0).kind() == "link_down");  // kept with their findings
  CHECK(nodes[3].status() == v1::HEALTH_CRITICAL);
  CHECK(nodes[4].status() == v1::HEALTH_UNKNOWN);
  CHECK(nodes[5].status() == v1::HEALTH_WARNING);

  std::vector<std::string> kinds;
  for (const auto& f : report.findings()) kinds.push_back(f.kind());
  CHECK(kinds == std::vector<std::string>{"acs_enabled", "acs_enabled", "link_down",
                                          "counter_errors", "acs_enabled", "acs_enabled"});
  const v1::Summary& s = report.summary();
  CHECK(s.nodes_ok() == 1);
  CHECK(s.nodes_warning() == 2);
  CHECK(s.nodes_critical() == 2);
  CHECK(s.nodes_unknown() == 1);
  CHECK(s.worst_severity() == v1::SEVERITY_CRITICAL);
}

TEST_CASE("The drain list names only nodes of the report") {
  ReportBuilder builder("sweep", "test");
  builder.AddNode("node-a", v1::HEALTH_OK);
  builder.AddNode("node-b", v1::HEALTH_OK);
  builder.AddFindings({Make(kind::kLinkDown, "node-a", "port 1 down"),
                       // A finding that names a node outside the sweep drains nothing.
                       Make(kind::kLinkDown, "gpu[001-512]", "made up"),
                       Make(kind::kStragglerNode, "node-z", "made up")});
  const v1::Report report = builder.Finish(kGenerated, absl::Seconds(1), "");
  CHECK(Drain(report) == std::vector<std::string>{"node-a"});
}

TEST_CASE("The drain list: nodes of DRAIN findings, once each, in order of name") {
  ReportBuilder builder("check", "test");
  for (const char* n : {"node-a", "node-b", "node-c"}) builder.AddNode(n, v1::HEALTH_OK);
  builder.AddFinding(Make(kind::kStragglerNode, "node-b", "slow"));
  builder.AddFindings({Make(kind::kLinkDown, "node-a", "port 1 down"),
                       Make(kind::kLinkDown, "node-b", "port 2 down"),
                       // INVESTIGATE: not a reason to drain.
                       Make(kind::kMtuMismatch, "node-c", "MTU 1500"),
                       // No node: the report's own node.
                       Make(kind::kPcieDegraded, "", "x8 of x16")});
  const v1::Report report = builder.Finish(kGenerated, absl::Seconds(1), "self");
  CHECK(Drain(report) == std::vector<std::string>{"node-a", "node-b", "self"});
  CHECK(report.findings_size() == 5);
  CHECK(report.findings(4).node().empty());  // the finding itself is left as it was

  ReportBuilder none("sweep", "test");
  none.AddFinding(Make(kind::kMtuMismatch, "node-c", "MTU 1500"));
  CHECK(Drain(none.Finish(kGenerated, absl::Seconds(1), "self")).empty());
}

TEST_CASE("Pairs: all counted, WARNING and CRITICAL ones flagged") {
  ReportBuilder builder("sweep", "test");
  const v1::HealthStatus statuses[] = {v1::HEALTH_OK,      v1::HEALTH_WARNING,  v1::HEALTH_CRITICAL,
                                       v1::HEALTH_UNKNOWN, v1::HEALTH_CRITICAL, v1::HEALTH_OK};
  for (v1::HealthStatus status : statuses) {
    v1::PairHealth* pair = builder.AddPair();
    pair->set_node("a");
    pair->set_peer("b");
    pair->set_status(status);
  }
  const v1::Report report = builder.Finish(kGenerated, absl::Seconds(1));
  CHECK(report.summary().pairs() == 6);
  CHECK(report.summary().pairs_failed() == 3);
  CHECK(report.health().pairs_size() == 6);
}

TEST_CASE("Worst severity of the findings, and the exit code from it") {
  ReportBuilder clean("sweep", "test");
  clean.AddNode("a", v1::HEALTH_OK);
  const v1::Report ok = clean.Finish(kGenerated, absl::Seconds(1));
  CHECK(ok.summary().worst_severity() == v1::SEVERITY_OK);
  CHECK(ExitCodeFor(ok) == kExitOk);

  ReportBuilder warned("sweep", "test");
  warned.AddFinding(Make(kind::kSlowLink, "a", "slow"));
  warned.AddFinding(Make(kind::kAcsEnabled, "b", "ACS on"));
  const v1::Report warning = warned.Finish(kGenerated, absl::Seconds(1));
  CHECK(warning.summary().worst_severity() == v1::SEVERITY_WARNING);
  CHECK(ExitCodeFor(warning) == kExitWarning);

  ReportBuilder failed("sweep", "test");
  failed.AddFinding(Make(kind::kSlowLink, "a", "slow"));
  failed.AddFinding(Make(kind::kProbeFailed, "b", "wrong elements", Level::kAlternate));
  failed.AddFinding(Make(kind::kAcsEnabled, "b", "ACS on"));
  const v1::Report critical = failed.Finish(kGenerated, absl::Seconds(1));
  CHECK(critical.summary().worst_severity() == v1::SEVERITY_CRITICAL);
  CHECK(ExitCodeFor(critical) == kExitCritical);

  CHECK(ExitCodeFor(v1::Report()) == kExitOk);
}

TEST_CASE("The sweep's info is copied with the worst severity and the findings count") {
  v1::SweepInfo info;
  info.set_sweep_id(42);
  info.set_state(v1::SWEEP_COMPLETED);
  info.add_nodes("a");
  info.add_nodes("b");
  info.set_rounds(2);
  info.set_worst_severity(v1::SEVERITY_OK);  // whatever the caller had is replaced
  info.set_findings_count(99);
  ReportBuilder builder("sweep", "test");
  builder.AddFinding(Make(kind::kSlowLink, "a", "slow", Level::kDefault));
  builder.AddFinding(Make(kind::kHighLatencyLink, "a", "slow to answer"));
  const v1::Report report = builder.Finish(kGenerated, absl::Seconds(1), "", &info);
  REQUIRE(report.has_sweep());
  CHECK(report.sweep().sweep_id() == 42);
  CHECK(report.sweep().nodes_size() == 2);
  CHECK(report.sweep().rounds() == 2);
  CHECK(report.sweep().state() == v1::SWEEP_COMPLETED);
  CHECK(report.sweep().worst_severity() == v1::SEVERITY_WARNING);
  CHECK(report.sweep().findings_count() == 2);
  CHECK(info.findings_count() == 99);  // the caller's copy is not changed
}

TEST_CASE("Finish can be called again and sees what was added since") {
  ReportBuilder builder("sweep", "test");
  builder.AddNode("a", v1::HEALTH_OK);
  const v1::Report first = builder.Finish(kGenerated, absl::Seconds(1));
  builder.AddNode("b", v1::HEALTH_CRITICAL);
  const v1::Report second = builder.Finish(kGenerated, absl::Seconds(2));
  CHECK(first.summary().nodes() == 1);
  CHECK(second.summary().nodes() == 2);
  CHECK(second.summary().nodes_critical() == 1);
}

}  // namespace fabricctl::report
