#include "cli/sweep.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/exit_code.h"
#include "base/files.h"
#include "base/hostlist.h"
#include "base/process.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "google/protobuf/util/time_util.h"
#include "probes/catalogue.h"
#include "probes/common/params.h"
#include "probes/common/sizes.h"
#include "report/builder.h"
#include "report/chunks.h"
#include "report/render.h"

namespace fabricctl::cli {
namespace {

using google::protobuf::util::TimeUtil;

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

// --pairing into the request: full, quick, topology, sample (with --sample-rounds) or
// file:PATH (its rounds read here, at most 1 MiB).
absl::Status SetPairing(const SweepCommandOptions& o, v1::SweepRequest& request) {
  if (o.pairing.empty()) return absl::OkStatus();
  if (o.pairing == "full") {
    request.set_pairing(v1::PAIRING_FULL);
  } else if (o.pairing == "quick") {
    request.set_pairing(v1::PAIRING_QUICK);
  } else if (o.pairing == "topology") {
    request.set_pairing(v1::PAIRING_TOPOLOGY);
  } else if (o.pairing == "sample") {
    request.set_pairing(v1::PAIRING_SAMPLE);
    request.set_sample_rounds(o.sample_rounds);
  } else if (o.pairing.rfind("file:", 0) == 0) {
    ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(o.pairing.substr(5), "--pairing", 1 << 20));
    request.set_pairing(v1::PAIRING_FILE);
    request.set_pairing_file(std::move(text));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pairing: '", o.pairing, "' is not full, quick, sample, topology or file:PATH"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SweepRequest> BuildSweepRequest(const SweepCommandOptions& o) {
  v1::SweepRequest request;
  if (o.nodes.has_value()) {
    auto names = ExpandHostlist(*o.nodes, o.nodes_from);
    if (!names.ok()) return names.status();
    for (auto& name : *names) request.add_nodes(std::move(name));
  }
  RETURN_IF_ERROR(SetPairing(o, request));
  for (absl::string_view name : absl::StrSplit(o.probes, ',', absl::SkipWhitespace())) {
    if (name == "allreduce" || name == "gpu_copy") {
      request.add_probes(name == "allreduce" ? v1::ALLREDUCE : v1::GPU_COPY);
      continue;
    }
    const probes::ProbeInfo* probe = probes::FindProbeInfo(std::string(name));
    if (probe == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--probes: unknown probe '", name,
                                                     "' (known: ", probes::ProbeNames(),
                                                     ", allreduce, gpu_copy)"));
    }
    request.add_probes(probe->kind);
  }
  if (!o.sizes.empty()) {
    auto sizes = probes::ParseSizeSweep(o.sizes, probes::ProbeLimits().max_message_bytes);
    if (!sizes.ok()) return sizes.status();
    for (uint64_t s : *sizes) request.mutable_measurement()->add_sizes_bytes(s);
  }
  if (o.iterations > 0 && !o.duration.empty()) {
    return absl::InvalidArgumentError("--iters and --duration: give one of them");
  }
  request.mutable_measurement()->set_iterations(static_cast<uint32_t>(o.iterations));
  if (!o.duration.empty()) {
    auto d = ParsePositiveDuration(o.duration, "--duration");
    if (!d.ok()) return d.status();
    *request.mutable_measurement()->mutable_duration() =
        TimeUtil::MillisecondsToDuration(absl::ToInt64Milliseconds(*d));
  }
  if (!o.memory.empty()) {
    std::vector<std::string> sides = absl::StrSplit(o.memory, ',');
    if (sides.size() > 2)
      return absl::InvalidArgumentError("--memory: host, gpu, or CLIENT,SERVER (host,gpu)");
    auto backend = [](const std::string& side) -> absl::StatusOr<v1::MemoryBackend> {
      if (side == "host") return v1::MEMORY_HOST;
      if (side == "gpu") return v1::MEMORY_GPU;
      return absl::InvalidArgumentError(absl::StrCat("--memory: '", side, "' is not host or gpu"));
    };
    auto client = backend(sides[0]);
    if (!client.ok()) return client.status();
    auto server = backend(sides.size() == 2 ? sides[1] : sides[0]);
    if (!server.ok()) return server.status();
    request.set_memory(*client);
    request.set_server_memory(*server);
    request.set_gpu_index(o.gpu);
  }
  if (!o.wait.empty()) {
    auto d = ParsePositiveDuration(o.wait, "--wait");
    if (!d.ok()) return d.status();
    if (*d > absl::Hours(1)) return absl::InvalidArgumentError("--wait: at most 1h");
    *request.mutable_wait() = TimeUtil::MillisecondsToDuration(absl::ToInt64Milliseconds(*d));
  }
  request.set_baseline_sweep_id(o.baseline);
  request.set_audits(o.audits);
  if (o.flows > 64) return absl::InvalidArgumentError("--flows: at most 64");
  request.set_flows(o.flows);
  if (o.node_bandwidth) request.set_node_bandwidth(true);
  request.set_allreduce_group_by(o.allreduce_group_by);
  request.set_allreduce_backend(o.allreduce_backend);
  for (absl::string_view rail : absl::StrSplit(o.rails, ',', absl::SkipEmpty())) {
    if (request.rails_size() >= 64) return absl::InvalidArgumentError("--rails: at most 64 rails");
    request.add_rails(std::string(rail));
  }
  return request;
}

