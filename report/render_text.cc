#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/group_matrix.h"
#include "report/render.h"
#include "report/render_util.h"

namespace fabricctl::report {
namespace {

using internal::ActionName;
using internal::SeverityName;

// The severity whose colour a pair of `status` is painted in.
v1::Severity SeverityOf(v1::HealthStatus status) {
  return status == v1::HEALTH_CRITICAL  ? v1::SEVERITY_CRITICAL
         : status == v1::HEALTH_WARNING ? v1::SEVERITY_WARNING
                                        : v1::SEVERITY_OK;
}

// The mark after a heat map cell: * critical, ! warning, ? not measured.
const char* MarkOf(v1::HealthStatus status) {
  return status == v1::HEALTH_CRITICAL  ? "*"
         : status == v1::HEALTH_WARNING ? "!"
         : status == v1::HEALTH_UNKNOWN ? "?"
                                        : " ";
}

std::string AuditOutcome(const v1::AuditResult& audit) {
  return audit.outcome() == v1::AUDIT_SKIPPED  ? "skipped"
         : audit.outcome() == v1::AUDIT_FAILED ? "failed"
         : audit.findings_size() > 0           ? "findings"
                                               : "ok";
}

// ANSI colours by severity, when the output is a terminal.
struct Paint {
  bool color;
  const char* reset() const { return color ? "\033[0m" : ""; }
  const char* operator()(v1::Severity s) const {
    if (!color) return "";
    return s == v1::SEVERITY_CRITICAL  ? "\033[31m"
           : s == v1::SEVERITY_WARNING ? "\033[33m"
                                       : "\033[32m";
  }
};

// The summary line: a check's audits, or a sweep's nodes, pairs and findings.
std::string SummaryLine(const v1::Report& report, const Paint& paint) {
  const auto& sum = report.summary();
  const std::string title = internal::Title(report);
  if (report.source() == "check") {
    int audits = 0, skipped = 0;
    for (const auto& node : report.health().nodes()) {
      for (const auto& a : node.audits()) {
        ++audits;
        skipped += a.outcome() == v1::AUDIT_SKIPPED;
      }
    }
    return absl::StrFormat("%s: %s%s%s - %d audits (%d skipped), %d findings\n", title,
                           paint(sum.worst_severity()), SeverityName(sum.worst_severity()),
                           paint.reset(), audits, skipped, report.findings_size());
  }
  return absl::StrFormat(
      "%s: %s%s%s - %d nodes (%d ok, %d warning, %d critical, %d unknown), %d pairs (%d flagged), "
      "%d findings, %.1fs\n",
      title, paint(sum.worst_severity()), SeverityName(sum.worst_severity()), paint.reset(),
      sum.nodes(), sum.nodes_ok(), sum.nodes_warning(), sum.nodes_critical(), sum.nodes_unknown(),
      sum.pairs(), sum.pairs_failed(), report.findings_size(), internal::Seconds(sum.elapsed()));
}

// Each node's audits, with a measurement's figures (gpu_copy: per GPU and size).
void AppendAudits(const v1::Report& report, std::string& out) {
  for (const auto& node : report.health().nodes()) {
    if (node.audits_size() == 0) continue;
    absl::StrAppend(&out, "\nAUDITS (", node.node(), ")\n");
    for (const auto& audit : node.audits()) {
      absl::StrAppendFormat(&out, "%-12s %-9s %s\n", audit.audit(), AuditOutcome(audit),
                            audit.reason().empty() ? absl::StrCat(audit.observed_size(), " checked")
                                                   : audit.reason());
      if (audit.audit() == "gpu_copy" && audit.outcome() == v1::AUDIT_RAN) {
        std::vector<std::pair<std::string, std::string>> figures(audit.observed().begin(),
                                                                 audit.observed().end());
        std::sort(figures.begin(), figures.end());
        for (const auto& [what, value] : figures) {
          absl::StrAppendFormat(&out, "%-22s %s: %s\n", "", what, value);
        }
      }
    }
  }
}

void AppendCollectives(const v1::Report& report, std::string& out) {
  for (const auto& c : report.health().collectives()) {
    absl::StrAppendFormat(&out, "\nALLREDUCE (%s, %d nodes from %s)%s\n", c.device(),
                          c.effective_spec().allreduce().group_size(), c.node(),
                          c.outcome() == v1::PROBE_OK ? "" : absl::StrCat(": ", c.reason()));
    if (c.has_nccl() && !c.nccl().net().empty()) {
      absl::StrAppendFormat(&out, "NCCL network %s, GPUDirect RDMA %s\n", c.nccl().net(),
                            c.nccl().gpudirect_rdma() ? "in use" : "not in use");
    }
    if (c.collective_size() > 0) {
      out += "        size     time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n";
      for (const auto& p : c.collective()) {
        absl::StrAppendFormat(&out, "%12d %12.1f %12.3f %12.3f %7d\n", p.size_bytes(), p.time_us(),
                              p.algbw_gbytes(), p.busbw_gbytes(), p.wrong());
      }
    }
  }
}

// A fleet's text report lists its worst pairs instead of a map: the kWorstPairs lowest by the
// worse direction against the typical figure (flagged ones first), with their figures.
void AppendWorstPairs(const v1::Report& report, const std::string& rail, std::string& out) {
  constexpr size_t kWorstPairs = 20;
  std::vector<const v1::PairHealth*> pairs;
  for (const auto& p : report.health().pairs()) {
    if (p.rail() == rail && (p.has_relative_bw() || p.status() != v1::HEALTH_OK))
      pairs.push_back(&p);
  }
  auto flagged = [](const v1::PairHealth* p) { return p->status() != v1::HEALTH_OK; };
  const size_t shown = std::min(kWorstPairs, pairs.size());
  std::partial_sort(pairs.begin(), pairs.begin() + shown, pairs.end(),
                    [&](const v1::PairHealth* a, const v1::PairHealth* b) {
                      if (flagged(a) != flagged(b)) return flagged(a);
                      return a->relative_bw() < b->relative_bw();
                    });
  absl::StrAppendFormat(&out,
                        "\nWORST PAIRS%s (%d of %d measured; node maps are drawn up to 40 nodes "
                        "here, in --format html beyond)\n",
                        rail.empty() ? "" : " " + rail, shown, report.health().pairs_size());
  if (shown == 0) return;
  absl::StrAppendFormat(&out, "%-24s %-24s %9s %9s %9s %8s\n", "node", "peer", "Gb/s", "back",
                        "of typ.", "status");
  auto figure = [](bool has, double x) {
    return has ? absl::StrFormat("%.2f", x) : std::string("-");
  };
  for (size_t i = 0; i < shown; ++i) {
    const v1::PairHealth& p = *pairs[i];
    absl::StrAppendFormat(
        &out, "%-24s %-24s %9s %9s %9s %8s\n", p.node(), p.peer(),
        figure(p.has_bw_gbps(), p.bw_gbps()), figure(p.has_bw_reverse_gbps(), p.bw_reverse_gbps()),
        figure(p.has_relative_bw(), p.relative_bw()), internal::StatusName(p.status()));
  }
}

// The node x node heat map of the headline bandwidth (up to 40 nodes; HTML draws larger ones).
void AppendHeatMap(const v1::Report& report, const std::string& probe, const Paint& paint,
                   const std::string& rail, std::string& out) {
  const auto& nodes = report.health().nodes();
  if (nodes.empty() || report.health().pairs().empty()) return;
  constexpr int kMaxMapNodes = 40;
  if (nodes.size() > kMaxMapNodes) {
    AppendWorstPairs(report, rail, out);
    return;
  }
  const internal::PairIndex index = internal::IndexPairs(report, rail);
  size_t width = 6;
  for (const auto& n : nodes) width = std::max(width, n.node().size());
  absl::StrAppendFormat(
      &out, "\nHEAT MAP%s (%s Gb/s, row sends to column; * critical, ! warning, ? not measured)\n",
      rail.empty() ? "" : " " + rail, probe.empty() ? "bandwidth" : probe);
  out += std::string(width + 1, ' ');
  for (const auto& n : nodes)
    absl::StrAppendFormat(&out, " %*s", static_cast<int>(std::max<size_t>(8, n.node().size())),
                          n.node());
  out += "\n";
  for (const auto& row : nodes) {
    absl::StrAppendFormat(&out, "%-*s ", static_cast<int>(width), row.node());
    for (const auto& col : nodes) {
      const int w = static_cast<int>(std::max<size_t>(8, col.node().size()));
      const v1::PairHealth* p =
          row.node() == col.node() ? nullptr : internal::FindPair(index, row.node(), col.node());
      if (p == nullptr) {
        absl::StrAppendFormat(&out, " %*s", w, row.node() == col.node() ? "-" : "");
        continue;
      }
      const double bw = internal::DirectedBw(*p, row.node());
      std::string cell = std::isnan(bw) ? "?" : absl::StrFormat("%.2f", bw);
      absl::StrAppendFormat(&out, " %s%*s%s%s", paint(SeverityOf(p->status())), w - 1, cell,
                            MarkOf(p->status()), paint.reset());
    }
    out += "\n";
  }
}

// The group x group map (leaf x leaf) where the sweep had a topology: each cell the median
// bandwidth from the row's group to the column's, and how many of those pairs are bad.
void AppendGroupMap(const v1::Report& report, const std::string& probe, const Paint& paint,
                    const std::string& rail, std::string& out) {
  const auto m = internal::GroupMatrixOf(report, rail);
  if (!m) return;
  size_t width = 8;
  for (const auto& g : m->groups) width = std::max(width, g.size() + 1);
  const int w = static_cast<int>(std::max<size_t>(width, 14));
  absl::StrAppendFormat(
      &out,
      "\n%s MAP%s (%s Gb/s, median of the pairs from the row's %s to the column's; [bad pairs])\n",
      absl::AsciiStrToUpper(m->level), rail.empty() ? "" : " " + rail,
      probe.empty() ? "bandwidth" : probe, m->level);
  out += std::string(width, ' ');
  for (const auto& g : m->groups) absl::StrAppendFormat(&out, " %*s", w, g);
  out += "\n";
  for (size_t x = 0; x < m->groups.size(); ++x) {
    absl::StrAppendFormat(&out, "%-*s", static_cast<int>(width), m->groups[x]);
    for (size_t y = 0; y < m->groups.size(); ++y) {
      std::string cell =
          std::isnan(m->median_gbps[x][y]) ? "-" : absl::StrFormat("%.2f", m->median_gbps[x][y]);
      if (m->bad[x][y] > 0) absl::StrAppend(&cell, " [", m->bad[x][y], "]");
      const v1::Severity severity = m->bad[x][y] > 0 ? v1::SEVERITY_CRITICAL : v1::SEVERITY_OK;
      absl::StrAppendFormat(&out, " %s%*s%s", paint(severity), w, cell, paint.reset());
    }
    out += "\n";
  }
}

}  // namespace

std::string RenderText(const v1::Report& report, bool color) {
  const Paint paint{color};
  std::string out = SummaryLine(report, paint);
  const std::string probe = internal::HeadlineProbe(report);
  if (report.health().has_best_bw_gbps()) {
    absl::StrAppendFormat(&out, "%s: typical %.2f Gb/s (median over nodes), best %.2f Gb/s\n",
                          probe, report.health().median_bw_gbps(), report.health().best_bw_gbps());
  }
  const auto& sum = report.summary();
  if (sum.retest_rounds() > 0 || sum.retests_skipped() > 0) {
    absl::StrAppendFormat(&out, "re-tests: %d pairs in %d rounds", sum.retested_pairs(),
                          sum.retest_rounds());
    if (sum.retests_skipped() > 0) {
      absl::StrAppendFormat(&out, "; %d flagged pairs not measured again (budget %.1fs spent)",
                            sum.retests_skipped(), internal::Seconds(sum.retest_budget()));
    }
    out += "\n";
  }
  if (report.findings_size() > 0) {
    out += "\nFINDINGS\n";
    for (const auto& f : report.findings()) {
      absl::StrAppendFormat(&out, "%s%-8s%s %-20s %s  [%s]\n", paint(f.severity()),
                            SeverityName(f.severity()), paint.reset(), f.kind(), f.detail(),
                            ActionName(f.action()));
    }
  }
  const auto& drain = report.summary().drain();
  if (drain.size() > 0) absl::StrAppend(&out, "\nDRAIN: ", absl::StrJoin(drain, " "), "\n");
  const auto& given_back = report.summary().given_back();
  if (given_back.size() > 0)
    absl::StrAppend(&out, "\nGIVE BACK: ", absl::StrJoin(given_back, " "), "\n");
  AppendAudits(report, out);
  AppendCollectives(report, out);
  // With rails, a map per rail: NIC i of each node against NIC i of the others.
  for (const std::string& rail : internal::RailsOf(report)) {
    AppendGroupMap(report, probe, paint, rail, out);
    AppendHeatMap(report, probe, paint, rail, out);
  }
  return out;
}

}  // namespace fabricctl::report
