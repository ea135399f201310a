#include "probes/common/params.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/time_util.h"
#include "probes/common/cause.h"
#include "probes/common/sizes.h"

namespace fabricctl::probes {

using google::protobuf::util::TimeUtil;

ProbeLimits LimitsFromConfig(const v1::ProbeLimits& config) {
  ProbeLimits limits;
  if (config.max_message_bytes() > 0) limits.max_message_bytes = config.max_message_bytes();
  if (config.max_total_bytes() > 0) limits.max_total_bytes = config.max_total_bytes();
  if (config.has_max_duration()) {
    limits.max_duration = absl::Nanoseconds(TimeUtil::DurationToNanoseconds(config.max_duration()));
  }
  if (config.max_memory_bytes() > 0) limits.max_memory_bytes = config.max_memory_bytes();
  return limits;
}

absl::Status ValidateRunId(std::string_view run_id) {
  const bool ok = !run_id.empty() && run_id.size() <= kMaxRunIdLength && run_id[0] != '.' &&
                  std::all_of(run_id.begin(), run_id.end(), [](char c) {
                    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                           c == '_' || c == '.';
                  });
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("run_id: 1 to ", kMaxRunIdLength, " of A-Z a-z 0-9 - _ . (it names log files)"));
}

namespace {

// The RDMA settings: queue pairs and their buffers, GID index, depth, GPU memory.
absl::Status ValidateRdma(const ProbeParams& p, const ProbeLimits& limits) {
  auto invalid = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (p.rdma.queue_pairs == 0 || p.rdma.queue_pairs > limits.max_queue_pairs) {
    return invalid("--qps: must be 1 to ", limits.max_queue_pairs);
  }
  // Each queue pair has its own send and receive buffers of the largest size.
  if (!p.sizes_bytes.empty() && p.rdma.queue_pairs > 1 &&
      2.0L * p.sizes_bytes.back() * p.rdma.queue_pairs > limits.max_memory_bytes) {
    return invalid("--qps: ", p.rdma.queue_pairs, " queue pairs of ",
                   FormatSize(p.sizes_bytes.back()), " buffers each way exceed the cap of ",
                   FormatSize(limits.max_memory_bytes), " bytes");
  }
  if (p.rdma.gid_index < -1 || p.rdma.gid_index > 255) {
    return invalid("--gid-index: must be -1 (automatic) or 0-255");
  }
  if (p.rdma.tx_depth > 8192) return invalid("--tx-depth: at most 8192");
  if (p.rdma.gpu_memory && p.kind == v1::RDMA_WRITE_LAT) {
    return invalid(
        "--memory gpu: rdma_write_lat polls its buffer from the CPU; GPU memory "
        "applies to the bandwidth probes and rdma_send_lat");
  }
  if (p.rdma.server_gpu_memory && p.kind == v1::RDMA_WRITE_LAT) {
    return invalid(
        "--memory ...,gpu: rdma_write_lat polls its buffer from the CPU; GPU memory "
        "applies to the bandwidth probes and rdma_send_lat");
  }
  if ((p.rdma.gpu_memory || p.rdma.server_gpu_memory) && p.kind != v1::RDMA_WRITE_BW &&
      p.kind != v1::RDMA_SEND_BW && p.kind != v1::RDMA_READ_BW && p.kind != v1::RDMA_SEND_LAT) {
    return invalid("--memory gpu: RDMA probes only");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateParams(const ProbeParams& p, const ProbeLimits& limits) {
  auto invalid = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (!v1::ProbeKind_IsValid(p.kind) || p.kind == v1::PROBE_KIND_UNSPECIFIED) {
    return invalid("probe kind unspecified");
  }
  if (p.sizes_bytes.empty()) return invalid("--sizes: no message size");
  if (p.allreduce_backend != "ring" && p.allreduce_backend != "nccl") {
    return invalid("allreduce backend: '", p.allreduce_backend, "' is neither ring nor nccl");
  }
  if (p.ring_transport != "tcp" && p.ring_transport != "rdma") {
    return invalid("allreduce ring transport: '", p.ring_transport, "' is neither tcp nor rdma");
  }
  for (uint64_t size : p.sizes_bytes) {
    if (size == 0) return invalid("--sizes: size 0");
    if (size > limits.max_message_bytes) {
      return invalid("--sizes: size ", FormatSize(size), " is above the cap of ",
                     FormatSize(limits.max_message_bytes), " bytes");
    }
  }
  const bool by_time = p.duration > absl::ZeroDuration();
  if (by_time == (p.iterations > 0)) {
    return invalid("--iters and --duration: give exactly one of them");
  }
  if (p.iterations > limits.max_iterations) {
    return invalid("--iters: ", p.iterations, " is above the cap of ", limits.max_iterations);
  }
  if (p.warmup_iterations > limits.max_iterations) {
    return invalid("--warmup: ", p.warmup_iterations, " is above the cap of ",
                   limits.max_iterations);
  }
  if (p.netdev.size() > 15 || p.netdev.find_first_of("/ \t\n") != std::string::npos ||
      p.netdev == "." || p.netdev == "..") {
    return invalid("netdev: '", p.netdev.substr(0, 32), "' is not an interface name");
  }
  if (p.tcp_streams == 0 || p.tcp_streams > limits.max_streams) {
    return invalid("--streams: must be 1 to ", limits.max_streams);
  }
  RETURN_IF_ERROR(ValidateRdma(p, limits));
  if (by_time) {
    absl::Duration total = p.duration * static_cast<double>(p.sizes_bytes.size());
    if (total > limits.max_duration) {
      return invalid("--duration: ", absl::FormatDuration(p.duration), " per size x ",
                     p.sizes_bytes.size(), " sizes exceeds the cap of ",
                     absl::FormatDuration(limits.max_duration));
    }
  }
  // What the probe moves, warm-up included (a warm-up is traffic like any other): by time, the
  // warm-up alone; by count, the warm-up and the measured iterations.
  const long double per_size = static_cast<long double>(p.warmup_iterations) +
                               (by_time ? 0.0L : static_cast<long double>(p.iterations));
  long double total = 0;
  for (uint64_t size : p.sizes_bytes) {
    total += static_cast<long double>(size) * per_size * (p.tcp_streams > 1 ? p.tcp_streams : 1);
  }
  if (total > static_cast<long double>(limits.max_total_bytes)) {
    return invalid(by_time ? "--warmup" : "--iters", ": the probe would move ",
                   static_cast<double>(total / (1ull << 30)),
                   " GiB (warm-up included), above the cap of ", limits.max_total_bytes >> 30,
                   " GiB");
  }
  return absl::OkStatus();
}

v1::ProbeSpec ToSpec(const ProbeParams& p) {
  v1::ProbeSpec spec;
  spec.set_kind(p.kind);
  auto* m = spec.mutable_measurement();
  for (uint64_t size : p.sizes_bytes) m->add_sizes_bytes(size);
  m->set_iterations(static_cast<uint32_t>(p.iterations));
  if (p.duration > absl::ZeroDuration()) {
    *m->mutable_duration() = TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(p.duration));
  }
  m->set_warmup_iterations(static_cast<uint32_t>(p.warmup_iterations));
  if (p.timeout > absl::ZeroDuration()) {
    *spec.mutable_timeout() = TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(p.timeout));
  }
  if (p.kind == v1::TCP_BW || p.kind == v1::TCP_LAT) {
    spec.mutable_tcp()->set_streams(p.tcp_streams);
    spec.mutable_tcp()->set_netdev(p.netdev);
    spec.mutable_tcp()->set_trace_flows(p.trace_flows);
  } else if (p.kind == v1::ALLREDUCE) {
    spec.mutable_allreduce()->set_backend(p.allreduce_backend);
    spec.mutable_allreduce()->set_ring_transport(p.ring_transport);
    auto* r = spec.mutable_allreduce()->mutable_rdma();
    r->set_device(p.rdma.device);
    r->set_port(p.rdma.port);
    r->set_gid_index(p.rdma.gid_index);
    spec.mutable_allreduce()->set_check(true);
  } else {
    auto* r = spec.mutable_rdma();
    r->set_device(p.rdma.device);
    r->set_port(p.rdma.port);
    r->set_gid_index(p.rdma.gid_index);
    r->set_tx_depth(p.rdma.tx_depth);
    r->set_cq_moderation(p.rdma.cq_moderation);
    r->set_inline_bytes(p.rdma.inline_bytes);
    r->set_bidirectional(p.rdma.bidirectional);
    r->set_queue_pairs(p.rdma.queue_pairs);
    r->set_memory(p.rdma.gpu_memory ? v1::MEMORY_GPU : v1::MEMORY_HOST);
    r->set_server_memory(p.rdma.server_gpu_memory ? v1::MEMORY_GPU : v1::MEMORY_HOST);
    r->set_gpu_index(p.rdma.gpu);
    r->set_netdev(p.netdev);
    r->set_nearest_gpu(p.nearest_gpu);
    r->set_trace_flows(p.trace_flows);
  }
  return spec;
}

ProbeParams FromSpec(const v1::ProbeSpec& spec) {
  ProbeParams p;
  p.kind = spec.kind();
  const auto& m = spec.measurement();
  p.sizes_bytes.assign(m.sizes_bytes().begin(), m.sizes_bytes().end());
  p.iterations = m.iterations();
  if (m.has_duration()) {
    p.duration = absl::Nanoseconds(TimeUtil::DurationToNanoseconds(m.duration()));
  }
  p.warmup_iterations = m.warmup_iterations();
  if (spec.has_timeout()) {
    p.timeout = absl::Nanoseconds(TimeUtil::DurationToNanoseconds(spec.timeout()));
  }
  if (spec.has_allreduce()) {
    const auto& a = spec.allreduce();
    if (!a.backend().empty()) p.allreduce_backend = a.backend();
    if (!a.ring_transport().empty()) p.ring_transport = a.ring_transport();
    p.rdma.device = a.rdma().device();
    p.rdma.port = a.rdma().port();
    p.rdma.gid_index = a.rdma().has_gid_index() ? a.rdma().gid_index() : -1;
  }
  if (spec.has_tcp()) {
    p.tcp_streams = std::max<uint32_t>(1, spec.tcp().streams());
    p.netdev = spec.tcp().netdev();
    p.trace_flows = spec.tcp().trace_flows();
  }
  if (spec.has_rdma()) {
    const auto& r = spec.rdma();
    p.rdma.device = r.device();
    p.rdma.port = r.port();
    p.rdma.gid_index = r.has_gid_index() ? r.gid_index() : -1;
    p.rdma.tx_depth = r.tx_depth();
    p.rdma.cq_moderation = r.cq_moderation();
    p.rdma.inline_bytes = r.inline_bytes();
    p.rdma.bidirectional = r.bidirectional();
    p.rdma.queue_pairs = std::max<uint32_t>(1, r.queue_pairs());
    p.rdma.gpu_memory = r.memory() == v1::MEMORY_GPU;
    p.rdma.server_gpu_memory = r.server_memory() == v1::MEMORY_BACKEND_UNSPECIFIED
                                   ? p.rdma.gpu_memory
                                   : r.server_memory() == v1::MEMORY_GPU;
    p.rdma.gpu = r.gpu_index();
    p.netdev = r.netdev();
    p.nearest_gpu = r.nearest_gpu();
    p.trace_flows = r.trace_flows();
  }
  return p;
}

namespace {

void AddFlow(const Flow& f, v1::BwPoint* point) {
  v1::Flow* flow = point->add_flows();
  flow->set_protocol(f.protocol);
  flow->set_source(f.source);
  flow->set_destination(f.destination);
  flow->set_bw_gbps(f.bw_gbps);
  flow->set_traced(f.traced);
  flow->set_trace_note(f.trace_note);
  flow->set_queue_pair(f.queue_pair);
  for (const Hop& h : f.hops) {
    v1::Hop* hop = flow->add_hops();
    hop->set_ttl(h.ttl);
    hop->set_address(h.address);
    hop->set_name(h.name);
  }
}

}  // namespace

v1::ProbeResult ToResult(const ProbeRun& run, const ProbeParams& params) {
  v1::ProbeResult out;
  out.set_kind(params.kind);
  switch (run.outcome) {
    case Outcome::kOk:
      out.set_outcome(v1::PROBE_OK);
      break;
    case Outcome::kSkipped:
      out.set_outcome(v1::PROBE_SKIPPED);
      break;
    case Outcome::kFailed:
      out.set_outcome(v1::PROBE_FAILED);
      break;
    case Outcome::kTimeout:
      out.set_outcome(v1::PROBE_TIMEOUT);
      break;
  }
  out.set_reason(run.reason);
  if (run.outcome == Outcome::kFailed || run.outcome == Outcome::kTimeout) {
    out.set_cause(v1::FailureCause_IsValid(run.cause) ? static_cast<v1::FailureCause>(run.cause)
                                                      : v1::FAILURE_CAUSE_UNSPECIFIED);
    if (out.cause() == v1::FAILURE_CAUSE_UNSPECIFIED) {
      out.set_cause(run.outcome == Outcome::kTimeout ? v1::CAUSE_TIMEOUT : v1::CAUSE_CONNECTION);
    }
    out.set_failed_side(run.server_side ? v1::SIDE_SERVER : v1::SIDE_CLIENT);
  }
  out.set_device(run.device);
  out.set_client_memory(run.client_memory);
  out.set_server_memory(run.server_memory);
  for (const BwPoint& p : run.bw) {
    v1::BwPoint* b = out.add_bw();
    b->set_size_bytes(p.size_bytes);
    b->set_iterations(p.iterations);
    if (p.bw_peak_gbps) b->set_bw_peak_gbps(*p.bw_peak_gbps);
    b->set_bw_avg_gbps(p.bw_avg_gbps);
    b->set_msg_rate_mpps(p.msg_rate_mpps);
    if (p.segments && p.retransmits) {
      b->set_segments(*p.segments);
      b->set_retransmits(*p.retransmits);
      if (p.spurious) b->set_spurious_retransmits(*p.spurious);
    }
    for (const Flow& f : p.flows) AddFlow(f, b);
  }
  for (const LatPoint& p : run.lat) {
    v1::LatPoint* l = out.add_lat();
    l->set_size_bytes(p.size_bytes);
    l->set_iterations(p.iterations);
    l->set_t_min_us(p.t_min_us);
    l->set_t_max_us(p.t_max_us);
    l->set_t_typical_us(p.t_typical_us);
    l->set_t_avg_us(p.t_avg_us);
    l->set_t_stdev_us(p.t_stdev_us);
    l->set_t_p99_us(p.t_p99_us);
    l->set_t_p999_us(p.t_p999_us);
  }
  for (const CollectivePoint& p : run.collective) {
    v1::CollectivePoint* c = out.add_collective();
    c->set_size_bytes(p.size_bytes);
    c->set_time_us(p.time_us);
    c->set_algbw_gbytes(p.algbw_gbytes);
    c->set_busbw_gbytes(p.busbw_gbytes);
    c->set_wrong(p.wrong);
    c->set_send_time_us(p.send_time_us);
  }
  for (const CopyPoint& p : run.copy) {
    v1::CopyPoint* c = out.add_copy();
    c->set_gpu_index(p.gpu_index);
    c->set_size_bytes(p.size_bytes);
    c->set_h2d_gbytes(p.h2d_gbytes);
    c->set_d2h_gbytes(p.d2h_gbytes);
  }
  *out.mutable_elapsed() =
      TimeUtil::NanosecondsToDuration(static_cast<int64_t>(run.elapsed_s * 1e9));
  *out.mutable_effective_spec() = ToSpec(params);
  return out;
}

ProbeRun FailedRun(std::string kind, const absl::Status& status, const std::string& prefix) {
  ProbeRun run;
  run.kind = std::move(kind);
  run.outcome = absl::IsDeadlineExceeded(status) ? Outcome::kTimeout : Outcome::kFailed;
  run.reason = absl::StrCat(prefix, status.message());
  const Cause cause = CauseOf(status);
  run.cause = cause.cause;
  run.server_side = cause.side == v1::SIDE_SERVER;
  return run;
}

bool SameMeasurement(const v1::ProbeSpec& a, const v1::ProbeSpec& b) {
  // Every field, in the form both halves derive from the controller's spec (defaults applied
  // alike), so that a hello cannot change a depth, a moderation or a deadline either.
  std::string x, y;
  google::protobuf::io::StringOutputStream xs(&x), ys(&y);
  {
    google::protobuf::io::CodedOutputStream xc(&xs), yc(&ys);
    xc.SetSerializationDeterministic(true);
    yc.SetSerializationDeterministic(true);
    // Which device, port and GPU a half uses is that half's own (on a rail, each node resolves
    // its rail's device and nearest GPU): not part of what is measured.
    auto normal = [](const v1::ProbeSpec& spec) {
      v1::ProbeSpec out = ToSpec(FromSpec(spec));
      if (out.has_rdma()) {
        out.mutable_rdma()->clear_device();
        out.mutable_rdma()->clear_port();
        out.mutable_rdma()->clear_gpu_index();
      }
      return out;
    };
    normal(a).SerializeToCodedStream(&xc);
    normal(b).SerializeToCodedStream(&yc);
  }
  return x == y;
}

}  // namespace fabricctl::probes
