#include "report/render.h"

#include <catch2/catch.hpp>

#include "google/protobuf/util/json_util.h"
#include "report/builder.h"
#include "report/fleet_example.h"

namespace fabricctl::report {
namespace {

v1::Report ThreeNodes() {
  v1::Report r;
  r.set_schema("fabricctl.report/v1");
  r.set_source("sweep");
  r.set_generator("fabric-controller test");
  r.mutable_sweep()->set_sweep_id(7);
  r.mutable_sweep()->add_probes(v1::TCP_BW);
  r.mutable_sweep()->add_probes(v1::TCP_LAT);
  r.mutable_sweep()->mutable_finished()->set_seconds(1700000000);
  auto* s = r.mutable_summary();
  s->set_nodes(3);
  s->set_nodes_ok(2);
  s->set_nodes_critical(1);
  s->set_pairs(3);
  s->set_pairs_failed(2);
  s->add_drain("c");
  s->set_worst_severity(v1::SEVERITY_CRITICAL);
  for (const char* n : {"a", "b", "c"}) {
    auto* node = r.mutable_health()->add_nodes();
    node->set_node(n);
    node->set_status(std::string(n) == "c" ? v1::HEALTH_CRITICAL : v1::HEALTH_OK);
  }
  auto pair = [&](const char* a, const char* b, double bw, v1::HealthStatus st) {
    auto* p = r.mutable_health()->add_pairs();
    p->set_node(a);
    p->set_peer(b);
    p->set_bw_gbps(bw);
    p->set_lat_us(20);
    p->set_status(st);
    auto* res = p->add_results();
    res->set_kind(v1::TCP_BW);
    res->set_outcome(v1::PROBE_OK);
  };
  pair("a", "b", 9.5, v1::HEALTH_OK);
  pair("a", "c", 1.5, v1::HEALTH_CRITICAL);
  pair("b", "c", 1.4, v1::HEALTH_CRITICAL);
  r.mutable_health()->set_best_bw_gbps(9.5);
  r.mutable_health()->set_median_bw_gbps(1.5);
  auto* f = r.add_findings();
  f->set_kind("straggler_node");
  f->set_severity(v1::SEVERITY_CRITICAL);
  f->set_action(v1::ACTION_DRAIN);
  f->set_node("c");
  f->set_detail("c: median tcp_bw 1.45 Gb/s <slow> & \"odd\"");
  return r;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

}  // namespace

TEST_CASE("JSON carries the schema and round-trips through the proto") {
  v1::Report report = ThreeNodes();
  std::string json = RenderJson(report);
  CHECK(json.find("\"schema\": \"fabricctl.report/v1\"") != std::string::npos);
  v1::Report parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  CHECK(parsed.SerializeAsString() == report.SerializeAsString());
}

TEST_CASE("Text shows the verdict, the findings and a heat map cell per ordered pair") {
  std::string text = RenderText(ThreeNodes(), false);
  CHECK(text.rfind("fabricctl sweep 7: CRITICAL - 3 nodes (2 ok, 0 warning, 1 critical, 0 unknown)",
                   0) == 0);
  CHECK(text.find("CRITICAL straggler_node") != std::string::npos);
  CHECK(text.find("DRAIN: c") != std::string::npos);
  CHECK(Count(text, "1.50*") == 2);  // a-c in both triangles
  CHECK(Count(text, "9.50 ") == 3);  // the best-pair line and a-b in both triangles
  CHECK(text.find("\033[") == std::string::npos);
  CHECK(RenderText(ThreeNodes(), true).find("\033[31m") != std::string::npos);
}

TEST_CASE("JUnit has a suite per family and failures from findings, escaped") {
  std::string xml = RenderJunit(ThreeNodes());
  CHECK(xml.find("<testsuite name=\"tcp_bw\" tests=\"3\" failures=\"0\"") != std::string::npos);
  CHECK(xml.find("<testsuite name=\"nodes\" tests=\"3\" failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure type=\"straggler_node\" message=\"c: median tcp_bw 1.45 Gb/s "
                 "&lt;slow&gt; &amp; &quot;odd&quot;\"") != std::string::npos);
  CHECK(xml.find("<testsuites name=\"fabricctl sweep 7\" tests=\"6\" failures=\"1\"") !=
        std::string::npos);
}

TEST_CASE("JUnit: a finding about no node of the map fails a case of its own") {
  v1::Report r = ThreeNodes();
  r.clear_findings();
  auto* f = r.add_findings();
  f->set_kind("fabric_degraded");
  f->set_severity(v1::SEVERITY_CRITICAL);
  f->set_detail("tcp_bw: the fabric's typical 1.5 Gb/s is below the floor");
  std::string xml = RenderJunit(r);
  CHECK(xml.find("<testsuite name=\"fabric\" tests=\"1\" failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure type=\"fabric_degraded\"") != std::string::npos);
  CHECK(xml.find("<testsuite name=\"nodes\" tests=\"3\" failures=\"0\"") != std::string::npos);
}

TEST_CASE("JUnit: a node not measured again for being known-good is a passing case") {
  v1::Report r = ThreeNodes();
  r.clear_findings();
  auto* f = r.add_findings();
  f->set_kind("known_good");
  f->set_severity(v1::SEVERITY_OK);
  f->set_node("d");
  f->set_detail("known-good: sweep 3 passed it 5 min ago and nothing changed on it since");
  std::string xml = RenderJunit(r);
  CHECK(xml.find("<testsuite name=\"nodes\" tests=\"4\" failures=\"0\"") != std::string::npos);
  CHECK(xml.find("<failure") == std::string::npos);
}

TEST_CASE("Prometheus exposition: HELP and TYPE per metric, labelled samples") {
  std::string prom = RenderProm(ThreeNodes());
  CHECK(prom.find("# TYPE fabricctl_pair_bandwidth_bytes_per_second gauge\n") != std::string::npos);
  CHECK(
      prom.find("fabricctl_pair_bandwidth_bytes_per_second{node=\"a\",peer=\"b\",probe=\"tcp_bw\"} "
                "1.1875e+09\n") != std::string::npos);
  CHECK(prom.find(
            "fabricctl_pair_latency_seconds{node=\"a\",peer=\"b\",probe=\"tcp_lat\"} 2e-05\n") !=
        std::string::npos);
  CHECK(prom.find("fabricctl_node_status{node=\"c\"} 2\n") != std::string::npos);
  CHECK(prom.find("fabricctl_findings{kind=\"straggler_node\",severity=\"critical\"} 1\n") !=
        std::string::npos);
  CHECK(prom.find("fabricctl_sweep_worst_severity 2\n") != std::string::npos);
  CHECK(prom.find("fabricctl_build_info{source=\"sweep\",version=\"") != std::string::npos);
  // Kinds not found are there at 0, so a resolved problem's series goes to 0, not away.
  CHECK(prom.find("fabricctl_findings{kind=\"mtu_mismatch\",severity=\"critical\"} 0\n") !=
        std::string::npos);
  CHECK(prom.find("fabricctl_check_") == std::string::npos);
}

TEST_CASE("Prometheus for a check: its own names, and no zero timestamps or sweep ids") {
  v1::Report report = ThreeNodes();
  report.set_source("check");
  report.clear_generated();
  std::string prom = RenderProm(report);
  CHECK(prom.find("fabricctl_check_worst_severity 2\n") != std::string::npos);
  CHECK(prom.find("fabricctl_check_node_status{node=\"c\"} 2\n") != std::string::npos);
  CHECK(prom.find("fabricctl_check_findings{kind=\"straggler_node\",severity=\"critical\"} 1\n") !=
        std::string::npos);
  CHECK(prom.find("fabricctl_sweep") == std::string::npos);
  CHECK(prom.find("fabricctl_findings") == std::string::npos);
  CHECK(prom.find("timestamp_seconds") == std::string::npos);  // no generation time: none, not 0
  report.mutable_generated()->set_seconds(1700000000);
  CHECK(RenderProm(report).find("fabricctl_check_timestamp_seconds 1700000000\n") !=
        std::string::npos);
}

TEST_CASE("Prometheus for a check: the link watch's falls by link, its errors by counter") {
  v1::Report report = ThreeNodes();
  report.set_source("check");
  v1::AuditResult* watch = report.mutable_health()->mutable_nodes(0)->add_audits();
  watch->set_audit("link_watch");
  watch->set_outcome(v1::AUDIT_RAN);
  (*watch->mutable_observed())["links"] = "eth0 mlx5_0:1";
  (*watch->mutable_observed())["eth0 flaps"] = "3";
  (*watch->mutable_observed())["mlx5_0:1 symbol_error"] = "+42";
  (*watch->mutable_observed())["eth0 fec_uncorrected"] = "+7";
  (*watch->mutable_observed())["eth0 fec_corrected"] = "+399000";
  (*watch->mutable_observed())["last_sample"] = "2026-11-27T18:00:00Z";
  const std::string node = report.health().nodes(0).node();
  const std::string prom = RenderProm(report);
  CHECK(prom.find("fabricctl_check_link_falls{node=\"" + node + "\",link=\"eth0\"} 3\n") !=
        std::string::npos);
  // A quiet link is a 0, not a missing series.
  CHECK(prom.find("fabricctl_check_link_falls{node=\"" + node + "\",link=\"mlx5_0:1\"} 0\n") !=
        std::string::npos);
  CHECK(prom.find("fabricctl_check_link_errors{node=\"" + node +
                  "\",link=\"mlx5_0:1\",counter=\"symbol_error\"} 42\n") != std::string::npos);
  CHECK(prom.find("fabricctl_check_link_errors{node=\"" + node +
                  "\",link=\"eth0\",counter=\"fec_uncorrected\"} 7\n") != std::string::npos);
  // Corrected blocks are not errors: a series of their own.
  CHECK(prom.find("counter=\"fec_corrected\"") == std::string::npos);
  CHECK(prom.find("fabricctl_check_link_fec_corrected_blocks{node=\"" + node +
                  "\",link=\"eth0\"} 399000\n") != std::string::npos);
  CHECK(prom.find("last_sample") == std::string::npos);
}

TEST_CASE("HTML is one file with an SVG cell per ordered pair and no external references") {
  std::string html = RenderHtml(ThreeNodes());
  // Two maps (status, bandwidth), a cell per ordered pair in each.
  CHECK(Count(html, "<rect class=\"cell\"") == 12);
  CHECK(Count(html, "data-status=\"critical\"") == 8);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;slow&gt;") != std::string::npos);
  // Latency: in each map cell's title, and a column of the flagged pairs' table.
  CHECK(Count(html, " Gb/s, 20.0 us (") == 12);
  CHECK(html.find("<td>1.50</td><td></td><td>20.0</td>") != std::string::npos);
}

TEST_CASE(
    "HTML: legends, bandwidth scale, times, drain list, audits, all-reduce, unreachable marked") {
  v1::Report r = ThreeNodes();
  r.mutable_sweep()->mutable_started()->set_seconds(1699999990);
  auto* gone = r.mutable_health()->add_nodes();
  gone->set_node("d");
  gone->set_status(v1::HEALTH_UNKNOWN);
  auto* f = r.add_findings();
  f->set_kind("node_unreachable");
  f->set_node("d");
  f->set_detail("d:7401: connect: timed out");
  auto* audit = r.mutable_health()->mutable_nodes(0)->add_audits();
  audit->set_audit("mtu");
  audit->set_outcome(v1::AUDIT_RAN);
  (*audit->mutable_observed())["eth0"] = "9000";
  auto* c = r.mutable_health()->add_collectives();
  c->set_node("a");
  c->set_device("nccl, 3 ranks on 3 nodes");
  c->set_outcome(v1::PROBE_OK);
  auto* point = c->add_collective();
  point->set_size_bytes(4194304);
  point->set_algbw_gbytes(1.25);
  point->set_busbw_gbytes(1.67);
  const std::string html = RenderHtml(r);
  CHECK(html.find("id=\"status-legend\"") != std::string::npos);
  CHECK(html.find("id=\"bandwidth-legend\"") != std::string::npos);
  CHECK(html.find("linearGradient id=\"bwscale\"") != std::string::npos);
  CHECK(html.find("<td>2023-11-14 22:13:10 UTC</td>") != std::string::npos);  // started
  CHECK(html.find("<td>2023-11-14 22:13:20 UTC</td>") != std::string::npos);  // finished
  CHECK(html.find("<p id=\"drain\"><b>Drain:</b> c</p>") != std::string::npos);
  CHECK(html.find("<td>mtu</td><td class=\"\">ran</td><td></td><td></td><td>eth0: 9000</td>") !=
        std::string::npos);
  CHECK(html.find("<td>4194304</td><td>1.25</td><td>1.67</td>") != std::string::npos);
  // d's row and column are marked on both maps (3 peers each way), and in the node table.
  CHECK(Count(html, "<rect class=\"unreachable\"") == 12);
  CHECK(html.find("<title>d unreachable: d:7401: connect: timed out</title>") != std::string::npos);
  CHECK(html.find("<tr class=\"unreachable\"><td>d</td>") != std::string::npos);
  // Flagged pairs list the two critical pairs with their figures.
  CHECK(html.find("<tr><td>a</td><td>c</td><td class=\"critical\">critical</td><td>1.50</td>") !=
        std::string::npos);
  // On the bandwidth scale (median 1.5 Gb/s): 9.5 Gb/s is green, 1.4 a little below.
  CHECK(html.find("fill=\"#3a9d5d\"><title>a -&gt; b: 9.50 Gb/s") != std::string::npos);
}

TEST_CASE("Formats by name; exit codes by worst severity") {
  CHECK(Render(ThreeNodes(), "yaml", false).status().message() ==
        "--format: 'yaml' is none of text, json, junit, html, prom, prom-pairs, drain, resume");
  // resume: the nodes to give back, one plain name a line.
  v1::Report back = ThreeNodes();
  back.mutable_summary()->add_given_back("node-3");
  back.mutable_summary()->add_given_back("bad name;reboot");
  CHECK(*Render(back, "resume", false) == "node-3\n");
  CHECK(*Render(ThreeNodes(), "resume", false) == "");
  CHECK(Render(back, "text", false)->find("\nGIVE BACK: node-3 ") != std::string::npos);
  CHECK(CheckFormat("html").ok());
  CHECK(ExitCodeFor(ThreeNodes()) == 2);
  v1::Report warning = ThreeNodes();
  warning.mutable_summary()->set_worst_severity(v1::SEVERITY_WARNING);
  CHECK(ExitCodeFor(warning) == 1);
  CHECK(ExitCodeFor(v1::Report()) == 0);
}

}  // namespace fabricctl::report

namespace fabricctl::report {

TEST_CASE("JSON: 64-bit integers are numbers, zero counters are present, and it parses back") {
  v1::Report report = ThreeNodes();
  report.mutable_sweep()->set_sweep_id(13);
  report.mutable_summary()->set_pairs_failed(0);
  auto* result = report.mutable_health()->mutable_pairs(0)->mutable_results(0);
  result->mutable_effective_spec()->mutable_measurement()->add_sizes_bytes(4096);
  result->mutable_effective_spec()->mutable_measurement()->add_sizes_bytes(65536);
  result->add_bw()->set_size_bytes(65536);
  const std::string json = RenderJson(report);
  CHECK(json.find("\"sweep_id\": 13,") != std::string::npos);
  CHECK(json.find("\"size_bytes\": 65536") != std::string::npos);
  CHECK(json.find("\"sizes_bytes\": [\n") != std::string::npos);
  CHECK(json.find("4096,") != std::string::npos);
  CHECK(json.find("\"4096\"") == std::string::npos);
  CHECK(json.find("\"pairs_failed\": 0") != std::string::npos);
  CHECK(json.find("\"nodes_unknown\": 0") != std::string::npos);
  v1::Report back;
  REQUIRE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  CHECK(back.SerializeAsString() == report.SerializeAsString());
}

}  // namespace fabricctl::report

namespace fabricctl::report {

TEST_CASE("drain: a line per node to drain with the kinds that ask for it, nothing when healthy") {
  v1::Report r = ThreeNodes();
  auto* warning = r.add_findings();  // not a drain: not listed
  warning->set_kind("mtu_mismatch");
  warning->set_severity(v1::SEVERITY_WARNING);
  warning->set_action(v1::ACTION_INVESTIGATE);
  warning->set_node("c");
  auto* second = r.add_findings();
  second->set_kind("tcp_fallback");
  second->set_severity(v1::SEVERITY_CRITICAL);
  second->set_action(v1::ACTION_DRAIN);
  second->set_node("c");
  *r.add_findings() = *second;  // the same kind twice: named once
  auto drain = Render(r, "drain", false);
  REQUIRE(drain.ok());
  CHECK(*drain == "c\tstraggler_node,tcp_fallback\n");
  v1::Report healthy = ThreeNodes();
  healthy.mutable_summary()->clear_drain();
  CHECK(Render(healthy, "drain", false).value().empty());
  // The breaker held every drain: one comment line naming the plain host names it held.
  v1::Finding* breaker = healthy.add_findings();
  breaker->set_kind("drain_breaker_open");
  (*breaker->mutable_evidence())["would_drain"] = "a,b;rm -rf /,c";
  CHECK(Render(healthy, "drain", false).value() == "# drain_breaker_open\ta,c\n");
}

}  // namespace fabricctl::report

namespace fabricctl::report {

TEST_CASE("text: a node's gpu_copy shows its figures per GPU") {
  v1::Report r = ThreeNodes();
  auto* copy = r.mutable_health()->mutable_nodes(0)->add_audits();
  copy->set_audit("gpu_copy");
  copy->set_outcome(v1::AUDIT_RAN);
  (*copy->mutable_observed())["GPU 1 67108864 B"] = "H2D 50.1 GB/s, D2H 49.9 GB/s";
  (*copy->mutable_observed())["GPU 0 67108864 B"] = "H2D 54.6 GB/s, D2H 54.6 GB/s";
  const std::string text = RenderText(r, false);
  CHECK(text.find("gpu_copy     ok        2 checked\n"
                  "                       GPU 0 67108864 B: H2D 54.6 GB/s, D2H 54.6 GB/s\n"
                  "                       GPU 1 67108864 B: H2D 50.1 GB/s, D2H 49.9 GB/s\n") !=
        std::string::npos);
}

}  // namespace fabricctl::report

namespace fabricctl::report {
namespace {

// What another process wrote (an agent's reason, a device's name): terminal escapes, a control
// character XML forbids, a second line, a quote and a brace for Prometheus.
constexpr char kHostile[] = "bad\x1b[2J\x01 line\nfabricctl_injected{a=\"b\"} 1";

v1::Report Hostile() {
  v1::Report report = ThreeNodes();
  v1::Finding* f = report.add_findings();
  f->set_kind("fabricctl_injected{a=\"b\",severity=\"critical\"} 1\nx");
  f->set_severity(v1::SEVERITY_CRITICAL);
  f->set_node("a");
  f->set_detail(kHostile);
  f->set_action(v1::ACTION_DRAIN);
  report.mutable_health()->mutable_nodes(0)->add_audits()->set_reason(kHostile);
  report.mutable_summary()->add_drain("gpu[001-512]");
  return report;
}

TEST_CASE("no control character from a report's text reaches a text format") {
  for (const char* format : {"text", "junit", "html", "prom", "drain"}) {
    auto out = Render(Hostile(), format, false);
    REQUIRE(out.ok());
    INFO(format);
    CHECK(out->find('\x1b') == std::string::npos);
    CHECK(out->find('\x01') == std::string::npos);
  }
  // JSON escapes them itself.
  CHECK(Render(Hostile(), "json", false)->find("\\u001b") != std::string::npos);
}

TEST_CASE("an agent's string names no Prometheus series and adds no line") {
  const std::string prom = *Render(Hostile(), "prom", false);
  CHECK(prom.find("\nfabricctl_injected") == std::string::npos);
  CHECK(prom.find("kind=\"fabricctl_injected") == std::string::npos);
  for (size_t at = 0; at < prom.size();) {  // every line a comment or `name{labels} value`
    const size_t eol = prom.find('\n', at);
    const std::string line = prom.substr(at, eol - at);
    at = eol + 1;
    if (line.empty() || line[0] == '#') continue;
    CHECK(line.rfind("fabricctl_", 0) == 0);
  }
}

TEST_CASE("drain lists only plain host names") {
  const std::string drain = *Render(Hostile(), "drain", false);
  CHECK(drain.find("gpu[001-512]") == std::string::npos);
}

}  // namespace
}  // namespace fabricctl::report

namespace fabricctl::report {

TEST_CASE("With a topology, every format maps the sweep leaf by leaf") {
  v1::Report r = ThreeNodes();
  r.mutable_health()->add_levels("leaf");
  // a and b on leaf-1, c on leaf-2: the pairs to c cross the leaves.
  for (auto& n : *r.mutable_health()->mutable_nodes()) {
    (*n.mutable_labels())["leaf"] = n.node() == "c" ? "leaf-2" : "leaf-1";
  }
  const std::string text = RenderText(r, false);
  CHECK(text.find("LEAF MAP (tcp_bw Gb/s") != std::string::npos);
  CHECK(text.find("1.45 [2]") != std::string::npos);  // a->c 1.5 and b->c 1.4: median, 2 bad
  CHECK(text.find("9.50") != std::string::npos);
  const std::string prom = RenderProm(r, /*per_node=*/false);
  CHECK(prom.find("fabricctl_group_pair_bandwidth_bytes_per_second{level=\"leaf\",group=\"leaf-1\","
                  "peer_group=\"leaf-2\"} 1.8125e+08") != std::string::npos);
  CHECK(prom.find("fabricctl_group_pair_bad_pairs{level=\"leaf\",group=\"leaf-1\",peer_group="
                  "\"leaf-2\"} 2") != std::string::npos);
  CHECK(prom.find("fabricctl_group_pair_bad_pairs{level=\"leaf\",group=\"leaf-1\",peer_group="
                  "\"leaf-1\"} 0") != std::string::npos);
  const std::string html = RenderHtml(r);
  CHECK(html.find("<table id=\"groups\">") != std::string::npos);
  CHECK(html.find("1.45 (2 bad)") != std::string::npos);
  // Without levels, none of it.
  CHECK(RenderText(ThreeNodes(), false).find("LEAF MAP") == std::string::npos);
}

}  // namespace fabricctl::report

namespace fabricctl::report {

// ThreeNodes' pairs on rail0, and a copy of them on rail1 at a tenth of the figures.
v1::Report TwoRails() {
  v1::Report r = ThreeNodes();
  r.mutable_health()->add_rails("rail0");
  r.mutable_health()->add_rails("rail1");
  const int n = r.health().pairs_size();
  for (int i = 0; i < n; ++i) {
    r.mutable_health()->mutable_pairs(i)->set_rail("rail0");
    v1::PairHealth copy = r.health().pairs(i);
    copy.set_rail("rail1");
    if (copy.has_bw_gbps()) copy.set_bw_gbps(copy.bw_gbps() / 10);
    *r.mutable_health()->add_pairs() = copy;
  }
  return r;
}

TEST_CASE("With rails, every format maps each rail on its own and labels its series") {
  const v1::Report r = TwoRails();
  const std::string text = RenderText(r, false);
  const size_t rail0 = text.find("HEAT MAP rail0"), rail1 = text.find("HEAT MAP rail1");
  REQUIRE(rail0 != std::string::npos);
  REQUIRE(rail1 != std::string::npos);
  CHECK(rail0 < rail1);
  // a -> b: 9.5 on rail0, 0.95 on rail1; each map shows its own rail's figure.
  CHECK(text.substr(rail0, rail1 - rail0).find("9.50") != std::string::npos);
  CHECK(text.substr(rail1).find("0.95") != std::string::npos);
  CHECK(text.substr(rail1).find("9.50") == std::string::npos);
  const std::string prom = RenderProm(r);
  CHECK(prom.find("fabricctl_pair_bandwidth_bytes_per_second{node=\"a\",peer=\"b\",probe=\"tcp_"
                  "bw\",rail=\"rail1\"}") != std::string::npos);
  const std::string html = RenderHtml(r);
  CHECK(html.find("id=\"heatmap-rail1\"") != std::string::npos);
  CHECK(html.find("<th>rail</th>") != std::string::npos);
  CHECK(RenderJunit(r).find("a -&gt; b on rail1") != std::string::npos);
  // Without rails: no rail label, no rail column.
  CHECK(RenderProm(ThreeNodes()).find("rail=") == std::string::npos);
  CHECK(RenderHtml(ThreeNodes()).find("<th>rail</th>") == std::string::npos);
}

}  // namespace fabricctl::report

namespace fabricctl::report {

TEST_CASE(
    "A fleet's reports stay a fleet's size: HTML leaf by leaf, text's worst pairs, no per-pair "
    "series") {
  const v1::Report fleet = Fleet(1000, 32);
  REQUIRE(fleet.health().pairs_size() > 10000);
  const std::string html = RenderHtml(fleet);
  INFO("HTML " << html.size() << " bytes");
  CHECK(html.size() < 4u << 20);
  CHECK(Count(html, "<details class=\"group\">") == 32);  // 31 full leaves and one of 8
  CHECK(html.find("leaf-0: 32 nodes, 1 of 496 pairs within it bad") != std::string::npos);
  CHECK(html.find("<title>node-0 -&gt; node-1 2.00 critical</title>") != std::string::npos);
  CHECK(html.find("id=\"bwmap\"") == std::string::npos);  // no whole-fleet map
  // The same leaves without topology: no maps, the node table and flagged pairs stand alone.
  v1::Report flat = fleet;
  flat.mutable_health()->clear_levels();
  const std::string bare = RenderHtml(flat);
  CHECK(bare.size() < 1u << 20);
  CHECK(bare.find("with topology.levels they are drawn leaf by leaf") != std::string::npos);

  const std::string text = RenderText(fleet, false);
  CHECK(text.find("WORST PAIRS (20 of") != std::string::npos);
  CHECK(text.find("node-0                   node-1                        2.00") !=
        std::string::npos);
  CHECK(text.size() < 64u << 10);

  const std::string prom = RenderProm(fleet);
  CHECK(prom.find("fabricctl_pair_bandwidth_bytes_per_second{") == std::string::npos);
  CHECK(prom.find("per-pair series left out for 1000 nodes") != std::string::npos);
  auto all = Render(fleet, "prom-pairs", false);
  REQUIRE(all.ok());
  CHECK(Count(*all, "fabricctl_pair_bandwidth_bytes_per_second{") ==
        2 * static_cast<size_t>(fleet.health().pairs_size()));
}

TEST_CASE("A small sweep keeps its whole maps and its pair series") {
  const v1::Report lab = Fleet(60, 32);
  const std::string html = RenderHtml(lab);
  CHECK(html.find("id=\"heatmap\"") != std::string::npos);
  CHECK(html.find("<details class=\"group\">") == std::string::npos);
  CHECK(RenderProm(lab).find("fabricctl_pair_bandwidth_bytes_per_second{") != std::string::npos);
}

}  // namespace fabricctl::report
