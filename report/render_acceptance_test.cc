// fabricctl accept's output formats (report/render_acceptance.h) on a constructed acceptance.
#include "report/render_acceptance.h"

#include <algorithm>
#include <catch2/catch.hpp>

namespace fabricctl::report {
namespace {

v1::Finding* Failed(v1::Acceptance::NodeVerdict* node, const std::string& check,
                    const std::string& kind, const std::string& passes) {
  for (auto& c : *node->mutable_checks()) {
    if (c.name() != check) continue;
    c.set_passed(false);
    v1::Finding* f = c.add_findings();
    f->set_kind(kind);
    f->set_node(node->node());
    f->set_severity(v1::SEVERITY_CRITICAL);
    (*f->mutable_evidence())["passes"] = passes;
    return f;
  }
  return nullptr;
}

v1::Acceptance::NodeVerdict* Verdict(v1::Acceptance& a, const std::string& name) {
  v1::Acceptance::NodeVerdict* node = a.add_nodes();
  node->set_node(name);
  node->set_accepted(true);
  for (const char* check : {"reachable", "configuration", "cabling", "fabric"}) {
    v1::Acceptance::Check* c = node->add_checks();
    c->set_name(check);
    c->set_passed(true);
  }
  return node;
}

// A rack node (its name with a '<' to escape) rejected on three checks, with figures on one of
// its two rails; a node accepted that no pass measured.
v1::Acceptance Rack() {
  v1::Acceptance a;
  a.add_reference_nodes("ref-1");
  a.add_reference_nodes("ref-2");
  a.set_reference_source("known-good");
  a.add_sweep_ids(4);
  a.add_sweep_ids(5);
  a.mutable_started()->set_seconds(1700000000);
  a.mutable_duration()->set_seconds(90);
  v1::Acceptance::NodeVerdict* rack = Verdict(a, "rack<7>-01");
  rack->set_accepted(false);
  auto& drift = *Failed(rack, "configuration", "config_drift", "2 of 2")->mutable_evidence();
  drift["reference"] = "ref-1";
  drift["node.interface eth0"] = "400000 Mb/s, MTU 1400";
  drift["reference.interface eth0"] = "400000 Mb/s, MTU 9000";
  v1::Finding* cable = Failed(rack, "cabling", "miscabled", "1 of 2");
  cable->set_device("eth1");
  cable->set_rail("rail1");
  (*cable->mutable_evidence())["expected"] = "rail1-sw";
  (*cable->mutable_evidence())["seen"] = "rail0-sw";
  Failed(rack, "fabric", "below_reference", "2 of 2")->set_detail("58 Gb/s, below 96");
  v1::Acceptance::Figures* rail0 = rack->add_figures();
  rail0->set_rail("rail0");
  rail0->set_bw_gbps(58);
  rail0->set_reference_bw_gbps(96);
  rail0->set_lat_us(20);
  rail0->set_reference_lat_us(12);
  rail0->set_partners(2);
  v1::Acceptance::Figures* rail1 = rack->add_figures();
  rail1->set_rail("rail1");
  rail1->set_reference_bw_gbps(380);
  Verdict(a, "new-2");
  v1::Finding* split = a.add_other_findings();
  split->set_kind("fleet_split");
  split->set_severity(v1::SEVERITY_WARNING);
  return a;
}

TEST_CASE("HTML: the summary, a row per node, the differences, the cabling and the figures") {
  auto html = RenderAcceptance(Rack(), "html");
  REQUIRE(html.ok());
  CHECK(html->find("<script") == std::string::npos);
  CHECK(html->find("http") == std::string::npos);
  CHECK(html->find("1 accepted, 1 rejected") != std::string::npos);
  CHECK(html->find("<td>ref-1, ref-2 (known-good)</td>") != std::string::npos);
  CHECK(html->find("<td>2: sweep 4, 5</td>") != std::string::npos);
  CHECK(html->find("<td>2023-11-14 22:13:20 UTC</td>") != std::string::npos);
  CHECK(html->find("<td>90.0 s</td>") != std::string::npos);
  // The node's name escaped wherever it appears.
  CHECK(html->find("rack<7>") == std::string::npos);
  CHECK(html->find("<td>rack&lt;7&gt;-01</td><td class=\"critical\">rejected</td><td "
                   "class=\"ok\">passed</td><td class=\"critical\">failed: config_drift</td>") !=
        std::string::npos);
  CHECK(html->find("<td>interface eth0</td><td class=\"critical\">400000 Mb/s, MTU 1400</td>"
                   "<td>400000 Mb/s, MTU 9000</td><td>ref-1</td><td>2 of 2</td>") !=
        std::string::npos);
  CHECK(html->find("<td>eth1</td><td>rail1</td><td>rail1-sw</td><td class=\"critical\">rail0-sw"
                   "</td>") != std::string::npos);
  CHECK(html->find("<td>rail0</td><td>58.00</td><td>96.00</td><td>60 %</td><td>20.0</td>"
                   "<td>12.0</td><td>2</td>") != std::string::npos);
  CHECK(html->find("<td>rail1</td><td class=\"unknown\">not measured</td><td>380.00</td><td>"
                   "</td>") != std::string::npos);
  CHECK(html->find("id=\"other-findings\"") != std::string::npos);
  CHECK(html->find("id=\"reference-findings\"") == std::string::npos);
}

TEST_CASE("HTML: a node no pass measured is not measured, never 0") {
  auto html = RenderAcceptance(Rack(), "html");
  REQUIRE(html.ok());
  const size_t row = html->find("<tr><td class=\"ok\">new-2</td>");
  REQUIRE(row != std::string::npos);
  const std::string cells = html->substr(row, html->find("</tr>", row) - row);
  CHECK(cells.find("not measured") != std::string::npos);
  CHECK(cells.find("0.0") == std::string::npos);
  // And the JSON leaves its figures out rather than writing 0.
  auto json = RenderAcceptance(Rack(), "json");
  REQUIRE(json.ok());
  CHECK(json->find("\"reference_bw_gbps\": 380") != std::string::npos);
  CHECK(json->find("\"bw_gbps\": 0") == std::string::npos);
}

TEST_CASE("HTML is among the formats; an acceptance cut short says so") {
  const auto& formats = AcceptanceFormats();
  CHECK(std::find(formats.begin(), formats.end(), "html") != formats.end());
  v1::Acceptance a = Rack();
  a.set_incomplete("pass 2: the controller went <away>");
  auto html = RenderAcceptance(a, "html");
  REQUIRE(html.ok());
  CHECK(html->find("(incomplete)") != std::string::npos);
  CHECK(html->find("<td class=\"critical\">pass 2: the controller went &lt;away&gt;</td>") !=
        std::string::npos);
}

}  // namespace
}  // namespace fabricctl::report
