#ifndef FABRICCTL_REPORT_RENDER_H_
#define FABRICCTL_REPORT_RENDER_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/report.pb.h"

namespace fabricctl::report {

// The output formats of a Report (SPEC.md "Output formats"). Each renders the whole report
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
// Prometheus text exposition, valid for node_exporter's textfile collector.
std::string RenderProm(const v1::Report& report);

// Dispatches on "text", "json", "junit", "html" or "prom".
absl::StatusOr<std::string> Render(const v1::Report& report, const std::string& format,
                                   bool color);

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_RENDER_H_
