#include "cli/check.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/exit_code.h"
#include "base/files.h"
#include "base/process.h"
#include "base/profiles.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "cli/output.h"
#include "probes/audit/audit.h"
#include "probes/client.h"
#include "probes/gpu/copy_audit.h"
#include "probes/gpu/cuda.h"
#include "probes/gpu/nccl.h"
#include "probes/gpu/nccl_log.h"
#include "probes/server.h"
#include "probes/table.h"
#include "report/builder.h"
#include "report/render.h"

namespace fabricctl::cli {

absl::StatusOr<std::vector<v1::AuditResult>> AnalyseNcclLogs(
    const std::vector<std::string>& paths, const probes::NcclExpectation& expect) {
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
  std::thread serving(
      [&] { (void)(*server)->Serve(/*one_off=*/true, absl::Now() + absl::Seconds(90)); });
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
  return probes::GpuCopyAudit(
      probes::ToResult(probes::RunGpuCopy(params, absl::Seconds(120)), params));
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
  const std::string dir =
      absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/fabricctl-check-nccl-", ::getpid());
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return skip(absl::FailedPreconditionError(absl::StrCat(dir, ": ", error.message())));
  const uint32_t n = static_cast<uint32_t>(gpus->size());
  probes::NcclNodeRun ranks =
      probes::RunNcclNode(params, rendezvous->unique_id(), 0, n, n, dir + "/nccl");
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
  }
  for (auto& f : probes::JudgeNcclData(node, run)) *r.add_findings() = std::move(f);
  probes::NcclVerdict verdict = probes::JudgeNcclLogs(node, ranks.logs, expect);
  if (!verdict.transport.net().empty())
    (*r.mutable_observed())["network"] = verdict.transport.net();
  for (auto& f : verdict.findings) *r.add_findings() = std::move(f);
  return r;
}

namespace {

// What --probes names: audits, pair probes to run on loopback, gpu_copy and allreduce.
struct CheckPlan {
  std::vector<std::string> audits;
  std::vector<const probes::Probe*> loopback;
  bool gpu_copy = false, allreduce = false;
  // The node's known-good state, from the agent's link watch verdict (only when named).
  bool known_good = false;
  bool Measures() const { return !loopback.empty() || gpu_copy || allreduce; }
};

CheckPlan PlanOf(const std::string& list) {
  CheckPlan plan;
  for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    if (name == "gpu_copy") {
      plan.gpu_copy = true;
    } else if (name == "allreduce") {
      plan.allreduce = true;
    } else if (name == "known_good") {
      plan.known_good = true;
    } else if (const probes::Probe* probe = probes::FindProbe(std::string(name))) {
      plan.loopback.push_back(probe);
    } else {
      plan.audits.emplace_back(name);
    }
  }
  return plan;
}

// The audits' context for `node`: its expectations (its profile's, else the configuration's),
// the CUDA driver's GPUs on the live system, the counters' window.
absl::StatusOr<probes::AuditContext> ContextFor(const CheckOptions& options,
                                                const std::string& node,
                                                const probes::SysfsRoot& root) {
  probes::AuditContext ctx;
  ctx.root = &root;
  ctx.expect = ExpectationsFor(options.config, node, {});
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
    ASSIGN_OR_RETURN(ctx.counter_window, ParsePositiveDuration(options.window, "--window"));
  }
  // The agent's link watch: its file (below a fixture root, as the sysfs reads are).
  ctx.watch_file = options.watch_file;
  if (ctx.watch_file.empty()) {
    const bool live = options.sysfs_root == "/" || options.sysfs_root.empty();
    ctx.watch_file = (live ? "" : options.sysfs_root) + options.config.watch().file();
  }
  return ctx;
}

// Renders and writes the report; the exit code by its worst finding, with "node: kind, kind"
// per node the findings name on `err` (an NCCL log names its own host).
int Deliver(const v1::Report& report, const CheckOptions& options, const std::string& node,
            std::ostream& err) {
  const bool color = options.format == "text" &&
                     (options.output.empty() || options.output == "-") && ::isatty(1) == 1;
  auto rendered = report::Render(report, options.format, color);
  const absl::Status written =
      rendered.ok() ? WriteOutput(options.output, *rendered) : rendered.status();
  if (!written.ok()) {
    err << "fabricctl check: " << written.message() << "\n";
    return kExitUnknown;
  }
  const int code = report::ExitCodeFor(report);
  if (code != kExitOk) {
    std::map<std::string, std::vector<std::string>> kinds;
    for (const auto& f : report.findings())
      kinds[f.node().empty() ? node : f.node()].push_back(f.kind());
    std::vector<std::string> parts;
    for (const auto& [who, list] : kinds) parts.push_back(who + ": " + absl::StrJoin(list, ", "));
    err << (code == kExitCritical ? "CRITICAL" : "WARNING") << ": " << absl::StrJoin(parts, "; ")
        << "\n";
  }
  return code;
}

}  // namespace

