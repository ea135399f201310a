#include "controller/sweep/trust.h"

#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/logging.h"
#include "base/utf8.h"
#include "google/protobuf/util/time_util.h"
#include "probes/common/result.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {
namespace {

using google::protobuf::util::TimeUtil;

constexpr uint32_t kMaxGpus = 64;
// A flow's trace: at most the TTLs the agents try (probes/trace/path.h), with room.
constexpr int kMaxHops = 64;

std::string Bounded(const std::string& text, size_t max) {
  std::string out = PrintableText(text);
  if (out.size() > max) {
    out.resize(max);
    out = ValidUtf8(out);  // a cut in the middle of a character becomes U+FFFD
  }
  return out;
}

// Whether `f` may stand as the agent of `node` sent it, after stamping; logs why not.
bool Accept(const std::string& node, v1::Finding* f) {
  const report::FindingKind* kind = report::FindKind(f->kind());
  if (kind == nullptr) {
    Logger("sweep")->warn("{}: dropped a finding of unknown kind '{}'", node,
                          Bounded(f->kind(), 64));
    return false;
  }
  // What one node can know of itself, as the catalogue says (RaisedBy): its audits, its
  // probes' own logs, its link watch. A pair, a link, a switch, the fabric, a comparison with
  // other nodes or the controller's own bookkeeping (drain_given_back, below_reference,
  // config_drift) is the controller's, from every node's figures.
  if (!report::AgentMayRaise(f->kind())) {
    Logger("sweep")->warn("{}: dropped a '{}' finding: only the controller decides those", node,
                          f->kind());
    return false;
  }
  const bool alternate = kind->alternate_severity != v1::SEVERITY_UNSPECIFIED &&
                         f->severity() == kind->alternate_severity &&
                         f->action() == kind->alternate_action;
  f->set_severity(alternate ? kind->alternate_severity : kind->severity);
  f->set_action(alternate ? kind->alternate_action : kind->action);
  f->set_node(node);
  f->clear_peer();
  f->set_detail(Bounded(f->detail(), kMaxFindingText));
  f->set_device(Bounded(f->device(), 256));
  if (f->evidence_size() > kMaxEvidenceEntries) f->clear_evidence();
  google::protobuf::Map<std::string, std::string> evidence;
  for (const auto& [k, v] : f->evidence()) evidence[Bounded(k, 64)] = Bounded(v, 256);
  *f->mutable_evidence() = std::move(evidence);
  return true;
}

bool Finite(double x) { return std::isfinite(x) && x >= 0; }

// The first impossible figure of `r`, or "".
std::string ImpossibleFigure(const v1::ProbeResult& r, double max_gbps, double max_us) {
  for (const auto& p : r.bw()) {
    for (double x : {p.bw_avg_gbps(), p.has_bw_peak_gbps() ? p.bw_peak_gbps() : 0.0}) {
      if (!Finite(x) || x > max_gbps) {
        return absl::StrCat("bandwidth ", x, " Gb/s at ", p.size_bytes(), " bytes (possible: 0 to ",
                            max_gbps, ")");
      }
    }
    if (!Finite(p.msg_rate_mpps())) return absl::StrCat("message rate ", p.msg_rate_mpps());
    if (p.has_segments() != p.has_retransmits() || p.retransmits() > p.segments()) {
      return absl::StrCat(p.retransmits(), " retransmissions of ", p.segments(), " segments");
    }
    if (p.spurious_retransmits() > p.retransmits()) {
      return absl::StrCat(p.spurious_retransmits(), " spurious of ", p.retransmits(),
                          " retransmissions");
    }
    for (const auto& f : p.flows()) {
      if (!Finite(f.bw_gbps()) || f.bw_gbps() > max_gbps) {
        return absl::StrCat("a flow's bandwidth ", f.bw_gbps(), " Gb/s (possible: 0 to ", max_gbps,
                            ")");
      }
    }
  }
  for (const auto& p : r.lat()) {
    for (double x : {p.t_min_us(), p.t_typical_us(), p.t_avg_us(), p.t_max_us(), p.t_p99_us(),
                     p.t_p999_us(), p.t_stdev_us()}) {
      if (!Finite(x) || x > max_us) {
        return absl::StrCat("latency ", x, " us at ", p.size_bytes(), " bytes (possible: up to ",
                            max_us, ")");
      }
    }
    if (p.t_typical_us() <= 0) return absl::StrCat("latency 0 us at ", p.size_bytes(), " bytes");
  }
  for (const auto& p : r.collective()) {
    for (double x : {p.time_us(), p.algbw_gbytes(), p.busbw_gbytes(), p.send_time_us()}) {
      if (!Finite(x) || x > 1e15) {
        return absl::StrCat("all-reduce figure ", x, " at ", p.size_bytes(), " bytes");
      }
    }
    if (p.time_us() > max_us || p.send_time_us() > max_us) {
      return absl::StrCat("all-reduce time ", p.time_us(), " us beyond the deadline");
    }
    // Nothing moves bytes faster than the fabric: a rank's time is at least what it moved at
    // `max_gbps` (twice the fastest link's rate). The all-reduce's own time moves the whole
    // buffer at least once; the timed link carries up to kLinkTimedBytes (0: not timed).
    const double us_per_byte = 8 / (max_gbps * 1e3);
    if (p.time_us() < p.size_bytes() * us_per_byte || (p.size_bytes() > 0 && p.time_us() <= 0)) {
      return absl::StrCat("all-reduce time ", p.time_us(), " us for ", p.size_bytes(),
                          " bytes, faster than ", max_gbps, " Gb/s");
    }
    const double link_bytes =
        static_cast<double>(std::min<uint64_t>(p.size_bytes(), probes::kLinkTimedBytes));
    if (p.send_time_us() != 0 && p.send_time_us() < link_bytes * us_per_byte) {
      return absl::StrCat("link time ", p.send_time_us(), " us for ", link_bytes,
                          " bytes, faster than ", max_gbps, " Gb/s");
    }
    if (p.wrong() > p.size_bytes() / sizeof(float)) {
      return absl::StrCat(p.wrong(), " wrong elements of ", p.size_bytes() / sizeof(float));
    }
    if (p.algbw_gbytes() * 8 > max_gbps || p.busbw_gbytes() * 8 > max_gbps) {
      return absl::StrCat("all-reduce bandwidth ", p.algbw_gbytes(), " GB/s beyond the fabric");
    }
  }
  for (const auto& p : r.copy()) {
    if (!Finite(p.h2d_gbytes()) || !Finite(p.d2h_gbytes()) || p.h2d_gbytes() > 1e4 ||
        p.d2h_gbytes() > 1e4) {
      return absl::StrCat("copy bandwidth of GPU ", p.gpu_index());
    }
  }
  return "";
}

}  // namespace

