#include "cli/check.h"

#include <unistd.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "base/version.h"
#include "cli/render.h"
#include "google/protobuf/util/time_util.h"
#include "probes/audit/audit.h"

namespace fabricctl::cli {

int RunCheckCommand(const CheckOptions& options, std::ostream& err) {
  auto fail = [&](const absl::Status& s) {
    err << "fabricctl check: " << s.message() << "\n";
    return kExitUnknown;
  };
  if (options.format == "html") {
    return fail(absl::InvalidArgumentError("--format: html is for sweeps; use text, json, junit or prom"));
  }
  if (auto probe = Render(v1::Report(), options.format, false); !probe.ok()) return fail(probe.status());
  probes::SysfsRoot root(options.sysfs_root);
  if (!root.Exists("/sys")) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--sysfs-root: '", options.sysfs_root, "' has no sys/ directory")));
  }
  std::string node = options.node;
  if (node.empty()) {
    char name[256] = {};
    node = ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
  }
  probes::AuditContext ctx;
  ctx.root = &root;
  ctx.expect = options.config.expect();
  ctx.environment = options.environment;
  ctx.node = node;
  ctx.max_counter_increase = options.config.thresholds().max_counter_increase();
  if (!options.window.empty()) {
    auto window = ParsePositiveDuration(options.window, "--window");
    if (!window.ok()) return fail(window.status());
    ctx.counter_window = *window;
  }
  std::vector<std::string> names = absl::StrSplit(options.audits, ',', absl::SkipWhitespace());
  const auto started = std::chrono::steady_clock::now();
  auto results = probes::RunAudits(ctx, names);
  if (!results.ok()) return fail(results.status());

  v1::Report report;
  report.set_schema("fabricctl.report/v1");
  report.set_generator(absl::StrCat("fabricctl ", kVersion));
  *report.mutable_generated() = google::protobuf::util::TimeUtil::GetCurrentTime();
  report.set_source("check");
  *report.mutable_expect() = options.config.expect();
  *report.mutable_thresholds() = options.config.thresholds();
  v1::NodeHealth* health = report.mutable_health()->add_nodes();
  health->set_node(node);
  v1::Severity worst = v1::SEVERITY_OK;
  for (auto& result : *results) {
    for (const auto& f : result.findings()) {
      *report.add_findings() = f;
      worst = std::max(worst, f.severity());
    }
    *health->add_audits() = std::move(result);
  }
  health->set_status(worst == v1::SEVERITY_CRITICAL  ? v1::HEALTH_CRITICAL
                     : worst == v1::SEVERITY_WARNING ? v1::HEALTH_WARNING
                                                     : v1::HEALTH_OK);
  v1::Summary* summary = report.mutable_summary();
  summary->set_nodes(1);
  summary->set_nodes_ok(worst == v1::SEVERITY_OK);
  summary->set_nodes_warning(worst == v1::SEVERITY_WARNING);
  summary->set_nodes_critical(worst == v1::SEVERITY_CRITICAL);
  summary->set_worst_severity(worst);
  for (const auto& f : report.findings()) {
    if (f.action() == v1::ACTION_DRAIN) {
      summary->add_drain(node);
      break;
    }
  }
  *summary->mutable_elapsed() = google::protobuf::util::TimeUtil::NanosecondsToDuration(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started)
          .count());

  const bool color = options.format == "text" && (options.output.empty() || options.output == "-") &&
                     ::isatty(1) == 1;
  auto rendered = Render(report, options.format, color);
  if (!rendered.ok()) return fail(rendered.status());
  if (auto s = WriteOutput(options.output, *rendered); !s.ok()) return fail(s);
  const int code = ExitCodeFor(report);
  if (code != kExitOk) {
    std::vector<std::string> kinds;
    for (const auto& f : report.findings()) kinds.push_back(f.kind());
    err << (code == kExitCritical ? "CRITICAL" : "WARNING") << ": " << node << ": "
        << absl::StrJoin(kinds, ", ") << "\n";
  }
  return code;
}

}  // namespace fabricctl::cli
