#include "cli/check.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/profiles.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "base/version.h"
#include "cli/output.h"
#include "probes/audit/audit.h"
#include "probes/client.h"
#include "probes/server.h"
#include "probes/table.h"
#include "probes/gpu/copy_audit.h"
#include "probes/gpu/cuda.h"
#include "probes/gpu/nccl.h"
#include "probes/gpu/nccl_log.h"
#include "report/builder.h"
#include "report/findings.h"
#include "report/render.h"

namespace fabricctl::cli {

absl::StatusOr<std::vector<v1::AuditResult>> AnalyseNcclLogs(const std::vector<std::string>& paths,
                                                             const probes::NcclExpectation& expect) {
  std::vector<v1::AuditResult> out;
  for (const std::string& path : paths) {
    auto text = ReadBoundedFile(path, "--nccl-log", probes::kMaxNcclLogBytes);
    if (!text.ok()) return text.status();
    probes::NcclLog log = probes::ParseNcclLog(*text);
    if (log.lines == 0) {
      // A file the user named that holds no NCCL line is the wrong file, not a pass.
      return absl::InvalidArgumentError(absl::StrCat(
          "--nccl-log: '", path, "' has no NCCL INFO line (",
          text->empty() ? "it is empty" : "is it the log of a job run with NCCL_DEBUG=INFO?", ")"));
    }
    v1::AuditResult r;
    r.set_audit(absl::StrCat("nccl_log ", path));
    r.set_outcome(v1::AUDIT_RAN);
    auto& seen = *r.mutable_observed();
    seen["nccl_version"] = log.version.empty() ? "?" : log.version;
    seen["host"] = log.host;
    seen["network"] = log.network.empty() ? "?" : log.network;
    seen["net_connections"] = absl::StrCat(log.net_channels, " (", log.gdr_channels, " GDRDMA, ",
                                           log.socket_channels, " socket)");
    for (const auto& f : probes::NcclLogFindings(log, path, expect)) *r.add_findings() = f;
    out.push_back(std::move(r));
  }
  return out;
}

// Loopback runs of pair probes on this node (server and client halves both here), as an
// audit-like result each: what they measured, or why they did not.
v1::AuditResult LoopbackProbe(const probes::Probe& probe) {
  v1::AuditResult r;
  r.set_audit(absl::StrCat("loopback ", probe.name()));
  probes::ProbeParams params;
  params.kind = probe.kind();
  params.sizes_bytes = {probe.measures_bandwidth() ? 65536u : 2u};
  // Bandwidth by time (a slow device reports its low figure on time); latency by count.
  if (probe.measures_bandwidth()) {
    params.duration = absl::Seconds(1);
  } else {
    params.iterations = 1000;
  }
  params.timeout = absl::Seconds(60);
  auto server = probes::ProbeServer::Listen("127.0.0.1", 0, probes::ServeContext{});
  if (!server.ok()) {
    r.set_outcome(v1::AUDIT_FAILED);
    r.set_reason(std::string(server.status().message()));
    return r;
  }
  std::thread serving([&] { (void)(*server)->Serve(/*one_off=*/true, absl::Now() + absl::Seconds(90)); });
  probes::ProbeRun run = probes::RunProbeClient(params, {"127.0.0.1", (*server)->port()},
                                                probes::ProbeLimits(), /*end_session=*/true);
  (*server)->Stop();
  serving.join();
  switch (run.outcome) {
    case probes::Outcome::kOk:
      r.set_outcome(v1::AUDIT_RAN);
      break;
    case probes::Outcome::kSkipped:
      r.set_outcome(v1::AUDIT_SKIPPED);
      r.set_reason(run.reason);
      return r;
    default:
      r.set_outcome(v1::AUDIT_FAILED);
      r.set_reason(run.reason);
      return r;
  }
  for (const auto& p : run.bw) {
    (*r.mutable_observed())[absl::StrCat(run.device, " ", p.size_bytes, " B")] =
        absl::StrFormat("%.2f Gb/s average", p.bw_avg_gbps);
  }
  for (const auto& p : run.lat) {
    (*r.mutable_observed())[absl::StrCat(run.device, " ", p.size_bytes, " B")] =
        absl::StrFormat("%.2f us typical", p.t_typical_us);
  }
  return r;
}

// gpu_copy on this node's GPUs, as an audit-like result (the form a sweep's nodes give too).
v1::AuditResult GpuCopy() {
  probes::ProbeParams params;
  params.kind = v1::GPU_COPY;
  params.sizes_bytes = {64u << 20};
  params.iterations = 20;
  return probes::GpuCopyAudit(probes::ToResult(probes::RunGpuCopy(params, absl::Seconds(120)), params));
}

// allreduce on this node: NCCL over every GPU (one rank each, in child processes), with the
// verdict of the ranks' logs, as an audit-like result.
v1::AuditResult LocalAllreduce(const std::string& node, const probes::NcclExpectation& expect) {
  v1::AuditResult r;
  r.set_audit("allreduce");
  auto skip = [&r](const absl::Status& s) {
    r.set_outcome(absl::IsNotFound(s) ? v1::AUDIT_SKIPPED : v1::AUDIT_FAILED);
    r.set_reason(std::string(s.message()));
    return r;
  };
  auto gpus = probes::ListGpus(absl::Seconds(30));
  if (!gpus.ok()) return skip(gpus.status());
  auto rendezvous = probes::NcclRendezvous::Create(absl::Seconds(30));
  if (!rendezvous.ok()) return skip(rendezvous.status());
  probes::ProbeParams params;
  params.kind = v1::ALLREDUCE;
  params.allreduce_backend = "nccl";
  params.sizes_bytes = {1u << 20, 64u << 20};
  params.iterations = 20;
  params.warmup_iterations = 5;
  params.timeout = absl::Seconds(120);
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/fabricctl-check-nccl-", ::getpid());
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return skip(absl::FailedPreconditionError(absl::StrCat(dir, ": ", error.message())));
  const uint32_t n = static_cast<uint32_t>(gpus->size());
  probes::NcclNodeRun ranks = probes::RunNcclNode(params, rendezvous->unique_id(), 0, n, n, dir + "/nccl");
  const probes::ProbeRun& run = ranks.run;
  if (run.outcome != probes::Outcome::kOk) {
    r.set_outcome(v1::AUDIT_FAILED);
    r.set_reason(run.reason);
    return r;
  }
  r.set_outcome(v1::AUDIT_RAN);
  (*r.mutable_observed())["device"] = run.device;
  (*r.mutable_observed())["logs"] = dir;
  for (const auto& p : run.collective) {
    (*r.mutable_observed())[absl::StrCat(p.size_bytes, " B")] =
        absl::StrFormat("time %.1f us, algbw %.2f GB/s, busbw %.2f GB/s, %d wrong", p.time_us,
                        p.algbw_gbytes, p.busbw_gbytes, p.wrong);
    if (p.wrong > 0) {
      *r.add_findings() = report::Make(
          report::kind::kProbeFailed, node,
          absl::StrCat("NCCL all-reduce data check: ", p.wrong, " wrong elements at ",
                       p.size_bytes, " bytes"),
          report::Level::kAlternate);
    }
  }
  probes::NcclVerdict verdict = probes::JudgeNcclLogs(node, ranks.logs, expect);
  if (!verdict.transport.net().empty()) (*r.mutable_observed())["network"] = verdict.transport.net();
  for (auto& f : verdict.findings) *r.add_findings() = std::move(f);
  return r;
}

int RunCheckCommand(const CheckOptions& options, std::ostream& err) {
  auto fail = [&](const absl::Status& s) {
    err << "fabricctl check: " << s.message() << "\n";
    return kExitUnknown;
  };
  if (options.format == "html") {
    return fail(absl::InvalidArgumentError("--format: html is for sweeps; use text, json, junit or prom"));
  }
  if (auto s = report::CheckFormat(options.format); !s.ok()) return fail(s);
  if (auto s = CheckOutput(options.output); !s.ok()) return fail(s);
  probes::SysfsRoot root(options.sysfs_root);
  if (options.nccl_logs.empty() && !root.Exists("/sys")) {
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
  // The node's profile (by its name and the configuration's labels for it), else expect.
  const v1::Expectations& expect = ExpectationsFor(options.config, node, {});
  ctx.expect = expect;
  ctx.environment = options.environment;
  ctx.node = node;
  ctx.max_counter_increase = options.config.thresholds().max_counter_increase();
  if (options.sysfs_root == "/" || options.sysfs_root.empty()) {
    // The dma-buf side of GPUDirect is the CUDA driver's to say.
    auto gpus = probes::ListGpus(absl::Seconds(20));
    ctx.driver_gpus = gpus.ok() ? *gpus : std::vector<v1::Gpu>{};
    if (!gpus.ok()) ctx.driver_gpus_reason = std::string(gpus.status().message());
  }
  if (!options.window.empty()) {
    auto window = ParsePositiveDuration(options.window, "--window");
    if (!window.ok()) return fail(window.status());
    ctx.counter_window = *window;
  }
  // --probes names audits and pair probes; probes run on loopback.
  std::vector<std::string> names;
  std::vector<const probes::Probe*> loopback;
  bool gpu_copy = false, allreduce = false;
  for (absl::string_view name : absl::StrSplit(options.audits, ',', absl::SkipWhitespace())) {
    if (name == "gpu_copy") {
      gpu_copy = true;
    } else if (name == "allreduce") {
      allreduce = true;
    } else if (const probes::Probe* probe = probes::FindProbe(std::string(name))) {
      loopback.push_back(probe);
    } else {
      names.emplace_back(name);
    }
  }
  const bool live = options.sysfs_root == "/" || options.sysfs_root.empty();
  if ((!loopback.empty() || gpu_copy || allreduce) && !live) {
    return fail(absl::InvalidArgumentError("--probes: loopback probes run on the live system, not under --sysfs-root"));
  }
  const auto started = std::chrono::steady_clock::now();
  // A single node's NCCL choice of sockets is critical only where RDMA is expected.
  const probes::NcclExpectation nccl_expect{probes::RdmaExpectedBecause(root, expect)};
  absl::StatusOr<std::vector<v1::AuditResult>> results =
      options.nccl_logs.empty()
          ? (names.empty() && (!loopback.empty() || gpu_copy || allreduce) ? std::vector<v1::AuditResult>{}
                                                : probes::RunAudits(ctx, names))
          : AnalyseNcclLogs(options.nccl_logs, nccl_expect);
  if (!results.ok()) return fail(results.status());
  // Where an RDMA device is, the default check also measures it on loopback.
  if (options.nccl_logs.empty() && options.audits.empty() && live &&
      root.Exists("/sys/class/infiniband")) {
    loopback.push_back(probes::FindProbe(v1::RDMA_WRITE_BW));
  }
  for (const probes::Probe* probe : loopback) results->push_back(LoopbackProbe(*probe));
  if (gpu_copy) results->push_back(GpuCopy());
  if (allreduce) results->push_back(LocalAllreduce(node, nccl_expect));

  report::ReportBuilder builder("check", absl::StrCat("fabricctl ", kVersion));
  builder.SetConfig(options.config);
  v1::NodeHealth* health = builder.AddNode(node, v1::HEALTH_OK);
  builder.AddAudits(health, *std::move(results));
  const v1::Report report = builder.Finish(
      absl::Now(), absl::FromChrono(std::chrono::steady_clock::now() - started), node);

  const bool color = options.format == "text" && (options.output.empty() || options.output == "-") &&
                     ::isatty(1) == 1;
  auto rendered = report::Render(report, options.format, color);
  if (!rendered.ok()) return fail(rendered.status());
  if (auto s = WriteOutput(options.output, *rendered); !s.ok()) return fail(s);
  const int code = report::ExitCodeFor(report);
  if (code != kExitOk) {
    // "node: kind, kind" per node the findings name (an NCCL log names its own host).
    std::map<std::string, std::vector<std::string>> kinds;
    for (const auto& f : report.findings()) kinds[f.node().empty() ? node : f.node()].push_back(f.kind());
    std::vector<std::string> parts;
    for (const auto& [who, list] : kinds) parts.push_back(who + ": " + absl::StrJoin(list, ", "));
    err << (code == kExitCritical ? "CRITICAL" : "WARNING") << ": " << absl::StrJoin(parts, "; ")
        << "\n";
  }
  return code;
}

}  // namespace fabricctl::cli
