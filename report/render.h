#ifndef FABRICCTL_REPORT_RENDER_H_
#define FABRICCTL_REPORT_RENDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/report.pb.h"

namespace fabricctl::report {

// The output formats of a Report (docs/reports.md). Each renders the whole report
// into one string; none reads anything but the report.

// For a terminal: summary line, findings, node x node heat map of headline bandwidth.
// `color` adds ANSI colours (on when stdout is a terminal).
std::string RenderText(const v1::Report& report, bool color);
// The Report message through protobuf's JSON printer (proto field names), schema
// "fabricctl.report/v1".
std::string RenderJson(const v1::Report& report);
// JUnit XML: one testsuite per family (each probe of the sweep, the nodes), one testcase per
// pair or node; findings are failures (critical) or failures of type warning.
std::string RenderJunit(const v1::Report& report);
// One self-contained HTML file: SVG heat map coloured by status, node table, findings.
std::string RenderHtml(const v1::Report& report);
// Prometheus text exposition, valid for node_exporter's textfile collector. Without
// `per_node`, the node and pair series are left out (the controller's /metrics writes their
// last values across sweeps itself). Per-pair series are the unbounded kind Prometheus warns
// of: they are written for sweeps of up to kMaxPromPairNodes nodes, beyond only with
// `all_pairs` (format "prom-pairs"); the leaf x leaf series stand in for them.
inline constexpr int kMaxPromPairNodes = 64;
std::string RenderProm(const v1::Report& report, bool per_node = true, bool all_pairs = false);

// The Prometheus figures of a report's pairs, in base units: each direction's bandwidth at the
// largest size (bytes/s) under the sweep's headline bandwidth probe, and the typical latency
// (seconds) under the latency probe that measured it.
struct PromPairSample {
  std::string node, peer, probe;
  bool latency = false;
  double value = 0;
  std::string rail;  // "" without rails: then the series has no rail label
};
// The labels of a pair series: node, peer, probe and, on a rail, rail.
std::string PromPairLabels(const std::string& node, const std::string& peer,
                           const std::string& probe, const std::string& rail);
std::vector<PromPairSample> PromPairSamples(const v1::Report& report);
// A node's verdict as a number: 0 ok, 1 warning, 2 critical, 3 unknown.
int PromStatusValue(v1::HealthStatus status);
// A label value with \, " and newlines escaped.
std::string PromEscape(const std::string& text);

// The nodes to drain, for scripts (a Slurm prolog, a health check): one line per node, the
// node's name, a tab, and the kinds of its findings that ask for a drain, comma-separated.
// Empty when no node is to be drained.
std::string RenderDrain(const v1::Report& report);
// The nodes to give back (undrain.enabled: the report's given_back), for a site's own tooling:
// one node's name a line; empty when there is none.
std::string RenderResume(const v1::Report& report);

// Dispatches on "text", "json", "junit", "html", "prom", "prom-pairs", "drain" or "resume".
// The formats Render knows, in the order help texts list them.
const std::vector<std::string>& Formats();
// InvalidArgument naming the formats when `format` is none of them.
absl::Status CheckFormat(const std::string& format);

absl::StatusOr<std::string> Render(const v1::Report& report, const std::string& format, bool color);

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_RENDER_H_
