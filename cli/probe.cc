#include "cli/probe.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/exit_code.h"
#include "base/net_address.h"
#include "base/process.h"
#include "google/protobuf/util/json_util.h"
#include "probes/client.h"
#include "probes/common/sizes.h"
#include "probes/common/table.h"
#include "probes/common/child.h"
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

int RunProbeCommand(const ProbeCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& why) {
    err << "fabricctl probe: " << why << "\n";
    return kExitUnknown;
  };
  const probes::Probe* probe = probes::FindProbe(options.kind);
  if (probe == nullptr) {
    return fail(absl::StrCat("unknown probe '", options.kind, "' (known: ", probes::ProbeNames(),
                             ")"));
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
    if (!options.target.empty()) return fail("--server takes no HOST");
    auto server = probes::ProbeServer::Listen(options.listen_host, options.port,
                                              probes::ServeContext(limits, local));
    if (!server.ok()) return fail(std::string(server.status().message()));
    std::printf("fabricctl probe server listening on %s\n",
                HostPort{options.listen_host, (*server)->port()}.ToString().c_str());
    std::fflush(stdout);
    absl::Status served = (*server)->Serve(options.one_off);
    if (!served.ok()) return fail(std::string(served.message()));
    return kExitOk;
  }

  if (options.target.empty()) return fail("give the server as HOST[:PORT], or --server");
  auto target = ParseHostPort(options.target, "HOST", options.port);
  if (!target.ok()) return fail(std::string(target.status().message()));
  probes::ProbeParams params = options.params;
  params.rdma = local;
  params.kind = probe->kind();
  auto sizes = probes::ParseSizeSweep(
      options.sizes.empty() ? (probe->measures_bandwidth() ? "64K:1M" : "2") : options.sizes,
      limits.max_message_bytes);
  if (!sizes.ok()) return fail(std::string(sizes.status().message()));
  params.sizes_bytes = *sizes;
  if (!options.duration.empty()) {
    if (options.iterations != 0) return fail("--iters and --duration: give one of them");
    auto d = ParsePositiveDuration(options.duration, "--duration");
    if (!d.ok()) return fail(std::string(d.status().message()));
    params.duration = *d;
    params.iterations = 0;
  } else if (options.iterations == 0 && probe->measures_bandwidth()) {
    // By time, as iperf3 and perftest -D: a slow link reports its low figure on time instead
    // of taking as much longer as it is slower.
    params.duration = kDefaultBwDuration;
  } else {
    params.iterations = options.iterations != 0 ? options.iterations : kDefaultLatIterations;
  }
  params.warmup_iterations = options.warmup;
  if (auto s = probes::ValidateParams(params, limits); !s.ok()) return fail(std::string(s.message()));

  // Measures and renders; an error is the one-line reason.
  auto measure = [&]() -> absl::StatusOr<std::string> {
    probes::ProbeRun run = probes::RunProbeClient(
        params, {target->host, target->port}, limits, /*end_session=*/true);
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
    const probes::InfoLines info = Info(*probe, params, target->ToString(), run);
    if (probe->measures_bandwidth()) {
      return probes::FormatBwTable(probe->title(), info, run.bw,
                                   options.units == "Gb" ? probes::BwUnit::kGbps
                                                         : probes::BwUnit::kMiBps);
    }
    return probes::FormatLatTable(probe->title(), info, run.lat);
  };
  // GPU memory brings the CUDA driver into the process: the client half then runs in a child
  // under a watchdog, so that a hung driver costs the probe, not the command.
  absl::StatusOr<std::string> text =
      local.gpu_memory ? probes::RunInChild(measure, params.timeout > absl::ZeroDuration()
                                                         ? params.timeout
                                                         : limits.max_duration)
                       : measure();
  if (!text.ok()) return fail(std::string(text.status().message()));
  out << *text;
  return kExitOk;
}

}  // namespace fabricctl::cli
