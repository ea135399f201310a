// The HTML report: one self-contained file (no script, no external reference) with the
// verdict, timestamps, the drain list, the status and bandwidth maps with legends, findings,
// nodes (unreachable ones marked), audits, all-reduce results and the flagged pairs.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/group_matrix.h"
#include "report/render.h"
#include "report/render_util.h"

namespace fabricctl::report {
namespace {

using internal::SeverityLabel;
using internal::SeverityName;
using internal::StatusName;
using internal::When;
using internal::XmlEscape;

std::string Outcome(v1::AuditOutcome o) {
  switch (o) {
    case v1::AUDIT_RAN:
      return "ran";
    case v1::AUDIT_SKIPPED:
      return "skipped";
    case v1::AUDIT_FAILED:
      return "failed";
    default:
      return "unknown";
  }
}

std::string Header(const v1::Report& report) {
  const std::string title = XmlEscape(internal::Title(report));
  const auto& sum = report.summary();
  std::string html = absl::StrFormat(
      R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:13px;vertical-align:top}
.critical{color:#b32d2d;font-weight:bold}.warning{color:#a77400;font-weight:bold}
.ok{color:#2d7a48}.unknown{color:#777}.legend{margin:6px 0;font-size:13px}
.swatch{margin-right:14px;white-space:nowrap}.swatch svg{vertical-align:middle}
#drain{font-size:15px}
</style></head><body>
<h1>%s: <span class="%s">%s</span></h1>
<p>%d nodes (%d ok, %d warning, %d critical, %d unknown), %d pairs, %d findings, %.1f s.</p>
<table id="times"><tr><th>started</th><td>%s</td></tr><tr><th>finished</th><td>%s</td></tr>
<tr><th>generated</th><td>%s by %s</td></tr></table>
)",
      title, title, SeverityLabel(sum.worst_severity()), SeverityName(sum.worst_severity()),
      sum.nodes(), sum.nodes_ok(), sum.nodes_warning(), sum.nodes_critical(), sum.nodes_unknown(),
      sum.pairs(), report.findings_size(), internal::Seconds(sum.elapsed()),
      When(report.sweep().started()), When(report.sweep().finished()), When(report.generated()),
      XmlEscape(report.generator()));
  std::vector<std::string> drain;
  for (const auto& d : sum.drain()) drain.push_back(XmlEscape(d));
  absl::StrAppend(&html, "<p id=\"drain\"><b>Drain:</b> ",
                  drain.empty() ? "no node" : absl::StrJoin(drain, ", "), "</p>\n");
  if (sum.given_back_size() > 0) {
    std::vector<std::string> back;
    for (const auto& d : sum.given_back()) back.push_back(XmlEscape(d));
    absl::StrAppend(&html, "<p id=\"given-back\"><b>Give back:</b> ", absl::StrJoin(back, ", "),
                    "</p>\n");
  }
  return html;
}

std::string Findings(const v1::Report& report) {
  std::string html =
      "<h2>Findings</h2>\n<table "
      "id=\"findings\"><tr><th>severity</th><th>kind</th><th>node</th><th>peer</th><th>detail</"
      "th><th>action</th></tr>\n";
  for (const auto& f : report.findings()) {
    absl::StrAppendFormat(
        &html,
        "<tr><td "
        "class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
        SeverityLabel(f.severity()), SeverityName(f.severity()), XmlEscape(f.kind()),
        XmlEscape(f.node().empty() ? f.device() : f.node()), XmlEscape(f.peer()),
        XmlEscape(f.detail()), internal::ActionName(f.action()));
  }
  return html + "</table>\n";
}

std::string Nodes(const v1::Report& report) {
  std::string html =
      "<h2>Nodes</h2>\n<table id=\"nodes\"><tr><th>node</th><th>status</th><th>median "
      "Gb/s</th><th>robust z</th><th>labels</th><th>note</th></tr>\n";
  for (const auto& node : report.health().nodes()) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : node.labels()) labels.push_back(absl::StrCat(k, "=", v));
    std::sort(labels.begin(), labels.end());
    if (!node.placed_by().empty())
      labels.push_back(absl::StrCat("(placed by ", node.placed_by(), ")"));
    std::string note;
    for (const auto& f : report.findings()) {
      if (f.node() == node.node() && f.kind() == "node_unreachable")
        note = "unreachable: " + f.detail();
    }
    absl::StrAppendFormat(
        &html,
        "<tr%s><td>%s</td><td "
        "class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
        note.empty() ? "" : " class=\"unreachable\"", XmlEscape(node.node()),
        StatusName(node.status()), StatusName(node.status()),
        node.has_median_bw_gbps() ? absl::StrFormat("%.2f", node.median_bw_gbps()) : "",
        node.has_robust_z() ? absl::StrFormat("%.2f", node.robust_z()) : "",
        XmlEscape(absl::StrJoin(labels, " ")), XmlEscape(note));
  }
  return html + "</table>\n";
}

