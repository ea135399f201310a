// `fabricctl accept --format html`: one self-contained page (no script, no external reference)
// with the summary, a row per new node and its checks, the configuration differences, the
// cabling, each new node's fabric figures beside the references' and the other findings.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/render_util.h"

namespace fabricctl::report::internal {
namespace {

using Findings = google::protobuf::RepeatedPtrField<v1::Finding>;

// The prefixes of config_drift's evidence of each differing part: how the node and its
// reference read it.
constexpr char kNodePart[] = "node.";
constexpr char kReferencePart[] = "reference.";

std::string Evidence(const v1::Finding& f, const std::string& key) {
  auto it = f.evidence().find(key);
  return it == f.evidence().end() ? "" : it->second;
}

std::string Td(const std::string& escaped, const std::string& css = "") {
  return css.empty() ? absl::StrCat("<td>", escaped, "</td>")
                     : absl::StrCat("<td class=\"", css, "\">", escaped, "</td>");
}

// A figure's cell, "not measured" when it is absent (never 0).
std::string FigureTd(bool has, double value, int decimals) {
  return has ? Td(absl::StrFormat("%.*f", decimals, value)) : Td("not measured", "unknown");
}

std::string Header(const v1::Acceptance& a) {
  int accepted = 0;
  for (const auto& node : a.nodes()) accepted += node.accepted();
  const int rejected = a.nodes_size() - accepted;
  const bool cut_short = !a.incomplete().empty() || a.sweep_ids().empty();
  std::string html = absl::StrCat(
      R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fabricctl accept</title>
<style>
body{font-family:sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:13px;vertical-align:top}
.critical{color:#b32d2d;font-weight:bold}.warning{color:#a77400;font-weight:bold}
.ok{color:#2d7a48}.unknown{color:#777}
</style></head><body>
<h1>fabricctl accept: <span class=")",
      rejected > 0 ? "critical" : (cut_short ? "unknown" : "ok"), "\">", accepted, " accepted, ",
      rejected, " rejected", cut_short ? " (incomplete)" : "", "</span></h1>\n");
  std::vector<std::string> refs;
  for (const std::string& r : a.reference_nodes()) refs.push_back(XmlEscape(r));
  const std::string source =
      a.reference_source().empty() ? "" : absl::StrCat(" (", XmlEscape(a.reference_source()), ")");
  absl::StrAppend(
      &html, "<table id=\"summary\">\n<tr><th>reference nodes</th><td>",
      refs.empty() ? "none: the new nodes judged among themselves"
                   : absl::StrCat(absl::StrJoin(refs, ", "), source),
      "</td></tr>\n<tr><th>passes</th><td>", a.sweep_ids_size(),
      a.sweep_ids().empty() ? "" : absl::StrCat(": sweep ", absl::StrJoin(a.sweep_ids(), ", ")),
      "</td></tr>\n<tr><th>started</th><td>", When(a.started()),
      "</td></tr>\n<tr><th>duration</th><td>", absl::StrFormat("%.1f s", Seconds(a.duration())),
      "</td></tr>\n");
  if (!a.incomplete().empty()) {
    absl::StrAppend(&html, "<tr><th>incomplete</th>", Td(XmlEscape(a.incomplete()), "critical"),
                    "</tr>\n");
  }
  return html + "</table>\n";
}

// One row per new node: its verdict and each check, passed or failed with the kinds that failed
// it.
std::string Nodes(const v1::Acceptance& a) {
  const char* const kChecks[] = {"reachable", "configuration", "cabling", "fabric"};
  std::string html =
      "<h2>New nodes</h2>\n<table id=\"nodes\"><tr><th>node</th><th>verdict</th><th>reachable</"
      "th><th>configuration</th><th>cabling</th><th>fabric</th></tr>\n";
  for (const auto& node : a.nodes()) {
    absl::StrAppend(&html, "<tr>", Td(XmlEscape(node.node())),
                    node.accepted() ? Td("accepted", "ok") : Td("rejected", "critical"));
    for (const char* name : kChecks) {
      const v1::Acceptance::Check* check = nullptr;
      for (const auto& c : node.checks()) {
        if (c.name() == name) check = &c;
      }
      if (check == nullptr) {
        html += Td("not judged", "unknown");
        continue;
      }
      if (check->passed()) {
        html += Td("passed", "ok");
        continue;
      }
      std::vector<std::string> kinds;
      for (const v1::Finding& f : check->findings()) kinds.push_back(XmlEscape(f.kind()));
      html += Td(absl::StrCat("failed: ", absl::StrJoin(kinds, ", ")), "critical");
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

// Each new node's findings of `kind`, in the check `check`.
std::vector<const v1::Finding*> FindingsOf(const v1::Acceptance::NodeVerdict& node,
                                           const std::string& check, const std::string& kind) {
  std::vector<const v1::Finding*> out;
  for (const auto& c : node.checks()) {
    if (c.name() != check) continue;
    for (const v1::Finding& f : c.findings()) {
      if (f.kind() == kind) out.push_back(&f);
    }
  }
  return out;
}

// config_drift, one row per part that differs: the node's reading beside its reference's.
std::string Configuration(const v1::Acceptance& a) {
  std::string rows;
  for (const auto& node : a.nodes()) {
    for (const v1::Finding* f : FindingsOf(node, "configuration", "config_drift")) {
      const std::string reference = XmlEscape(Evidence(*f, "reference"));
      const std::string passes = XmlEscape(Evidence(*f, "passes"));
      std::vector<std::string> parts;
      for (const auto& entry : f->evidence()) {
        if (absl::StartsWith(entry.first, kNodePart))
          parts.push_back(entry.first.substr(sizeof(kNodePart) - 1));
      }
      std::sort(parts.begin(), parts.end());
      if (parts.empty()) {  // a finding without its parts: its own words
        absl::StrAppend(&rows, "<tr>", Td(XmlEscape(node.node())), "<td colspan=\"3\">",
                        XmlEscape(f->detail()), "</td>", Td(reference), Td(passes), "</tr>\n");
      }
      for (const std::string& part : parts) {
        absl::StrAppend(&rows, "<tr>", Td(XmlEscape(node.node())), Td(XmlEscape(part)),
                        Td(XmlEscape(Evidence(*f, kNodePart + part)), "critical"),
                        Td(XmlEscape(Evidence(*f, kReferencePart + part))), Td(reference),
                        Td(passes), "</tr>\n");
      }
    }
  }
  if (rows.empty()) {
    return "<h2>Configuration differences</h2>\n<p id=\"configuration\">None: every new node's "
           "inventory reads as a reference node's.</p>\n";
  }
  return "<h2>Configuration differences</h2>\n<table id=\"configuration\"><tr><th>node</"
         "th><th>part</th><th>the node</th><th>the reference</th><th>reference node</"
         "th><th>passes</th></tr>\n" +
         rows + "</table>\n";
}

// miscabled, one row per interface: what LLDP saw against what the rule expected.
std::string Cabling(const v1::Acceptance& a) {
  std::string rows;
  for (const auto& node : a.nodes()) {
    for (const v1::Finding* f : FindingsOf(node, "cabling", "miscabled")) {
      const std::string source = Evidence(*f, "source");
      absl::StrAppend(&rows, "<tr>", Td(XmlEscape(node.node())), Td(XmlEscape(f->device())),
                      Td(XmlEscape(f->rail())), Td(XmlEscape(Evidence(*f, "expected"))),
                      Td(XmlEscape(Evidence(*f, "seen")), "critical"),
                      Td(source.empty() ? "the reference nodes' leaves" : XmlEscape(source)),
                      Td(XmlEscape(Evidence(*f, "passes"))), "</tr>\n");
    }
  }
  if (rows.empty()) {
    return "<h2>Cabling</h2>\n<p id=\"cabling\">None miscabled: every judged interface is cabled "
           "as expected.</p>\n";
  }
  return "<h2>Cabling</h2>\n<table id=\"cabling\"><tr><th>node</th><th>interface</th><th>rail</"
         "th><th>expected</th><th>seen</th><th>rule</th><th>passes</th></tr>\n" +
         rows + "</table>\n";
}

// The node's figures on one rail beside the references', its bandwidth as a share of theirs.
std::string FigureRow(const std::string& node, const std::string& css, bool rails,
                      const v1::Acceptance::Figures& f) {
  const bool ratio = f.has_bw_gbps() && f.has_reference_bw_gbps() && f.reference_bw_gbps() > 0;
  return absl::StrCat(
      "<tr>", Td(XmlEscape(node), css), rails ? Td(XmlEscape(f.rail())) : "",
      FigureTd(f.has_bw_gbps(), f.bw_gbps(), 2),
      FigureTd(f.has_reference_bw_gbps(), f.reference_bw_gbps(), 2),
      ratio ? Td(absl::StrFormat("%.0f %%", 100 * f.bw_gbps() / f.reference_bw_gbps())) : Td(""),
      FigureTd(f.has_lat_us(), f.lat_us(), 1),
      FigureTd(f.has_reference_lat_us(), f.reference_lat_us(), 1), Td(absl::StrCat(f.partners())),
      "</tr>\n");
}

std::string Figures(const v1::Acceptance& a) {
  bool rails = false;
  for (const auto& node : a.nodes()) {
    for (const auto& f : node.figures()) rails = rails || !f.rail().empty();
  }
  std::string rows;
  for (const auto& node : a.nodes()) {
    std::string css = "ok";
    for (const auto& c : node.checks()) {
      if (c.name() == "fabric" && !c.passed()) css = "critical";
    }
    if (node.figures().empty()) {
      // No pass measured it: every figure absent.
      rows += FigureRow(node.node(), css, rails, v1::Acceptance::Figures());
      continue;
    }
    for (const auto& f : node.figures()) rows += FigureRow(node.node(), css, rails, f);
  }
  return absl::StrCat(
      "<h2>Fabric figures (medians over every pass, with the reference nodes beside theirs "
      "among themselves)</h2>\n<table id=\"figures\"><tr><th>node</th>",
      rails ? "<th>rail</th>" : "",
      "<th>Gb/s</th><th>the references' Gb/s</th><th>share</th><th>latency &#181;s</th><th>the "
      "references' &#181;s</th><th>measured with</th></tr>\n",
      rows, "</table>\n");
}

// The findings that failed the new nodes' checks, each once.
std::string NodeFindings(const v1::Acceptance& a) {
  std::string rows;
  for (const auto& node : a.nodes()) {
    for (const auto& c : node.checks()) {
      for (const v1::Finding& f : c.findings()) {
        absl::StrAppend(&rows, "<tr>", Td(XmlEscape(node.node())), Td(XmlEscape(c.name())),
                        Td(SeverityName(f.severity()), SeverityLabel(f.severity())),
                        Td(XmlEscape(f.kind())), Td(XmlEscape(Evidence(f, "passes"))),
                        Td(XmlEscape(f.detail())), "</tr>\n");
      }
    }
  }
  if (rows.empty()) return "";
  return "<h2>Findings of the new nodes</h2>\n<table id=\"findings\"><tr><th>node</th><th>check</"
         "th><th>severity</th><th>kind</th><th>passes</th><th>detail</th></tr>\n" +
         rows + "</table>\n";
}

// A list of findings apart from the verdicts: shared, about the references, about no one node.
std::string Others(const std::string& id, const std::string& title, const Findings& findings) {
  if (findings.empty()) return "";
  std::string html = absl::StrCat("<h2>", title, "</h2>\n<table id=\"", id,
                                  "\"><tr><th>severity</th><th>kind</th><th>node</th><th>peer</"
                                  "th><th>passes</th><th>detail</th></tr>\n");
  for (const v1::Finding& f : findings) {
    absl::StrAppend(&html, "<tr>", Td(SeverityName(f.severity()), SeverityLabel(f.severity())),
                    Td(XmlEscape(f.kind())),
                    Td(XmlEscape(f.node().empty() ? f.device() : f.node())),
                    Td(XmlEscape(f.peer())), Td(XmlEscape(Evidence(f, "passes"))),
                    Td(XmlEscape(f.detail())), "</tr>\n");
  }
  return html + "</table>\n";
}

}  // namespace

std::string AcceptanceHtml(const v1::Acceptance& a) {
  return absl::StrCat(
      Header(a), Nodes(a), Configuration(a), Cabling(a), Figures(a), NodeFindings(a),
      Others("shared", "Shared with every reference node (the fleet's state, not failing)",
             a.shared_findings()),
      Others("reference-findings", "About the reference nodes", a.reference_findings()),
      Others("other-findings", "About no single new node", a.other_findings()), "</body></html>\n");
}

}  // namespace fabricctl::report::internal
