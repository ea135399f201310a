#include "cli/probe.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "base/exit_code.h"
#include "base/net_address.h"
#include "base/process.h"
#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "probes/client.h"
#include "probes/common/child.h"
#include "probes/common/sizes.h"
#include "probes/common/table.h"
#include "probes/server.h"
#include "probes/table.h"

namespace fabricctl::cli {
namespace {

// perftest's defaults: 5000 iterations for bandwidth, 1000 for latency (DEF_ITERS_WB, DEF_ITERS).
constexpr absl::Duration kDefaultBwDuration = absl::Seconds(2);  // per size
constexpr uint64_t kDefaultLatIterations = 1000;

probes::InfoLines Info(const probes::Probe& probe, const probes::ProbeParams& p,
                       const std::string& server, const probes::ProbeRun& run) {
  probes::InfoLines info = {{"Server", server}, {"Device", run.device}};
  info.push_back({"Iterations", p.duration > absl::ZeroDuration()
                                    ? absl::StrCat(absl::FormatDuration(p.duration), " per size")
                                    : absl::StrCat(p.iterations, " per size")});
  info.push_back({"Warm-up", absl::StrCat(p.warmup_iterations)});
  if (probe.kind() == v1::TCP_BW) info.push_back({"Streams", absl::StrCat(p.tcp_streams)});
  info.insert(info.end(), run.setup.begin(), run.setup.end());
  return info;
}

}  // namespace

namespace {

// `--server`: serves the other half until stopped, or one session with --one-off.
absl::Status Serve(const ProbeCommandOptions& options, const probes::ProbeLimits& limits,
                   const probes::RdmaParams& local) {
  if (!options.target.empty()) return absl::InvalidArgumentError("--server takes no HOST");
  ASSIGN_OR_RETURN(std::unique_ptr<probes::ProbeServer> server,
                   probes::ProbeServer::Listen(options.listen_host, options.port,
                                               probes::ServeContext(limits, local)));
  std::printf("fabricctl probe server listening on %s\n",
              HostPort{options.listen_host, server->port()}.ToString().c_str());
  std::fflush(stdout);
  return server->Serve(options.one_off);
}

// The client's parameters from the flags: sizes, iterations or duration (by time for the
// bandwidth probes, as iperf3 and perftest -D: a slow link reports its low figure on time
// instead of taking as much longer as it is slower), validated against the caps.
absl::StatusOr<probes::ProbeParams> ClientParams(const ProbeCommandOptions& options,
                                                 const probes::Probe& probe,
                                                 const probes::ProbeLimits& limits,
                                                 const probes::RdmaParams& local) {
  probes::ProbeParams params = options.params;
  params.rdma = local;
  params.kind = probe.kind();
  ASSIGN_OR_RETURN(params.sizes_bytes,
                   probes::ParseSizeSweep(
                       options.sizes.empty()
                           ? (probe.measures_bandwidth() ? DefaultConfig().probes().sizes() : "2")
                           : options.sizes,
                       limits.max_message_bytes));
  if (!options.duration.empty()) {
    if (options.iterations != 0) {
      return absl::InvalidArgumentError("--iters and --duration: give one of them");
    }
    ASSIGN_OR_RETURN(params.duration, ParsePositiveDuration(options.duration, "--duration"));
    params.iterations = 0;
  } else if (options.iterations == 0 && probe.measures_bandwidth()) {
    params.duration = kDefaultBwDuration;
  } else {
    params.iterations = options.iterations != 0 ? options.iterations : kDefaultLatIterations;
  }
  params.warmup_iterations = options.warmup;
  RETURN_IF_ERROR(probes::ValidateParams(params, limits));
  return params;
}

// Measures against `target` and renders the result (perftest's table, or JSON).
absl::StatusOr<std::string> Measure(const ProbeCommandOptions& options, const probes::Probe& probe,
                                    const probes::ProbeParams& params, const HostPort& target,
                                    const probes::ProbeLimits& limits) {
  probes::ProbeRun run =
      probes::RunProbeClient(params, {target.host, target.port}, limits, /*end_session=*/true);
  if (run.outcome != probes::Outcome::kOk) {
    return absl::UnavailableError(
        run.outcome == probes::Outcome::kSkipped ? "skipped: " + run.reason : run.reason);
  }
  if (options.format == "json") {
    google::protobuf::util::JsonPrintOptions json;
    json.add_whitespace = true;
    json.preserve_proto_field_names = true;
    std::string text;
    (void)google::protobuf::util::MessageToJsonString(probes::ToResult(run, params), &text, json);
    return text;
  }
  const probes::InfoLines info = Info(probe, params, target.ToString(), run);
  if (probe.measures_bandwidth()) {
    std::string table = probes::FormatBwTable(
        probe.title(), info, run.bw,
        options.units == "Gb" ? probes::BwUnit::kGbps : probes::BwUnit::kMiBps);
    if (params.tcp_streams > 1 || params.trace_flows || params.rdma.queue_pairs > 1) {
      table +=
          probes::FormatFlows(run.bw.empty() ? std::vector<probes::Flow>{} : run.bw.back().flows);
    }
    return table;
  }
  return probes::FormatLatTable(probe.title(), info, run.lat);
}

}  // namespace

int RunProbeCommand(const ProbeCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& why) {
    err << "fabricctl probe: " << why << "\n";
    return kExitUnknown;
  };
  const probes::Probe* probe = probes::FindProbe(options.kind);
  if (probe == nullptr) {
    return fail(
        absl::StrCat("unknown probe '", options.kind, "' (known: ", probes::ProbeNames(), ")"));
  }
  if (options.format != "text" && options.format != "json") {
    return fail(absl::StrCat("--format: '", options.format, "' is not text or json"));
  }
  if (options.units != "Gb" && options.units != "MiB") {
    return fail(absl::StrCat("--units: '", options.units, "' is not Gb or MiB"));
  }
  if (options.memory != "host" && options.memory != "gpu") {
    return fail(absl::StrCat("--memory: '", options.memory, "' is not host or gpu"));
  }
  const probes::ProbeLimits limits;
  probes::RdmaParams local = options.params.rdma;
  local.gpu_memory = options.memory == "gpu";
  if (options.server) {
    const absl::Status served = Serve(options, limits, local);
    return served.ok() ? kExitOk : fail(std::string(served.message()));
  }
  if (options.target.empty()) return fail("give the server as HOST[:PORT], or --server");
  auto target = ParseHostPort(options.target, "HOST", options.port);
  if (!target.ok()) return fail(std::string(target.status().message()));
  auto params = ClientParams(options, *probe, limits, local);
  if (!params.ok()) return fail(std::string(params.status().message()));
  // GPU memory brings the CUDA driver into the process: the client half then runs in a child
  // under a watchdog, so that a hung driver costs the probe, not the command.
  auto measure = [&] { return Measure(options, *probe, *params, *target, limits); };
  absl::StatusOr<std::string> text =
      local.gpu_memory ? probes::RunInChild(measure, params->timeout > absl::ZeroDuration()
                                                         ? params->timeout
                                                         : limits.max_duration)
                       : measure();
  if (!text.ok()) return fail(std::string(text.status().message()));
  out << *text;
  return kExitOk;
}