std::string Audits(const v1::Report& report) {
  std::string rows;
  for (const auto& node : report.health().nodes()) {
    for (const auto& a : node.audits()) {
      std::vector<std::string> seen;
      for (const auto& [k, v] : a.observed()) seen.push_back(XmlEscape(k + ": " + v));
      std::sort(seen.begin(), seen.end());
      std::vector<std::string> kinds;
      for (const auto& f : a.findings()) kinds.push_back(XmlEscape(f.kind()));
      absl::StrAppendFormat(&rows,
                            "<tr><td>%s</td><td>%s</td><td "
                            "class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                            XmlEscape(node.node()), XmlEscape(a.audit()),
                            a.outcome() == v1::AUDIT_FAILED ? "warning" : "", Outcome(a.outcome()),
                            absl::StrJoin(kinds, ", "), XmlEscape(a.reason()),
                            absl::StrJoin(seen, "<br>"));
    }
  }
  if (rows.empty())
    return "<h2>Audits</h2>\n<p id=\"audits\">No audit ran in this sweep (<code>--audits</code> "
           "runs them).</p>\n";
  return "<h2>Audits</h2>\n<table "
         "id=\"audits\"><tr><th>node</th><th>audit</th><th>outcome</th><th>findings</"
         "th><th>reason</th><th>observed</th></tr>\n" +
         rows + "</table>\n";
}

std::string Allreduce(const v1::Report& report) {
  if (report.health().collectives().empty()) return "";
  std::string html =
      "<h2>All-reduce</h2>\n<table id=\"allreduce\"><tr><th>group (rank "
      "0)</th><th>device</th><th>outcome</th><th>size</th><th>algbw GB/s</th><th>busbw "
      "GB/s</th><th>wrong</th><th>reason</th></tr>\n";
  for (const auto& c : report.health().collectives()) {
    const std::string outcome = v1::ProbeOutcome_Name(c.outcome());
    if (c.collective().empty()) {
      absl::StrAppendFormat(&html,
                            "<tr><td>%s</td><td>%s</td><td>%s</td><td></td><td></td><td></td><td></"
                            "td><td>%s</td></tr>\n",
                            XmlEscape(c.node()), XmlEscape(c.device()), outcome,
                            XmlEscape(c.reason()));
    }
    for (const auto& p : c.collective()) {
      absl::StrAppendFormat(&html,
                            "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%.2f</"
                            "td><td>%.2f</td><td>%d</td><td>%s</td></tr>\n",
                            XmlEscape(c.node()), XmlEscape(c.device()), outcome, p.size_bytes(),
                            p.algbw_gbytes(), p.busbw_gbytes(), p.wrong(), XmlEscape(c.reason()));
    }
  }
  return html + "</table>\n";
}