double MaxPlausibleGbps(double expected_link_rate_gbps) {
  return expected_link_rate_gbps > 0 ? std::min(kBandwidthCeilingGbps, 2 * expected_link_rate_gbps)
                                     : kBandwidthCeilingGbps;
}

int AcceptFindings(const std::string& node,
                   google::protobuf::RepeatedPtrField<v1::Finding>* findings) {
  int dropped = 0;
  google::protobuf::RepeatedPtrField<v1::Finding> kept;
  for (auto& f : *findings) {
    if (kept.size() >= kMaxFindingsPerAnswer || !Accept(node, &f)) {
      ++dropped;
      continue;
    }
    *kept.Add() = std::move(f);
  }
  findings->Swap(&kept);
  return dropped;
}

int AcceptAudits(const std::string& node, std::vector<v1::AuditResult>* audits) {
  int dropped = 0;
  for (auto& audit : *audits) {
    dropped += AcceptFindings(node, audit.mutable_findings());
    v1::AuditResult text_only = audit;
    text_only.clear_findings();
    SanitizeText(&text_only);
    audit.set_audit(text_only.audit());
    audit.set_reason(Bounded(text_only.reason(), kMaxFindingText));
    *audit.mutable_observed() = text_only.observed();
  }
  return dropped;
}

