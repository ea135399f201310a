#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "report/builder.h"
#include "report/render.h"
#include "report/render_util.h"

namespace fabricctl::report {
namespace {

std::string PromEscape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

// A node's verdict as a number: 0 ok, 1 warning, 2 critical, 3 unknown.
int StatusValue(v1::HealthStatus s) {
  switch (s) {
    case v1::HEALTH_OK: return 0;
    case v1::HEALTH_WARNING: return 1;
    case v1::HEALTH_CRITICAL: return 2;
    default: return 3;
  }
}

}  // namespace

std::string RenderProm(const v1::Report& report) {
  std::string out;
  auto metric = [&](const std::string& name, const std::string& help) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n");
  };
  const std::string probe = internal::HeadlineProbe(report);
  metric("fabricctl_sweep_worst_severity", "Worst finding severity: 0 ok, 1 warning, 2 critical.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_worst_severity %d\n",
                        static_cast<int>(ExitCodeFor(report)));
  metric("fabricctl_sweep_id", "Id of the sweep these figures come from.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_id %d\n", report.sweep().sweep_id());
  metric("fabricctl_sweep_finished_timestamp_seconds", "When the sweep finished.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_finished_timestamp_seconds %d\n",
                        report.sweep().finished().seconds());
  metric("fabricctl_sweep_duration_seconds", "Wall time of the sweep.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_duration_seconds %.3f\n",
                        internal::Seconds(report.summary().elapsed()));
  metric("fabricctl_node_status", "Node verdict: 0 ok, 1 warning, 2 critical, 3 unknown.");
  for (const auto& n : report.health().nodes()) {
    absl::StrAppendFormat(&out, "fabricctl_node_status{node=\"%s\"} %d\n", PromEscape(n.node()),
                          StatusValue(n.status()));
  }
  // Base units, as Prometheus asks: bytes per second and seconds.
  metric("fabricctl_pair_bandwidth_bytes_per_second",
         "Average bandwidth of a pair at the largest message size.");
  for (const auto& p : report.health().pairs()) {
    if (!p.has_bw_gbps()) continue;
    absl::StrAppendFormat(&out,
                          "fabricctl_pair_bandwidth_bytes_per_second{node=\"%s\",peer=\"%s\",probe=\"%s\"} %.6g\n",
                          PromEscape(p.node()), PromEscape(p.peer()), probe, p.bw_gbps() * 1e9 / 8);
    if (!p.has_bw_reverse_gbps()) continue;
    absl::StrAppendFormat(&out,
                          "fabricctl_pair_bandwidth_bytes_per_second{node=\"%s\",peer=\"%s\",probe=\"%s\"} %.6g\n",
                          PromEscape(p.peer()), PromEscape(p.node()), probe, p.bw_reverse_gbps() * 1e9 / 8);
  }
  metric("fabricctl_pair_latency_seconds",
         "Typical one-way latency of a pair at the smallest message size.");
  for (const auto& p : report.health().pairs()) {
    if (!p.has_lat_us()) continue;
    absl::StrAppendFormat(&out, "fabricctl_pair_latency_seconds{node=\"%s\",peer=\"%s\"} %.6g\n",
                          PromEscape(p.node()), PromEscape(p.peer()), p.lat_us() * 1e-6);
  }
  metric("fabricctl_findings", "Findings of the sweep by kind and severity.");
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const auto& f : report.findings()) ++counts[{f.kind(), internal::SeverityLabel(f.severity())}];
  for (const auto& [k, count] : counts) {
    absl::StrAppendFormat(&out, "fabricctl_findings{kind=\"%s\",severity=\"%s\"} %d\n", k.first,
                          k.second, count);
  }
  return out;
}

}  // namespace fabricctl::report