std::string FlaggedPairs(const v1::Report& report) {
  const bool rails = !report.health().rails().empty();
  std::string rows;
  // A fleet whose pairs are mostly bad lists the first kMaxRows; the JSON report has them all.
  constexpr int kMaxRows = 2000;
  int listed = 0, flagged = 0;
  for (const auto& p : report.health().pairs()) {
    if (p.status() == v1::HEALTH_OK) continue;
    if (++flagged > kMaxRows) continue;
    ++listed;
    auto figure = [](bool has, double v, int decimals) {
      return has ? absl::StrFormat("%.*f", decimals, v) : std::string();
    };
    absl::StrAppendFormat(&rows,
                          "<tr><td>%s</td><td>%s</td>%s<td "
                          "class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td></tr>\n",
                          XmlEscape(p.node()), XmlEscape(p.peer()),
                          rails ? absl::StrCat("<td>", XmlEscape(p.rail()), "</td>") : "",
                          StatusName(p.status()), StatusName(p.status()),
                          figure(p.has_bw_gbps(), p.bw_gbps(), 2),
                          figure(p.has_bw_reverse_gbps(), p.bw_reverse_gbps(), 2),
                          figure(p.has_lat_us(), p.lat_us(), 1), p.attempts());
  }
  if (rows.empty())
    return "<h2>Flagged pairs</h2>\n<p id=\"pairs\">None: every measured pair is ok.</p>\n";
  return std::string("<h2>Flagged pairs</h2>\n<table id=\"pairs\"><tr><th>node</th><th>peer</th>") +
         (rails ? "<th>rail</th>" : "") +
         "<th>status</th><th>Gb/s node&#8594;peer</th><th>Gb/s peer&#8594;node</th><th>latency "
         "us</th><th>attempts</th></tr>\n" +
         rows + "</table>\n" +
         (flagged > listed
              ? absl::StrFormat(
                    "<p>The first %d of %d flagged pairs; --format json lists them all.</p>\n",
                    listed, flagged)
              : "");
}

// The group x group (leaf x leaf) table where the sweep had a topology.
std::string GroupMap(const v1::Report& report, const std::string& rail) {
  const auto m = internal::GroupMatrixOf(report, rail);
  if (!m) return "";
  std::string html =
      absl::StrCat("<h2>", XmlEscape(m->level), " map", rail.empty() ? "" : " " + XmlEscape(rail),
                   " (median Gb/s from the row's ", XmlEscape(m->level),
                   " to the column's; bad pairs)</h2>\n<table id=\"groups",
                   rail.empty() ? "" : "-" + XmlEscape(rail), "\"><tr><th></th>");
  for (const auto& g : m->groups) absl::StrAppend(&html, "<th>", XmlEscape(g), "</th>");
  html += "</tr>\n";
  for (size_t x = 0; x < m->groups.size(); ++x) {
    absl::StrAppend(&html, "<tr><th>", XmlEscape(m->groups[x]), "</th>");
    for (size_t y = 0; y < m->groups.size(); ++y) {
      const double bw = m->median_gbps[x][y];
      absl::StrAppendFormat(&html, "<td class=\"%s\">%s%s</td>",
                            m->bad[x][y] > 0 ? "critical" : "ok",
                            std::isnan(bw) ? "-" : absl::StrFormat("%.2f", bw),
                            m->bad[x][y] > 0 ? absl::StrCat(" (", m->bad[x][y], " bad)") : "");
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string RenderHtml(const v1::Report& report) {
  std::string html = Header(report);
  const std::string probe = XmlEscape(internal::HeadlineProbe(report));
  for (const std::string& rail : internal::RailsOf(report)) html += GroupMap(report, rail);
  absl::StrAppend(&html, "<h2>Health map: pair status</h2>\n", internal::StatusMapHtml(report));
  absl::StrAppend(&html, "<h2>Bandwidth map (", probe, ", Gb/s, row node to column node)</h2>\n",
                  internal::BandwidthMapHtml(report));
  html += Findings(report);
  html += Nodes(report);
  html += Audits(report);
  html += Allreduce(report);
  html += FlaggedPairs(report);
  html += "</body></html>\n";
  return html;
}

}  // namespace fabricctl::report
