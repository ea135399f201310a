#include "controller/sweep/specs.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "base/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "probes/catalogue.h"
#include "probes/common/params.h"
#include "probes/common/sizes.h"

namespace fabricctl::controller::sweep {
namespace {

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Microseconds(google::protobuf::util::TimeUtil::DurationToMicroseconds(d));
}

absl::Status NotASweepProbe(const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is not a probe of sweeps (", probes::ProbeNames(), ", allreduce)"));
}

absl::StatusOr<v1::ProbeSpec> PairSpec(v1::ProbeKind kind, const v1::SweepRequest& request,
                                       const v1::Config& config, absl::Duration pair_timeout,
                                       uint32_t flows) {
  const probes::ProbeInfo* probe = probes::FindProbeInfo(kind);
  probes::ProbeParams p;
  p.kind = kind;
  const v1::Measurement& m = request.measurement();
  if (m.sizes_bytes_size() > 0) {
    p.sizes_bytes.assign(m.sizes_bytes().begin(), m.sizes_bytes().end());
  } else if (probe->measures_bandwidth) {
    auto sizes =
        probes::ParseSizeSweep(config.probes().sizes(), probes::ProbeLimits().max_message_bytes);
    if (!sizes.ok())
      return absl::InvalidArgumentError(absl::StrCat("probes.sizes: ", sizes.status().message()));
    p.sizes_bytes = *sizes;
  } else {
    p.sizes_bytes = {2};  // perftest's latency default
  }
  const bool by_time = m.has_duration() || (m.iterations() == 0 && config.probes().has_duration());
  if (m.iterations() > 0) {
    p.iterations = m.iterations();
  } else if (by_time && !(probe->rdma && !probe->measures_bandwidth)) {
    p.duration = FromProto(m.has_duration() ? m.duration() : config.probes().duration());
  } else {
    // RDMA latency: a ping-pong's time does not grow with a slow link's bandwidth.
    p.iterations = config.probes().iterations() > 0 ? config.probes().iterations() : 1000;
  }
  p.warmup_iterations =
      m.warmup_iterations() ? m.warmup_iterations() : config.probes().warmup_iterations();
  p.tcp_streams = std::max<uint32_t>(1, config.probes().tcp_streams());
  if (kind == v1::TCP_BW && flows > 1) {  // each stream a flow of its own, its path traced
    p.tcp_streams = flows;
    p.trace_flows = true;
  }
  // Each queue pair a flow of its own (RoCE v2 gives each its own UDP source port); WRITE's and
  // SEND's traced from the client, whose queue pairs carry their data (READ's data comes from
  // the server's).
  if ((kind == v1::RDMA_WRITE_BW || kind == v1::RDMA_READ_BW || kind == v1::RDMA_SEND_BW) &&
      flows > 1) {
    p.rdma.queue_pairs = flows;
    p.trace_flows = kind != v1::RDMA_READ_BW;
  }
  p.rdma.device = config.probes().rdma_device();
  p.rdma.port = config.probes().rdma_port();
  p.rdma.gid_index = config.probes().gid_index();
  if (probe->rdma) {  // GPUDirect RDMA: each half's buffers in its node's GPU memory
    p.rdma.gpu_memory = request.memory() == v1::MEMORY_GPU;
    p.rdma.server_gpu_memory = request.server_memory() == v1::MEMORY_BACKEND_UNSPECIFIED
                                   ? p.rdma.gpu_memory
                                   : request.server_memory() == v1::MEMORY_GPU;
    p.rdma.gpu = request.gpu_index();
  }
  p.timeout = pair_timeout;
  if (auto s = probes::ValidateParams(p, probes::LimitsFromConfig(config.probes().limits()));
      !s.ok()) {
    return s;
  }
  return probes::ToSpec(p);
}

}  // namespace

std::vector<bool> SweepSpecs::ReverseFlags(bool both_directions) const {
  std::vector<bool> out;
  for (v1::ProbeKind kind : kinds) {
    out.push_back(both_directions && probes::FindProbeInfo(kind)->measures_bandwidth);
  }
  return out;
}

namespace {

// reference_nodes: at most kMaxReferences, each among the sweep's nodes when it names them.
absl::Status References(const v1::SweepRequest& request, std::set<std::string>& out) {
  constexpr int kMaxReferences = 64;
  if (request.reference_nodes_size() > kMaxReferences) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reference_nodes: ", request.reference_nodes_size(), " nodes, at most ", kMaxReferences));
  }
  const std::set<std::string> named(request.nodes().begin(), request.nodes().end());
  for (const std::string& name : request.reference_nodes()) {
    if (!named.empty() && named.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("reference_nodes: '", name, "' is not among the sweep's nodes"));
    }
    out.insert(name);
  }
  return absl::OkStatus();
}

// The request's flows, the configuration's, or the default from the fabric's paths.
absl::StatusOr<uint32_t> Flows(const v1::SweepRequest& request, const v1::Config& config) {
  if (request.flows() > kMaxFlows) {
    return absl::InvalidArgumentError(
        absl::StrCat("flows: ", request.flows(), ", at most ", kMaxFlows));
  }
  if (request.flows() > 0) return request.flows();
  if (config.sweep().has_flows()) {
    if (config.sweep().flows() < 1 || config.sweep().flows() > kMaxFlows) {
      return absl::InvalidArgumentError(
          absl::StrCat("sweep.flows: ", config.sweep().flows(), ", must be 1 to ", kMaxFlows));
    }
    return config.sweep().flows();
  }
  return DefaultFlows(config.topology().ecmp_paths());
}

}  // namespace