namespace {

// Renders, writes, and turns the report's worst severity into the exit code, with the
// one-line reason on stderr (the README's "Exit codes").
int Finish(const v1::Report& report, const std::string& format, const std::string& output,
           const std::string& command, std::ostream& err) {
  const bool color = format == "text" && (output.empty() || output == "-") && IsTerminal(1);
  auto rendered = report::Render(report, format, color);
  if (!rendered.ok()) return Fail(err, command, rendered.status());
  if (auto s = WriteOutput(output, *rendered); !s.ok()) return Fail(err, command, s);
  const int code = report::ExitCodeFor(report);
  if (code != kExitOk) {
    int critical = 0, warning = 0;
    for (const auto& f : report.findings()) {
      critical += f.severity() == v1::SEVERITY_CRITICAL;
      warning += f.severity() == v1::SEVERITY_WARNING;
    }
    err << (code == kExitCritical ? "CRITICAL" : "WARNING") << ": sweep "
        << report.sweep().sweep_id() << ": " << critical << " critical, " << warning
        << " warning findings";
    if (report.summary().drain_size() > 0) {
      err << "; drain " << absl::StrJoin(report.summary().drain(), ",");
    }
    err << "\n";
  }
  return code;
}

}  // namespace

std::string SweepFailure(const absl::Status& status, bool started) {
  // A controller that answered and failed the handshake: a member or a CA rotation can cause
  // it, so it is no outage (FABRIC_ON_ERROR decides, not FABRIC_ON_UNREACHABLE).
  if (IsHandshakeRefused(status)) return "tls";
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return started ? "incomplete" : "unreachable";
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kFailedPrecondition:
      return "refused";
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return "permission";
    case absl::StatusCode::kDeadlineExceeded:
      return "timeout";
    case absl::StatusCode::kCancelled:
      return "cancelled";
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      return "invalid";
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
      return started ? "incomplete" : "error";
    default:
      return "error";
  }
}

namespace {

// Fail(), and the failure's class in `status_file` (best effort: the exit code says enough).
int FailSweep(const SweepCommandOptions& options, std::ostream& err, const absl::Status& status,
              bool started) {
  if (!options.status_file.empty()) {
    std::ofstream(options.status_file, std::ios::trunc) << SweepFailure(status, started) << "\n";
  }
  return Fail(err, "sweep", status);
}

}  // namespace

absl::StatusOr<v1::ListNodesResponse> ListRegistry(v1::ControllerService::Stub& stub,
                                                   const ControllerTarget& controller,
                                                   const std::vector<std::string>& names) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(controller.timeout));
  v1::ListNodesRequest list;
  for (const std::string& name : names) list.add_names(name);
  v1::ListNodesResponse nodes;
  if (grpc::Status s = stub.ListNodes(&context, list, &nodes); !s.ok()) {
    return DescribeRpcFailure(controller, s);
  }
  return nodes;
}

absl::StatusOr<v1::Report> StreamSweep(v1::ControllerService::Stub& stub,
                                       const v1::SweepRequest& request,
                                       const SweepCommandOptions& options, std::ostream& err,
                                       bool& started) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options.sweep_timeout));
  auto reader = stub.Sweep(&context, request);
  v1::SweepEvent event;
  report::ReportAssembler assembler;
  absl::Status assembled;
  std::optional<v1::Report> whole;
  {
    SweepProgress progress(err, IsTerminal(2));
    while (reader->Read(&event)) {
      started = true;
      if (event.has_started()) {
        progress.Started(event.started());
      } else if (event.has_round()) {
        progress.Round(event.round());
      } else if (event.has_chunk() && assembled.ok()) {
        assembled = assembler.Add(std::move(*event.mutable_chunk()));
      } else if (event.has_report()) {
        // A whole report in one message, as controllers before chunked reports sent it.
        whole = std::move(*event.mutable_report());
      }
    }
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) {
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return DescribeRpcFailure(options.controller, status);
    }
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  if (whole) return *std::move(whole);
  if (!assembled.ok()) return absl::DataLossError(assembled.message());
  auto report = assembler.Take();
  if (!report.ok()) {
    return absl::DataLossError(
        absl::StrCat("the controller sent no whole report: ", report.status().message()));
  }
  return report;
}