CLI::App* AddProbeCommand(CLI::App& app, ProbeCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "probe", "measure one pair of hosts, like ib_write_bw or iperf3 (standalone, no controller)");
  cmd->add_option("kind", options->kind, probes::ProbeNames())->required();
  cmd->add_option("host", options->target, "server HOST[:PORT] (client mode)");
  cmd->add_flag("--server", options->server, "serve the other half");
  cmd->add_option("--listen", options->listen_host, "server: address to listen on")
      ->capture_default_str();
  cmd->add_option("--port", options->port, "server port")->capture_default_str();
  cmd->add_flag("--one-off", options->one_off, "server: exit after one client session");
  cmd->add_option("--sizes", options->sizes,
                  "message sizes: MIN:MAX doubling (2:8M) or a list (4K,64K,1M)");
  cmd->add_option("--iters", options->iterations,
                  "iterations per size (default 5000 bandwidth, 1000 latency)");
  cmd->add_option(
      "--duration", options->duration,
      "time per size instead of --iters (4 = 4s, 500ms); the default for bandwidth probes");
  cmd->add_option("--warmup", options->warmup, "unmeasured iterations before each size");
  cmd->add_option("--streams", options->params.tcp_streams, "tcp_bw: parallel streams")
      ->capture_default_str();
  cmd->add_option("--qps", options->params.rdma.queue_pairs,
                  "rdma_*_bw: queue pairs, each a flow of its own, figures summed (perftest -q)")
      ->capture_default_str();
  cmd->add_flag("--trace", options->params.trace_flows,
                "tcp_bw, rdma_write_bw, rdma_send_bw: trace each stream's or queue pair's path "
                "with its own 5-tuple after the last size");
  cmd->add_option("--device", options->params.rdma.device,
                  "RDMA device (default: the first with an active port)");
  cmd->add_option("--ib-port", options->params.rdma.port, "RDMA port (default: first active)");
  cmd->add_option("--gid-index", options->params.rdma.gid_index,
                  "GID index (default -1: chosen as perftest does)")
      ->capture_default_str();
  cmd->add_option("--tx-depth", options->params.rdma.tx_depth,
                  "outstanding sends (default 128 for bandwidth)");
  cmd->add_option("--cq-mod", options->params.rdma.cq_moderation,
                  "one completion every N sends (default 100; 1 above 8 KiB)");
  cmd->add_flag("--bidirectional", options->params.rdma.bidirectional,
                "rdma_write_bw, rdma_read_bw: both directions at once, summed (perftest -b)");
  cmd->add_option("--inline", options->params.rdma.inline_bytes,
                  "largest inline message (default: the device's)");
  cmd->add_option("--memory", options->memory,
                  "RDMA buffers in host or gpu memory (GPUDirect RDMA through dma-buf or "
                  "peer memory; each side chooses its own, as perftest's --use_cuda)")
      ->capture_default_str();
  cmd->add_option("--gpu", options->params.rdma.gpu, "--memory gpu: the GPU's CUDA ordinal")
      ->capture_default_str();
  cmd->add_option("--format", options->format, "text or json")->capture_default_str();
  cmd->add_option("--units", options->units, "bandwidth in Gb (Gb/s) or MiB (MiB/s)")
      ->capture_default_str();
  return cmd;
}

}  // namespace fabricctl::cli
