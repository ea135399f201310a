#include <map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "report/builder.h"
#include "report/findings.h"
#include "report/group_matrix.h"
#include "report/render.h"
#include "report/render_util.h"

namespace fabricctl::report {

std::string PromEscape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

int PromStatusValue(v1::HealthStatus s) {
  switch (s) {
    case v1::HEALTH_OK:
      return 0;
    case v1::HEALTH_WARNING:
      return 1;
    case v1::HEALTH_CRITICAL:
      return 2;
    default:
      return 3;
  }
}

namespace {

// The latency probe behind a pair's latency figure: the first of its results with latency
// points, else the sweep's first latency probe.
std::string LatencyProbe(const v1::Report& report, const v1::PairHealth& pair) {
  for (const auto& r : pair.results()) {
    if (r.lat_size() > 0) return absl::AsciiStrToLower(v1::ProbeKind_Name(r.kind()));
  }
  for (int kind : report.sweep().probes()) {
    const std::string name = v1::ProbeKind_Name(static_cast<v1::ProbeKind>(kind));
    if (absl::EndsWith(name, "_LAT")) return absl::AsciiStrToLower(name);
  }
  return "";
}

}  // namespace

std::string PromPairLabels(const std::string& node, const std::string& peer,
                           const std::string& probe, const std::string& rail) {
  return absl::StrFormat("node=\"%s\",peer=\"%s\",probe=\"%s\"%s", PromEscape(node),
                         PromEscape(peer), PromEscape(probe),
                         rail.empty() ? "" : ",rail=\"" + PromEscape(rail) + "\"");
}

std::vector<PromPairSample> PromPairSamples(const v1::Report& report) {
  std::vector<PromPairSample> out;
  const std::string probe = internal::HeadlineProbe(report);
  for (const auto& p : report.health().pairs()) {
    if (p.has_bw_gbps())
      out.push_back({p.node(), p.peer(), probe, false, p.bw_gbps() * 1e9 / 8, p.rail()});
    if (p.has_bw_gbps() && p.has_bw_reverse_gbps()) {
      out.push_back({p.peer(), p.node(), probe, false, p.bw_reverse_gbps() * 1e9 / 8, p.rail()});
    }
    if (p.has_lat_us()) {
      out.push_back(
          {p.node(), p.peer(), LatencyProbe(report, p), true, p.lat_us() * 1e-6, p.rail()});
    }
  }
  return out;
}

// With a topology, the median bandwidth and the bad pairs between every two groups (leaves),
// per rail with rails (a rail label then).
template <typename Metric>
void AppendGroupSeries(const v1::Report& report, const Metric& metric, std::string& out) {
  std::vector<std::pair<std::string, internal::GroupMatrix>> matrices;
  for (const std::string& rail : internal::RailsOf(report)) {
    if (auto m = internal::GroupMatrixOf(report, rail)) matrices.emplace_back(rail, *std::move(m));
  }
  if (matrices.empty()) return;
  auto labels = [](const internal::GroupMatrix& m, const std::string& rail, size_t x, size_t y) {
    return absl::StrFormat("level=\"%s\",group=\"%s\",peer_group=\"%s\"%s", PromEscape(m.level),
                           PromEscape(m.groups[x]), PromEscape(m.groups[y]),
                           rail.empty() ? "" : ",rail=\"" + PromEscape(rail) + "\"");
  };
  metric("fabricctl_group_pair_bandwidth_bytes_per_second",
         "Median bandwidth of the pairs from one topology group (a leaf) to another.");
  for (const auto& [rail, m] : matrices) {
    for (size_t x = 0; x < m.groups.size(); ++x) {
      for (size_t y = 0; y < m.groups.size(); ++y) {
        if (std::isnan(m.median_gbps[x][y])) continue;
        absl::StrAppendFormat(&out, "fabricctl_group_pair_bandwidth_bytes_per_second{%s} %.6g\n",
                              labels(m, rail, x, y), m.median_gbps[x][y] * 1e9 / 8);
      }
    }
  }
  metric("fabricctl_group_pair_bad_pairs",
         "Pairs between two topology groups judged warning or critical.");
  for (const auto& [rail, m] : matrices) {
    for (size_t x = 0; x < m.groups.size(); ++x) {
      for (size_t y = 0; y < m.groups.size(); ++y) {
        if (m.pairs[x][y] == 0) continue;
        absl::StrAppendFormat(&out, "fabricctl_group_pair_bad_pairs{%s} %d\n",
                              labels(m, rail, x, y), m.bad[x][y]);
      }
    }
  }
}

// Each pair's bandwidth and latency, in base units as Prometheus asks (bytes per second,
// seconds), for sweeps of up to kMaxPromPairNodes nodes unless `all_pairs`.
template <typename Metric>
void AppendPairSeries(const v1::Report& report, bool all_pairs, const Metric& metric,
                      std::string& out) {
  if (!all_pairs && report.health().nodes_size() > kMaxPromPairNodes) {
    absl::StrAppendFormat(
        &out,
        "# fabricctl: per-pair series left out for %d nodes (--format prom-pairs writes them)\n",
        report.health().nodes_size());
    return;
  }
  const std::vector<PromPairSample> samples = PromPairSamples(report);
  for (const bool latency : {false, true}) {
    const char* name =
        latency ? "fabricctl_pair_latency_seconds" : "fabricctl_pair_bandwidth_bytes_per_second";
    metric(name, latency ? "Typical one-way latency of a pair at the smallest message size."
                         : "Average bandwidth of a pair at the largest message size.");
    for (const auto& x : samples) {
      if (x.latency == latency) {
        absl::StrAppendFormat(&out, "%s{%s} %.6g\n", name,
                              PromPairLabels(x.node, x.peer, x.probe, x.rail), x.value);
      }
    }
  }
}

namespace {

// A check's link watch (the agent's, between checks): each watched link's falls in the watch's
// window, 0 for a quiet link so that the series stays; each error counter that rose, by how
// much; the blocks FEC corrected apart, since they are not errors. Bounded by the node's links
// and the watch's counters.
template <typename Metric>
void AppendLinkWatchSeries(const v1::Report& report, const Metric& metric, std::string& out) {
  for (const auto& node : report.health().nodes()) {
    for (const auto& audit : node.audits()) {
      if (audit.audit() != "link_watch" || audit.outcome() != v1::AUDIT_RAN) continue;
      const auto& seen = audit.observed();
      auto links = seen.find("links");
      if (links == seen.end()) continue;
      metric("fabricctl_check_link_falls",
             "Falls (carrier lost, port down) of each link in the agent's watch window.");
      for (absl::string_view link : absl::StrSplit(links->second, ' ', absl::SkipEmpty())) {
        auto falls = seen.find(absl::StrCat(link, " flaps"));
        uint64_t count = 0;
        if (falls != seen.end() && !absl::SimpleAtoi(falls->second, &count)) count = 0;
        absl::StrAppendFormat(&out, "fabricctl_check_link_falls{node=\"%s\",link=\"%s\"} %d\n",
                              PromEscape(node.node()), PromEscape(std::string(link)), count);
      }
      // "<link> <counter>" -> "+<rise>"; the other figures are skipped.
      struct Rise {
        std::string link, counter;
        uint64_t rise;
      };
      std::vector<Rise> rises;
      for (const auto& [key, value] : seen) {
        const size_t space = key.find(' ');
        uint64_t rise = 0;
        if (space == std::string::npos || value.empty() || value[0] != '+' ||
            !absl::SimpleAtoi(value.substr(1), &rise)) {
          continue;
        }
        rises.push_back({key.substr(0, space), key.substr(space + 1), rise});
      }
      metric("fabricctl_check_link_errors",
             "Rise of each link error counter that rose in the agent's watch window.");
      for (const Rise& r : rises) {
        if (r.counter == "fec_corrected") continue;
        absl::StrAppendFormat(
            &out, "fabricctl_check_link_errors{node=\"%s\",link=\"%s\",counter=\"%s\"} %d\n",
            PromEscape(node.node()), PromEscape(r.link), PromEscape(r.counter), r.rise);
      }
      bool corrected = false;
      for (const Rise& r : rises) corrected = corrected || r.counter == "fec_corrected";
      if (!corrected) continue;
      metric("fabricctl_check_link_fec_corrected_blocks",
             "Blocks FEC corrected on each link in the agent's watch window (not errors).");
      for (const Rise& r : rises) {
        if (r.counter != "fec_corrected") continue;
        absl::StrAppendFormat(
            &out, "fabricctl_check_link_fec_corrected_blocks{node=\"%s\",link=\"%s\"} %d\n",
            PromEscape(node.node()), PromEscape(r.link), r.rise);
      }
    }
  }
}

}  // namespace

std::string RenderProm(const v1::Report& report, bool per_node, bool all_pairs) {
  std::string out;
  auto metric = [&](const std::string& name, const std::string& help) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n");
  };
  // A node's `check` and the controller's sweeps are different series: both can sit in one
  // node_exporter textfile directory without colliding.
  const bool check = report.source() == "check";
  const std::string prefix = check ? "fabricctl_check_" : "fabricctl_sweep_";
  const std::string what = check ? "check" : "sweep";
  // `source` keeps a check's and a sweep's apart in one textfile directory.
  metric("fabricctl_build_info", "The fabricctl version that wrote these series (always 1).");
  absl::StrAppendFormat(&out, "fabricctl_build_info{source=\"%s\",version=\"%s\"} 1\n", what,
                        PromEscape(report.generator().substr(report.generator().rfind(' ') + 1)));
  metric(prefix + "worst_severity", "Worst finding severity: 0 ok, 1 warning, 2 critical.");
  absl::StrAppendFormat(&out, "%sworst_severity %d\n", prefix,
                        static_cast<int>(ExitCodeFor(report)));
  if (!check && report.sweep().sweep_id() != 0) {
    metric("fabricctl_sweep_id", "Id of the sweep these figures come from.");
    absl::StrAppendFormat(&out, "fabricctl_sweep_id %d\n", report.sweep().sweep_id());
  }
  // When it was measured (never a zero timestamp): the sweep's end, or the check's report.
  const int64_t when = check ? report.generated().seconds() : report.sweep().finished().seconds();
  const std::string timestamp =
      check ? "fabricctl_check_timestamp_seconds" : "fabricctl_sweep_finished_timestamp_seconds";
  if (when > 0) {
    metric(timestamp, absl::StrCat("When the ", what, " finished (Unix time)."));
    absl::StrAppendFormat(&out, "%s %d\n", timestamp, when);
  }
  metric(prefix + "duration_seconds", absl::StrCat("Wall time of the ", what, "."));
  absl::StrAppendFormat(&out, "%sduration_seconds %.3f\n", prefix,
                        internal::Seconds(report.summary().elapsed()));
  if (!check) {
    metric("fabricctl_sweep_retests_skipped",
           "Flagged pairs left unmeasured once the re-test budget was spent.");
    absl::StrAppendFormat(&out, "fabricctl_sweep_retests_skipped %d\n",
                          report.summary().retests_skipped());
  }
  const std::string status = check ? "fabricctl_check_node_status" : "fabricctl_node_status";
  if (per_node || check) {
    metric(status, "Node verdict: 0 ok, 1 warning, 2 critical, 3 unknown.");
    for (const auto& n : report.health().nodes()) {
      absl::StrAppendFormat(&out, "%s{node=\"%s\"} %d\n", status, PromEscape(n.node()),
                            PromStatusValue(n.status()));
    }
  }
  if (per_node && !check) AppendPairSeries(report, all_pairs, metric, out);
  if (!check) AppendGroupSeries(report, metric, out);
  if (check) AppendLinkWatchSeries(report, metric, out);
  // Every kind at each of its levels, 0 when absent: a series that was 1 returns to 0 instead
  // of vanishing, so alerts resolve and graphs show the fix.
  const std::string findings = check ? "fabricctl_check_findings" : "fabricctl_findings";
  metric(findings, absl::StrCat("Findings of the ", what, " by kind and severity."));
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const FindingKind& k : Catalogue()) {
    counts[{k.name, internal::SeverityLabel(k.severity)}] += 0;
    if (k.alternate_severity != v1::SEVERITY_UNSPECIFIED) {
      counts[{k.name, internal::SeverityLabel(k.alternate_severity)}] += 0;
    }
  }
  // Only the catalogue's kinds are series: a kind that is not one names no series.
  for (const auto& f : report.findings()) {
    if (FindKind(f.kind()) != nullptr) ++counts[{f.kind(), internal::SeverityLabel(f.severity())}];
  }
  for (const auto& [k, count] : counts) {
    absl::StrAppendFormat(&out, "%s{kind=\"%s\",severity=\"%s\"} %d\n", findings,
                          PromEscape(k.first), k.second, count);
  }
  return out;
}

}  // namespace fabricctl::report