namespace {

// --max-age: "0" (every node) or a positive duration, for the controller to decide with.
absl::Status SetMaxAge(const std::string& text, v1::SweepRequest& request) {
  absl::Duration age = absl::ZeroDuration();
  if (text != "0" && text != "0s") {
    ASSIGN_OR_RETURN(age, ParsePositiveDuration(text, "--max-age"));
  }
  *request.mutable_max_age() =
      google::protobuf::util::TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(age));
  return absl::OkStatus();
}

}  // namespace

void ResolveMaxAge(const v1::Config& config, SweepCommandOptions* options) {
  if (options->max_age != "configured") return;
  const auto& age = config.sweep().max_age();
  options->max_age =
      age.seconds() > 0 || age.nanos() > 0
          ? absl::FormatDuration(absl::Seconds(age.seconds()) + absl::Nanoseconds(age.nanos()))
          : "";
}

int RunSweepCommand(const SweepCommandOptions& options, std::ostream& err) {
  // Validate the format before spending minutes on a sweep.
  if (auto probe = report::CheckFormat(options.format); !probe.ok()) {
    return FailSweep(options, err, probe, false);
  }
  // And the output: a sweep's verdict must not be lost to a path it cannot be written to.
  if (auto s = CheckOutput(options.output); !s.ok()) return FailSweep(options, err, s, false);
  auto request = BuildSweepRequest(options);
  if (!request.ok()) return FailSweep(options, err, request.status(), false);
  auto stub = ConnectController(options.controller);
  if (!stub.ok()) return FailSweep(options, err, stub.status(), false);
  if (!options.max_age.empty()) {
    if (auto s = SetMaxAge(options.max_age, *request); !s.ok())
      return FailSweep(options, err, s, false);
  }
  bool started = false;
  auto report = StreamSweep(**stub, *request, options, err, started);
  if (!report.ok()) return FailSweep(options, err, report.status(), started);
  // What the controller decided of a --max-age sweep: what it measured, and why.
  if (!report->sweep().max_age_decision().empty())
    err << "fabricctl sweep: " << report->sweep().max_age_decision() << "\n";
  // The node-bandwidth stage's account: what it measured, or why it could not.
  if (!report->sweep().node_bandwidth().empty())
    err << "fabricctl sweep: " << report->sweep().node_bandwidth() << "\n";
  return Finish(*report, options.format, options.output, "sweep", err);
}