namespace {

// Whether every point of `r` is at a size the spec asked for, at most one a size (a GPU's copy
// points: one a size and GPU); "" or what is wrong.
std::string PointsOutsideSpec(const v1::ProbeResult& r, const v1::ProbeSpec& spec) {
  const std::set<uint64_t> sizes(spec.measurement().sizes_bytes().begin(),
                                 spec.measurement().sizes_bytes().end());
  auto check = [&](const auto& points, const char* what) -> std::string {
    std::set<uint64_t> seen;
    for (const auto& p : points) {
      if (sizes.count(p.size_bytes()) == 0 || !seen.insert(p.size_bytes()).second) {
        return absl::StrCat(what, " at ", p.size_bytes(),
                            " bytes, a size not asked for or given twice");
      }
    }
    return "";
  };
  if (auto bad = check(r.bw(), "bandwidth"); !bad.empty()) return bad;
  // One flow a stream (or queue pair) asked for, each with at most the TTLs a trace tries.
  const uint32_t streams =
      std::max<uint32_t>(1, spec.has_rdma() ? spec.rdma().queue_pairs() : spec.tcp().streams());
  for (const auto& p : r.bw()) {
    if (p.flows_size() > static_cast<int>(streams)) {
      return absl::StrCat(p.flows_size(), " flows of ", streams, " streams asked for");
    }
    for (const auto& f : p.flows()) {
      if (f.hops_size() > kMaxHops)
        return absl::StrCat("a flow's trace of ", f.hops_size(), " hops");
    }
  }
  if (auto bad = check(r.lat(), "latency"); !bad.empty()) return bad;
  if (auto bad = check(r.collective(), "all-reduce"); !bad.empty()) return bad;
  std::set<std::pair<uint32_t, uint64_t>> copies;
  for (const auto& p : r.copy()) {
    if (p.gpu_index() >= kMaxGpus || !copies.insert({p.gpu_index(), p.size_bytes()}).second ||
        (!sizes.empty() && sizes.count(p.size_bytes()) == 0)) {
      return absl::StrCat("copy of GPU ", p.gpu_index(), " at ", p.size_bytes(), " bytes");
    }
  }
  return "";
}

void ClearFigures(v1::ProbeResult* result) {
  result->clear_bw();
  result->clear_lat();
  result->clear_collective();
  result->clear_copy();
}

// The free text of a result within bounds (its reason is bounded by the caller).
void BoundText(v1::ProbeResult* result) {
  result->set_device(Bounded(result->device(), 256));
  result->set_client_memory(Bounded(result->client_memory(), 256));
  result->set_server_memory(Bounded(result->server_memory(), 256));
  v1::NcclTransport* nccl = result->mutable_nccl();
  nccl->set_net(Bounded(nccl->net(), 256));
  if (nccl->evidence_size() > kMaxEvidenceEntries) {
    nccl->mutable_evidence()->DeleteSubrange(kMaxEvidenceEntries,
                                             nccl->evidence_size() - kMaxEvidenceEntries);
  }
  for (auto& line : *nccl->mutable_evidence()) line = Bounded(line, kMaxFindingText);
  if (nccl->peer_transports_size() > 1024) nccl->clear_peer_transports();
  for (auto& point : *result->mutable_bw()) {
    for (auto& f : *point.mutable_flows()) {
      f.set_protocol(Bounded(f.protocol(), 8));
      f.set_source(Bounded(f.source(), 64));
      f.set_destination(Bounded(f.destination(), 64));
      f.set_trace_note(Bounded(f.trace_note(), kMaxFindingText));
      f.set_queue_pair(Bounded(f.queue_pair(), 128));
      for (auto& hop : *f.mutable_hops()) {
        hop.set_address(Bounded(hop.address(), 64));
        hop.set_name(Bounded(hop.name(), 253));  // a DNS name's longest
      }
    }
  }
  if (result->has_effective_spec() && result->effective_spec().ByteSizeLong() > 4096) {
    result->clear_effective_spec();
  }
}

}  // namespace

void AcceptResult(const std::string& node, const v1::ProbeSpec& spec, double max_gbps,
                  v1::ProbeResult* result) {
  AcceptFindings(node, result->mutable_findings());
  SanitizeText(result);
  BoundText(result);
  result->set_reason(Bounded(result->reason(), kMaxFindingText));
  // Figures only of a measurement: a failed, skipped or timed-out probe carries none.
  if (result->outcome() != v1::PROBE_OK) ClearFigures(result);
  if (result->kind() != spec.kind() && result->kind() != v1::PROBE_KIND_UNSPECIFIED) {
    result->set_outcome(v1::PROBE_FAILED);
    result->set_cause(v1::CAUSE_INVALID_FIGURES);
    result->set_reason(absl::StrCat("the agent answered a ", v1::ProbeKind_Name(result->kind()),
                                    " result for a ", v1::ProbeKind_Name(spec.kind()), " probe"));
  }
  result->set_kind(spec.kind());
  if (result->outcome() != v1::PROBE_OK) return;
  const double timeout_us =
      spec.has_timeout() ? static_cast<double>(TimeUtil::DurationToMicroseconds(spec.timeout()))
                         : 3600e6;
  std::string bad = PointsOutsideSpec(*result, spec);
  if (bad.empty()) bad = ImpossibleFigure(*result, max_gbps, std::max(timeout_us, 1.0));
  if (bad.empty()) return;
  Logger("sweep")->warn("{}: a {} result with an impossible figure: {}", node,
                        v1::ProbeKind_Name(spec.kind()), bad);
  result->set_outcome(v1::PROBE_FAILED);
  result->set_cause(v1::CAUSE_INVALID_FIGURES);
  result->set_failed_side(v1::SIDE_CLIENT);
  result->set_reason(absl::StrCat("the agent's figures are impossible: ", bad));
  ClearFigures(result);
}

}  // namespace fabricctl::controller::sweep
