#include "controller/sweep/trust.h"

#include <cmath>
#include <limits>

#include "catch2/catch.hpp"
#include "report/findings.h"

namespace fabricctl::controller::sweep {
namespace {

v1::Finding Claim(const std::string& kind, const std::string& node, v1::Severity severity,
                  v1::Action action) {
  v1::Finding f;
  f.set_kind(kind);
  f.set_node(node);
  f.set_severity(severity);
  f.set_action(action);
  f.set_detail("made up");
  return f;
}

TEST_CASE("an agent's findings are about itself, of catalogue kinds, at catalogue levels") {
  google::protobuf::RepeatedPtrField<v1::Finding> findings;
  // Another node, and a hostlist of the whole cluster: both become the answering node's.
  *findings.Add() = Claim("link_down", "gpu[001-512]", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  *findings.Add() = Claim("pcie_degraded", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  // A kind no catalogue has, one with a newline, and a pair kind only the controller decides.
  *findings.Add() =
      Claim("fabricctl_injected{a=\"b\"}", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  *findings.Add() = Claim("link_down\nnode-c", "node-c", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  *findings.Add() = Claim("slow_link", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  // Switch kinds (a path, an uplink, a leaf) are the controller's too: a node cannot see them.
  *findings.Add() = Claim("slow_switch", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE);
  *findings.Add() = Claim("slow_path", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE);
  *findings.Add() = Claim("slow_uplink", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE);
  // The controller's own words about a node: its bookkeeping and its comparisons.
  for (const char* kind : {"drain_given_back", "config_drift", "below_reference", "known_good",
                           "straggler_node", "slow_nic", "rail_missing", "miscabled"}) {
    *findings.Add() = Claim(kind, "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  }
  // A warning-level kind asked for as a drain: the catalogue's level instead.
  *findings.Add() = Claim("acs_enabled", "node-b", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  // A kind's documented alternate level is the agent's to ask for.
  *findings.Add() = Claim("counter_errors", "", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE);
  findings.Mutable(0)->set_peer("node-c");
  findings.Mutable(0)->set_detail("port down\x1b[2J\nsecond line");

  CHECK(AcceptFindings("node-a", &findings) == 14);
  REQUIRE(findings.size() == 4);
  for (const auto& f : findings) {
    CHECK(f.node() == "node-a");
    CHECK(f.peer().empty());
  }
  CHECK(findings[0].kind() == "link_down");
  CHECK(findings[0].detail().find('\x1b') == std::string::npos);
  CHECK(findings[0].detail().find('\n') == std::string::npos);
  CHECK(findings[2].kind() == "acs_enabled");
  CHECK(findings[2].severity() == v1::SEVERITY_WARNING);
  CHECK(findings[2].action() == v1::ACTION_INVESTIGATE);
  CHECK(findings[3].severity() == v1::SEVERITY_CRITICAL);  // counter_errors' alternate
}

TEST_CASE("the catalogue says who raises each kind; agents may send only their own") {
  for (const report::FindingKind& k : report::Catalogue()) {
    INFO(k.name);
    google::protobuf::RepeatedPtrField<v1::Finding> findings;
    *findings.Add() = Claim(k.name, "node-b", k.severity, k.action);
    CHECK(AcceptFindings("node-a", &findings) == (report::AgentMayRaise(k.name) ? 0 : 1));
    CHECK((k.raised_by == report::RaisedBy::kController) == !report::AgentMayRaise(k.name));
  }
}

TEST_CASE("an answer carries a bounded number of findings and evidence entries") {
  google::protobuf::RepeatedPtrField<v1::Finding> findings;
  for (int i = 0; i < kMaxFindingsPerAnswer + 10; ++i) {
    *findings.Add() = Claim("mtu_mismatch", "x", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE);
  }
  for (int i = 0; i < kMaxEvidenceEntries + 1; ++i) {
    (*findings.Mutable(0)->mutable_evidence())[std::to_string(i)] = std::string(10000, 'e');
  }
  CHECK(AcceptFindings("node-a", &findings) == 10);
  CHECK(findings.size() == kMaxFindingsPerAnswer);
  CHECK(findings[0].evidence().empty());
}

TEST_CASE("impossible figures fail the result and name the figure") {
  v1::ProbeSpec spec;
  spec.set_kind(v1::TCP_BW);
  spec.mutable_timeout()->set_seconds(60);
  spec.mutable_measurement()->add_sizes_bytes(65536);
  auto result_with = [](double gbps) {
    v1::ProbeResult r;
    r.set_kind(v1::TCP_BW);
    r.set_outcome(v1::PROBE_OK);
    r.add_bw()->set_bw_avg_gbps(gbps);
    r.mutable_bw(0)->set_size_bytes(65536);
    return r;
  };
  for (double bad : {std::nan(""), -1.0, std::numeric_limits<double>::infinity(), 1e6}) {
    v1::ProbeResult r = result_with(bad);
    AcceptResult("node-a", spec, MaxPlausibleGbps(0), &r);
    INFO(bad);
    CHECK(r.outcome() == v1::PROBE_FAILED);
    CHECK(r.cause() == v1::CAUSE_INVALID_FIGURES);
    CHECK(r.bw_size() == 0);
    CHECK(r.reason().find("bandwidth") != std::string::npos);
  }
  v1::ProbeResult fine = result_with(390);
  AcceptResult("node-a", spec, MaxPlausibleGbps(400), &fine);
  CHECK(fine.outcome() == v1::PROBE_OK);
  v1::ProbeResult beyond = result_with(900);  // more than both directions of a 400G link
  AcceptResult("node-a", spec, MaxPlausibleGbps(400), &beyond);
  CHECK(beyond.outcome() == v1::PROBE_FAILED);

  v1::ProbeResult latency;
  latency.set_kind(v1::TCP_BW);
  latency.set_outcome(v1::PROBE_OK);
  latency.add_lat()->set_t_typical_us(0);  // no answer comes back in no time
  latency.mutable_lat(0)->set_size_bytes(65536);
  AcceptResult("node-a", spec, MaxPlausibleGbps(0), &latency);
  CHECK(latency.outcome() == v1::PROBE_FAILED);

  // Points at sizes the spec did not ask for, or one size twice (a liar's 4 MiB of points).
  v1::ProbeResult padded = result_with(1);
  padded.add_bw()->set_size_bytes(65536);
  AcceptResult("node-a", spec, MaxPlausibleGbps(0), &padded);
  CHECK(padded.outcome() == v1::PROBE_FAILED);
  CHECK(padded.reason().find("given twice") != std::string::npos);
  v1::ProbeResult elsewhere = result_with(1);
  elsewhere.mutable_bw(0)->set_size_bytes(4096);
  AcceptResult("node-a", spec, MaxPlausibleGbps(0), &elsewhere);
  CHECK(elsewhere.outcome() == v1::PROBE_FAILED);
  // A failure carries no figures at all.
  v1::ProbeResult failed = result_with(std::nan(""));
  failed.set_outcome(v1::PROBE_FAILED);
  AcceptResult("node-a", spec, MaxPlausibleGbps(0), &failed);
  CHECK(failed.bw_size() == 0);

  v1::ProbeResult other_kind = result_with(1);
  other_kind.set_kind(v1::RDMA_WRITE_BW);
  AcceptResult("node-a", spec, MaxPlausibleGbps(0), &other_kind);
  CHECK(other_kind.outcome() == v1::PROBE_FAILED);
  CHECK(other_kind.kind() == v1::TCP_BW);
}

TEST_CASE("flows: one a stream asked for, each figure possible, each trace bounded") {
  v1::ProbeSpec spec;
  spec.set_kind(v1::TCP_BW);
  spec.mutable_timeout()->set_seconds(60);
  spec.mutable_measurement()->add_sizes_bytes(65536);
  spec.mutable_tcp()->set_streams(2);
  auto with_flows = [](int flows, double gbps, int hops) {
    v1::ProbeResult r;
    r.set_kind(v1::TCP_BW);
    r.set_outcome(v1::PROBE_OK);
    v1::BwPoint* p = r.add_bw();
    p->set_size_bytes(65536);
    p->set_bw_avg_gbps(1);
    for (int f = 0; f < flows; ++f) {
      v1::Flow* flow = p->add_flows();
      flow->set_bw_gbps(gbps);
      flow->set_source(std::string(500, 's'));
      for (int h = 0; h < hops; ++h) flow->add_hops()->set_name(std::string(1000, 'n'));
    }
    return r;
  };
  v1::ProbeResult fine = with_flows(2, 0.5, 3);
  AcceptResult("node-a", spec, MaxPlausibleGbps(0), &fine);
  REQUIRE(fine.outcome() == v1::PROBE_OK);
  CHECK(fine.bw(0).flows(0).source().size() <= 64);
  CHECK(fine.bw(0).flows(0).hops(0).name().size() <= 253);
  for (v1::ProbeResult bad : {with_flows(3, 0.5, 3), with_flows(2, std::nan(""), 3),
                              with_flows(2, -1, 3), with_flows(1, 0.5, 65)}) {
    AcceptResult("node-a", spec, MaxPlausibleGbps(0), &bad);
    CHECK(bad.outcome() == v1::PROBE_FAILED);
    CHECK(bad.cause() == v1::CAUSE_INVALID_FIGURES);
    CHECK(bad.bw_size() == 0);
  }
}

TEST_CASE("audits: findings stamped, text printable") {
  std::vector<v1::AuditResult> audits(1);
  audits[0].set_audit("mtu\x1b]0;title\x07");
  audits[0].set_reason("r\x01");
  (*audits[0].mutable_observed())["eth0"] = "9000\x1b[31m";
  *audits[0].add_findings() =
      Claim("mtu_mismatch", "node-z", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN);
  CHECK(AcceptAudits("node-a", &audits) == 0);
  CHECK(audits[0].findings(0).node() == "node-a");
  CHECK(audits[0].findings(0).action() == v1::ACTION_INVESTIGATE);
  CHECK(audits[0].audit().find('\x1b') == std::string::npos);
  CHECK(audits[0].reason().find('\x01') == std::string::npos);
  CHECK(audits[0].observed().at("eth0").find('\x1b') == std::string::npos);
}

}  // namespace
}  // namespace fabricctl::controller::sweep