int RunMapCommand(const ControllerTarget& controller, int64_t sweep_id, const std::string& format,
                  const std::string& output, std::ostream& err) {
  if (auto s = report::CheckFormat(format); !s.ok()) return Fail(err, "map", s);
  auto stub = ConnectController(controller);
  if (!stub.ok()) return Fail(err, "map", stub.status());
  grpc::ClientContext context;
  // A large report takes longer than one RPC's deadline to arrive: a minute per 100 MB is far
  // more than any link needs, and the stream is cut at once when the controller goes away.
  context.set_deadline(DeadlineAfter(controller.timeout + absl::Minutes(5)));
  v1::GetReportRequest request;
  request.set_sweep_id(sweep_id);
  auto reader = (*stub)->StreamReport(&context, request);
  report::ReportAssembler assembler;
  absl::Status assembled;
  v1::ReportChunk chunk;
  while (reader->Read(&chunk)) {
    if (assembled.ok()) assembled = assembler.Add(std::move(chunk));
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return Fail(err, "map", DescribeRpcFailure(controller, status));
  if (!assembled.ok()) return Fail(err, "map", assembled);
  auto report = assembler.Take();
  if (!report.ok()) return Fail(err, "map", report.status());
  return Finish(*report, format, output, "map", err);
}

CLI::App* AddSweepCommand(CLI::App& app, SweepCommandOptions* options, SweepFlags* flags) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "measure every pair of nodes and report the fabric's health (exit code gates a job)");
  flags->nodes_flag = cmd->add_option(
      "--nodes", flags->nodes,
      "the nodes, a Slurm hostlist (node-[1-4,7],gpu01; default: $SLURM_JOB_NODELIST, else "
      "$SLURM_NODELIST, else every registered node)");
  cmd->add_option("--pairing", options->pairing, "full, quick, sample, topology or file:PATH");
  cmd->add_option("--sample-rounds", options->sample_rounds, "rounds of --pairing sample");
  cmd->add_option("--rails", options->rails,
                  "comma-separated rails to measure, by the configuration's names (rail0,rail3; "
                  "default: every rail of rails:)");
  cmd->add_option("--probes", options->probes,
                  "comma-separated probes (default tcp_bw,tcp_lat); allreduce runs a ring over "
                  "every node; gpu_copy measures every node's GPUs' host-device copies");
  cmd->add_option("--sizes", options->sizes, "message sizes for every probe");
  cmd->add_option("--iters", options->iterations, "iterations per size");
  cmd->add_option("--duration", options->duration,
                  "time per size of the bandwidth probes and tcp_lat (4 = 4s, 500ms)");
  cmd->add_option("--baseline", options->baseline, "compare with this earlier sweep");
  cmd->add_option(
      "--status-file", options->status_file,
      "when the sweep gives no verdict (exit 3), write why here as one word: "
      "unreachable, tls, refused, permission, incomplete, timeout, cancelled, invalid or "
      "error (for scripts: the Slurm prolog)");
  cmd->add_option(
      "--max-age", options->max_age,
      "measure again only the nodes whose pass is older than this (24h; 0: every node), lost, "
      "or did not cover this sweep's probes and rails, beside max(3, their number) "
      "known-good references; the others are vouched for by the sweep that passed them "
      "(`configured`: the configuration's sweep.max_age, none when unset)");
  cmd->add_flag("--audits", options->audits, "also run every node's audits (as fabricctl check)");
  cmd->add_flag("--node-bandwidth", options->node_bandwidth,
                "with two rails or more: each node's rails alone and then at once, and "
                "node_bandwidth_limited where they do not add up");
  cmd->add_option("--flows", options->flows,
                  "flows per bandwidth pair probe (tcp_bw streams, RDMA queue pairs), each from "
                  "its own source port and its path traced (default: sweep.flows, else from "
                  "topology.ecmp_paths; 1: one flow)");
  cmd->add_option("--allreduce-group", options->allreduce_group_by,
                  "allreduce: one ring per value of this node label (rack, rail)");
  cmd->add_option("--allreduce-backend", options->allreduce_backend,
                  "allreduce: nccl (one rank per GPU), rdma or tcp (the ring from host "
                  "memory over RDMA or TCP), or auto (nccl where every node of a group has "
                  "GPUs and NCCL, else rdma where every node has an active RDMA port, else tcp)")
      ->check(CLI::IsMember({"auto", "nccl", "rdma", "tcp"}))
      ->capture_default_str();
  cmd->add_option("--format", options->format,
                  "text, json, junit, html, prom, drain (NODE<tab>KINDS per node to drain), or "
                  "resume (NODE per node to give back)")
      ->capture_default_str();
  cmd->add_option("--output", options->output, "write the report here (default stdout)");
  cmd->add_option("--memory", options->memory,
                  "rdma_* probes' buffers: host, gpu (GPUDirect RDMA on both halves) or "
                  "CLIENT,SERVER such as host,gpu");
  cmd->add_option("--gpu", options->gpu, "--memory gpu: the CUDA ordinal on every node")
      ->capture_default_str();
  cmd->add_option("--wait", options->wait,
                  "queue behind a sweep already running for up to this long (30s, 10m; "
                  "at most 1h; default: refused at once)");
  cmd->add_option("--sweep-timeout", flags->timeout, "deadline of the whole sweep")
      ->capture_default_str();
  return cmd;
}

absl::Status ResolveSweepFlags(const SweepFlags& flags, SweepCommandOptions* options) {
  if (flags.nodes_flag != nullptr && flags.nodes_flag->count() > 0) {
    options->nodes = flags.nodes;
  } else {
    // Inside a Slurm job (a prolog, an sbatch script) the job's nodes, as Slurm names them.
    for (const char* var : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      if (const char* list = std::getenv(var); list != nullptr) {
        options->nodes = list;
        options->nodes_from = std::string("$") + var;
        break;
      }
    }
  }
  ASSIGN_OR_RETURN(options->sweep_timeout, ParsePositiveDuration(flags.timeout, "--sweep-timeout"));
  return absl::OkStatus();
}

CLI::App* AddMapCommand(CLI::App& app, MapOptions* options) {
  CLI::App* cmd = app.add_subcommand("map", "show a stored sweep's health map (default: latest)");
  cmd->add_option("sweep_id", options->sweep_id, "sweep id");
  cmd->add_option("--format", options->format,
                  "text, json, junit, html, prom, drain (NODE<tab>KINDS per node to drain), or "
                  "resume (NODE per node to give back)")
      ->capture_default_str();
  cmd->add_option("--output", options->output, "write the report here (default stdout)");
  return cmd;
}

}  // namespace fabricctl::cli