uint32_t DefaultFlows(uint32_t ecmp_paths, double missed) {
  if (ecmp_paths <= 1) return 1;
  const double k = ecmp_paths;
  for (uint32_t n = 1; n < kMaxFlows; ++n) {
    if (k * std::pow(1.0 - 1.0 / k, n) <= missed) return n;
  }
  return kMaxFlows;
}

absl::StatusOr<SweepSpecs> ResolveSpecs(const v1::SweepRequest& request, const v1::Config& config) {
  SweepSpecs out;
  std::vector<v1::ProbeKind>& kinds = out.kinds;
  for (int kind : request.probes()) kinds.push_back(static_cast<v1::ProbeKind>(kind));
  if (kinds.empty()) {
    // A configuration read from a file has its defaults; one built in code may not.
    const v1::Config defaults = DefaultConfig();
    for (const auto& name :
         config.sweep().probes().empty() ? defaults.sweep().probes() : config.sweep().probes()) {
      if (name == "allreduce" || name == "gpu_copy") {
        kinds.push_back(name == "allreduce" ? v1::ALLREDUCE : v1::GPU_COPY);
        continue;
      }
      const probes::ProbeInfo* probe = probes::FindProbeInfo(name);
      if (probe == nullptr) return NotASweepProbe(absl::StrCat("sweep.probes: '", name, "'"));
      kinds.push_back(probe->kind);
    }
  }
  // The group collective runs after the pairs; the rest are pair probes.
  out.allreduce = std::count(kinds.begin(), kinds.end(), v1::ALLREDUCE) > 0;
  kinds.erase(std::remove(kinds.begin(), kinds.end(), v1::ALLREDUCE), kinds.end());
  out.gpu_copy = std::count(kinds.begin(), kinds.end(), v1::GPU_COPY) > 0;
  kinds.erase(std::remove(kinds.begin(), kinds.end(), v1::GPU_COPY), kinds.end());
  for (v1::ProbeKind kind : kinds) {
    if (probes::FindProbeInfo(kind) == nullptr) {
      return NotASweepProbe(absl::StrCat("probes: ", v1::ProbeKind_Name(kind)));
    }
  }
  const bool gpu_asked =
      request.memory() == v1::MEMORY_GPU || request.server_memory() == v1::MEMORY_GPU;
  if (gpu_asked && std::none_of(kinds.begin(), kinds.end(),
                                [](v1::ProbeKind k) { return probes::FindProbeInfo(k)->rdma; })) {
    return absl::InvalidArgumentError(
        "--memory gpu: GPU memory applies to the rdma_* probes; none is asked for");
  }
  out.pair_timeout = FromProto(config.sweep().pair_timeout());
  if (out.gpu_copy) {
    // As `fabricctl check --probes gpu_copy` measures: 64 MiB, 20 copies each way per GPU.
    probes::ProbeParams p;
    p.kind = v1::GPU_COPY;
    p.sizes_bytes = {64u << 20};
    p.iterations = 20;
    p.timeout = out.pair_timeout;
    if (auto s = probes::ValidateParams(p, probes::LimitsFromConfig(config.probes().limits()));
        !s.ok()) {
      return s;
    }
    out.gpu_copy_spec = probes::ToSpec(p);
  }
  ASSIGN_OR_RETURN(out.flows, Flows(request, config));
  for (size_t k = 0; k < kinds.size(); ++k) {
    auto spec = PairSpec(kinds[k], request, config, out.pair_timeout, out.flows);
    if (!spec.ok()) return spec.status();
    out.specs.push_back(*std::move(spec));
    const probes::ProbeInfo* probe = probes::FindProbeInfo(kinds[k]);
    if (probe->measures_bandwidth && out.bw_index < 0) out.bw_index = static_cast<int>(k);
    if (!probe->measures_bandwidth && out.lat_index < 0) out.lat_index = static_cast<int>(k);
    out.rdma_asked = out.rdma_asked || probe->rdma;
  }
  RETURN_IF_ERROR(References(request, out.references));
  if (request.vouched_nodes() > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("vouched_nodes: ", request.vouched_nodes(), ", at most 1000000"));
  }
  out.vouched_nodes = request.vouched_nodes();
  return out;
}

absl::StatusOr<v1::ProbeSpec> AllreduceSpec(const v1::SweepRequest& request,
                                            const v1::Config& config, absl::Duration pair_timeout,
                                            bool nccl, bool rdma) {
  probes::ProbeParams p;
  p.kind = v1::ALLREDUCE;
  if (nccl) p.allreduce_backend = "nccl";
  if (rdma) p.ring_transport = "rdma";
  const v1::Measurement& m = request.measurement();
  if (m.sizes_bytes_size() > 0) {
    p.sizes_bytes.assign(m.sizes_bytes().begin(), m.sizes_bytes().end());
  } else {
    p.sizes_bytes = {4u << 20};
  }
  p.iterations = m.iterations() > 0 ? m.iterations() : 10;
  p.warmup_iterations = m.warmup_iterations() ? m.warmup_iterations() : 2;
  p.timeout = pair_timeout * 2;
  if (auto s = probes::ValidateParams(p, probes::LimitsFromConfig(config.probes().limits()));
      !s.ok()) {
    return s;
  }
  return probes::ToSpec(p);
}

}  // namespace fabricctl::controller::sweep