int RunCheckCommand(const CheckOptions& options, std::ostream& err) {
  auto fail = [&](const absl::Status& s) {
    err << "fabricctl check: " << s.message() << "\n";
    return kExitUnknown;
  };
  if (options.format == "html") {
    return fail(
        absl::InvalidArgumentError("--format: html is for sweeps; use text, json, junit or prom"));
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
  auto ctx = ContextFor(options, node, root);
  if (!ctx.ok()) return fail(ctx.status());
  CheckPlan plan = PlanOf(options.audits);
  const bool live = options.sysfs_root == "/" || options.sysfs_root.empty();
  if (plan.Measures() && !live) {
    return fail(absl::InvalidArgumentError(
        "--probes: loopback probes run on the live system, not under --sysfs-root"));
  }
  const auto started = std::chrono::steady_clock::now();
  // A single node's NCCL choice of sockets is critical only where RDMA is expected.
  const probes::NcclExpectation nccl_expect{probes::RdmaExpectedBecause(root, ctx->expect)};
  absl::StatusOr<std::vector<v1::AuditResult>> results =
      !options.nccl_logs.empty() ? AnalyseNcclLogs(options.nccl_logs, nccl_expect)
      : plan.audits.empty() && (plan.Measures() || plan.known_good)
          ? std::vector<v1::AuditResult>{}
          : probes::RunAudits(*ctx, plan.audits);
  if (!results.ok()) return fail(results.status());
  // Where an RDMA device is, the default check also measures it on loopback.
  if (options.nccl_logs.empty() && options.audits.empty() && live &&
      root.Exists("/sys/class/infiniband")) {
    plan.loopback.push_back(probes::FindProbe(v1::RDMA_WRITE_BW));
  }
  for (const probes::Probe* probe : plan.loopback) results->push_back(LoopbackProbe(*probe));
  if (plan.gpu_copy) results->push_back(GpuCopy());
  if (plan.allreduce) results->push_back(LocalAllreduce(node, nccl_expect));
  if (plan.known_good) {
    auto watch = probes::RunAudits(*ctx, {"link_watch"});
    if (!watch.ok()) return fail(watch.status());
    results->push_back(probes::KnownGoodOf(watch->front()));
  }

  report::ReportBuilder builder("check", absl::StrCat("fabricctl ", kVersion));
  builder.SetConfig(options.config);
  v1::NodeHealth* health = builder.AddNode(node, v1::HEALTH_OK);
  builder.AddAudits(health, *std::move(results));
  const v1::Report report = builder.Finish(
      absl::Now(), absl::FromChrono(std::chrono::steady_clock::now() - started), node);
  return Deliver(report, options, node, err);
}

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "check",
      "audit this node with no controller (cron, Slurm HealthCheckProgram, node_exporter)");
  cmd->add_option("--sysfs-root", options->sysfs_root,
                  "read sysfs and procfs below this directory (fixtures)")
      ->capture_default_str();
  cmd->add_option("--probes,--audits", options->audits,
                  std::string("comma-separated audits (default all: ") + probes::AuditNames() +
                      ") and probes to run on loopback (default: rdma_write_bw where an "
                      "RDMA device is); gpu_copy; allreduce (NCCL over this node's GPUs); "
                      "known_good (the last sweep that passed this node, as its agent heard)");
  cmd->add_option("--node-name", options->node, "name in the report (default: hostname)");
  cmd->add_option("--nccl-log", options->nccl_logs,
                  "analyse these NCCL_DEBUG=INFO logs of a job instead (transport, GPUDirect, "
                  "fallback to sockets)");
  cmd->add_option("--window", options->window,
                  "read error counters twice this far apart (e.g. 10s); default: skip");
  cmd->add_option("--watch-file", options->watch_file,
                  "the agent's link watch verdict to report (default: watch.file, "
                  "/run/fabric-agent/link-watch)");
  cmd->add_option("--format", options->format,
                  "text, json, junit, prom, or drain (NODE<tab>KINDS when to drain)")
      ->capture_default_str();
  cmd->add_option("--output", options->output, "write the report here (default stdout)");
  return cmd;
}

}  // namespace fabricctl::cli
