#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/render.h"
#include "report/render_util.h"

namespace fabricctl::report {
namespace {

using internal::XmlEscape;

struct Case {
  std::string name, classname, failure_type, message;
  bool skipped = false;
  double time = 0;
};

// The two node names of a pair in a fixed order, so that node -> peer and peer -> node meet.
std::pair<std::string, std::string> Unordered(const std::string& a, const std::string& b) {
  return {std::min(a, b), std::max(a, b)};
}

// Makes `c` a failure of the findings' kinds (comma-separated) with their details as the
// message; nothing when there are none at warning or above (known_good is no failure).
void FailOn(const std::vector<const v1::Finding*>& findings, Case* c) {
  std::vector<std::string> kinds, details;
  for (const v1::Finding* f : findings) {
    if (f->severity() < v1::SEVERITY_WARNING) continue;
    kinds.push_back(f->kind());
    details.push_back(f->detail());
  }
  if (kinds.empty()) return;
  c->failure_type = absl::StrJoin(kinds, ",");
  c->message = absl::StrJoin(details, "; ");
}

struct Tally {
  int failures = 0;
  int skipped = 0;
};

Tally Count(const std::vector<Case>& cases) {
  Tally t;
  for (const auto& c : cases) {
    t.failures += !c.failure_type.empty();
    t.skipped += c.skipped;
  }
  return t;
}

using Suites = std::map<std::string, std::vector<Case>>;  // family -> cases
using PairFindings = std::map<std::pair<std::string, std::string>, std::vector<const v1::Finding*>>;
using NodeFindings = std::map<std::string, std::vector<const v1::Finding*>>;

// A case per probe result of every pair, and one per pair verdict (slow link, high latency).
void AddPairCases(const v1::Report& report, const PairFindings& pair_findings, Suites& suites) {
  for (const auto& pair : report.health().pairs()) {
    for (const auto& result : pair.results()) {
      Case c;
      std::string family = internal::ProbeName(result.kind());
      c.classname = absl::StrCat("fabricctl.", family);
      c.name = absl::StrCat(pair.node(), " -> ", pair.peer(), pair.rail().empty() ? "" : " on ",
                            pair.rail());
      c.time = internal::Seconds(result.elapsed());
      if (result.outcome() == v1::PROBE_SKIPPED) {
        c.skipped = true;
        c.message = result.reason();
      } else if (result.outcome() != v1::PROBE_OK) {
        c.failure_type = result.outcome() == v1::PROBE_TIMEOUT ? "probe_timeout" : "probe_failed";
        c.message = result.reason();
      }
      suites[family].push_back(std::move(c));
    }
    auto it = pair_findings.find(Unordered(pair.node(), pair.peer()));
    if (it == pair_findings.end()) continue;
    for (const v1::Finding* f : it->second) {
      if (f->kind() == "probe_failed" || f->kind() == "probe_timeout") continue;
      Case c;
      c.classname = "fabricctl.pairs";
      c.name = absl::StrCat(f->node(), " -> ", f->peer(), ": ", f->kind());
      c.failure_type = f->kind();
      c.message = f->detail();
      suites["pairs"].push_back(std::move(c));
    }
  }
}

// A case per node's audit, one per node for its verdict, and one for findings about no node of
// the map (the fabric as a whole, an all-reduce no node explains): a gate reading the JUnit file
// must not miss them.
void AddNodeCases(const v1::Report& report, NodeFindings node_findings, Suites& suites) {
  for (const auto& node : report.health().nodes()) {
    for (const auto& audit : node.audits()) {
      Case c;
      c.classname = absl::StrCat("fabricctl.audits.", audit.audit());
      c.name = absl::StrCat(node.node(), ": ", audit.audit());
      if (audit.outcome() == v1::AUDIT_SKIPPED) {
        c.skipped = true;
        c.message = audit.reason();
      } else if (audit.outcome() == v1::AUDIT_FAILED) {
        c.failure_type = "audit_failed";
        c.message = audit.reason();
      } else {
        std::vector<const v1::Finding*> findings;
        for (const auto& f : audit.findings()) findings.push_back(&f);
        FailOn(findings, &c);
      }
      suites["audits"].push_back(std::move(c));
    }
  }
  for (const auto& node : report.health().nodes()) {
    Case c;
    c.classname = "fabricctl.nodes";
    c.name = node.node();
    FailOn(node_findings[node.node()], &c);
    node_findings.erase(node.node());
    suites["nodes"].push_back(std::move(c));
  }
  for (const auto& [node, findings] : node_findings) {
    if (findings.empty()) continue;
    Case c;
    c.classname = node.empty() ? "fabricctl.fabric" : "fabricctl.nodes";
    c.name = node.empty() ? "fabric" : node;
    FailOn(findings, &c);
    suites[node.empty() ? "fabric" : "nodes"].push_back(std::move(c));
  }
}

std::string ToXml(const std::string& title, const Suites& suites) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  int total = 0;
  Tally all;
  for (const auto& [family, cases] : suites) {
    const Tally t = Count(cases);
    total += static_cast<int>(cases.size());
    all.failures += t.failures;
    all.skipped += t.skipped;
  }
  absl::StrAppendFormat(&out,
                        "<testsuites name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                        XmlEscape(title), total, all.failures, all.skipped);
  for (const auto& [family, cases] : suites) {
    const Tally t = Count(cases);
    absl::StrAppendFormat(&out,
                          "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
                          "skipped=\"%d\">\n",
                          XmlEscape(family), cases.size(), t.failures, t.skipped);
    for (const auto& c : cases) {
      absl::StrAppendFormat(&out, "    <testcase classname=\"%s\" name=\"%s\" time=\"%.3f\"",
                            XmlEscape(c.classname), XmlEscape(c.name), c.time);
      if (c.failure_type.empty() && !c.skipped) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (c.skipped) {
        absl::StrAppendFormat(&out, "      <skipped message=\"%s\"/>\n", XmlEscape(c.message));
      } else {
        absl::StrAppendFormat(&out, "      <failure type=\"%s\" message=\"%s\">%s</failure>\n",
                              XmlEscape(c.failure_type), XmlEscape(c.message),
                              XmlEscape(c.message));
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace

std::string RenderJunit(const v1::Report& report) {
  // Pair findings by unordered pair; node findings by node.
  PairFindings pair_findings;
  NodeFindings node_findings;
  for (const auto& f : report.findings()) {
    if (f.peer().empty()) {
      node_findings[f.node()].push_back(&f);
    } else {
      pair_findings[Unordered(f.node(), f.peer())].push_back(&f);
    }
  }
  Suites suites;
  AddPairCases(report, pair_findings, suites);
  AddNodeCases(report, std::move(node_findings), suites);
  return ToXml(internal::Title(report), suites);
}

}  // namespace fabricctl::report
