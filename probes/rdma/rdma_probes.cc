#include "probes/rdma/rdma_probes.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "probes/common/stats.h"
#include "probes/rdma/bw_loop.h"
#include "probes/rdma/port_counters.h"
#include "probes/rdma/roce_port.h"
#include "probes/rdma/session.h"
#include "probes/trace/path.h"

namespace fabricctl::probes {
using namespace rdma_internal;  // NOLINT: this probe family's own helpers

v1::ProbeKind RdmaBwProbe::kind() const {
  return verb_ == RdmaVerb::kWrite  ? v1::RDMA_WRITE_BW
         : verb_ == RdmaVerb::kRead ? v1::RDMA_READ_BW
                                    : v1::RDMA_SEND_BW;
}
const char* RdmaBwProbe::name() const {
  return verb_ == RdmaVerb::kWrite  ? "rdma_write_bw"
         : verb_ == RdmaVerb::kRead ? "rdma_read_bw"
                                    : "rdma_send_bw";
}
const char* RdmaBwProbe::title() const {
  return verb_ == RdmaVerb::kWrite  ? "RDMA_Write BW Test"
         : verb_ == RdmaVerb::kRead ? "RDMA_Read BW Test"
                                    : "Send BW Test";
}

namespace {

// How the queue pairs' flows are named: the driver's source-port rule, and whether they are to
// be traced (then a flow that cannot be says why).
struct FlowNaming {
  SourcePortRule rule = SourcePortRule::kUnknown;
  std::string driver;
  bool trace = false;
};

// Each queue pair as a flow of its own (RoCE v2 gives each its own UDP source port, which
// equal-cost routing hashes): its 5-tuple where the driver's rule for the source port is known
// (roce_port.h), else named by its device and queue pair number.
std::vector<Flow> QpFlows(const std::vector<RdmaEndpoint*>& eps,
                          const std::vector<v1::RdmaQpInfo>& server_qps,
                          const std::vector<double>& gbps, const FlowNaming& naming) {
  std::vector<Flow> flows;
  for (size_t q = 0; q < eps.size(); ++q) {
    Flow f;
    f.protocol = "roce";
    const v1::RdmaQpInfo mine = eps[q]->LocalInfo();
    const v1::RdmaQpInfo* peer = q < server_qps.size() ? &server_qps[q] : nullptr;
    f.queue_pair = absl::StrCat(eps[q]->label(), " qp ", mine.qpn(), " > qp ",
                                peer != nullptr ? absl::StrCat(peer->qpn()) : "?");
    const auto source = eps[q]->roce_v2() ? Ipv4OfGid(mine.gid()) : std::nullopt;
    const auto destination = peer != nullptr ? Ipv4OfGid(peer->gid()) : std::nullopt;
    const auto port =
        peer != nullptr ? RoceSourcePort(naming.rule, mine.qpn(), peer->qpn()) : std::nullopt;
    if (source && destination && port) {
      f.source = absl::StrCat(*source, ":", *port);
      f.destination = absl::StrCat(*destination, ":4791");
    } else {
      f.source = absl::StrCat(eps[q]->label(), " qp ", mine.qpn());
      f.destination = peer != nullptr ? absl::StrCat("qp ", peer->qpn()) : "";
      if (naming.trace) {
        f.trace_note =
            peer == nullptr ? "not traced: the server sent no queue pair for it"
            : !eps[q]->roce_v2() || !source || !destination
                ? "not traced: not RoCE v2 over IPv4"
                : absl::StrCat("not traced: the UDP source port of the queue pairs of driver ",
                               naming.driver.empty() ? "(unknown)" : naming.driver,
                               " is not known");
      }
    }
    f.bw_gbps = q < gbps.size() ? gbps[q] : 0;
    flows.push_back(std::move(f));
  }
  return flows;
}

// Both ways: perftest -b sums the two sides' figures; the server's come on the control
// connection.
absl::Status AddServerHalf(int control, BwPoint* point) {
  v1::ProbeResult theirs;
  RETURN_IF_ERROR(net::RecvFrame(control, &theirs, absl::Now() + size_timeout));
  if (theirs.bw_size() != 1) {
    return absl::InvalidArgumentError("server sent no bidirectional figures");
  }
  point->bw_avg_gbps += theirs.bw(0).bw_avg_gbps();
  point->msg_rate_mpps += theirs.bw(0).msg_rate_mpps();
  if (point->bw_peak_gbps && theirs.bw(0).has_bw_peak_gbps()) {
    *point->bw_peak_gbps += theirs.bw(0).bw_peak_gbps();
  } else {
    point->bw_peak_gbps.reset();
  }
  point->iterations += theirs.bw(0).iterations();
  return absl::OkStatus();
}

}  // namespace

absl::Status RdmaBwProbe::Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                                const ServeContext& context) const {
  const ScopedSizeTimeout bound(FromSpec(hello.spec()), context.cancel);
  const bool send = verb_ == RdmaVerb::kSend;
  auto ep = AcceptSession(connection.get(), hello, context, /*bandwidth=*/true, send);
  if (!ep.ok()) return ep.status();
  const ProbeParams params = FromSpec(hello.spec());
  std::vector<RdmaEndpoint*> eps;
  for (auto& e : *ep) eps.push_back(e.get());
  std::vector<SendReceiver> receivers;
  for (RdmaEndpoint* e : eps) receivers.emplace_back(*e, params);
  const bool by_time = params.duration > absl::ZeroDuration();
  const int control = connection.get();
  return ServeMeetings(
      control,
      [&](uint64_t size) -> absl::Status {
        // WRITE and READ need nothing from this side; SEND needs its receives posted first.
        for (auto& r : receivers) {
          if (send) RETURN_IF_ERROR(r.Prepare());
        }
        RETURN_IF_ERROR(net::SendFrame(control, v1::ProbeWelcome(), absl::Now() + kControlTimeout));
        if (!params.rdma.bidirectional) {
          return send ? ReceiveAll(receivers, control, params) : absl::OkStatus();
        }
        // Both directions at once (perftest -b): this side runs the same loop towards the
        // client, serving the client's SENDs between its own posts, and reports its own
        // figures, which the client adds to its own.
        BwResult mine;
        RETURN_IF_ERROR(MeasureBw(eps, verb_, size, params, send ? &receivers : nullptr, &mine));
        if (send && by_time) RETURN_IF_ERROR(TellSent(control, mine));
        if (send) RETURN_IF_ERROR(ReceiveAll(receivers, control, params));
        v1::ProbeResult result;
        v1::BwPoint* b = result.add_bw();
        b->set_bw_avg_gbps(mine.point.bw_avg_gbps);
        b->set_msg_rate_mpps(mine.point.msg_rate_mpps);
        b->set_iterations(mine.point.iterations);
        if (mine.point.bw_peak_gbps) b->set_bw_peak_gbps(*mine.point.bw_peak_gbps);
        return net::SendFrame(control, result, absl::Now() + kControlTimeout);
      },
      params.duration);
}

ProbeRun RdmaBwProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  const ScopedSizeTimeout bound(params, params.cancel);
  ProbeRun run;
  run.kind = name();
  if (auto s = CheckSupported(params, /*bidirectional_ok=*/true); !s.ok()) return Finish(run, s);
  const absl::Time started = absl::Now();
  auto session = OpenSession(params, server, /*bandwidth=*/true, verb_ == RdmaVerb::kSend);
  if (!session.ok()) return Finish(run, session.status());
  RdmaEndpoint& ep = *session->endpoint;
  run.device = ep.label();
  // The port's counters: the label's "mlx5_0:1" (before any ", gpu ...") is device and port.
  static const SysfsRoot kSystem;
  const std::string port_label = run.device.substr(0, run.device.find(','));
  const std::string device = port_label.substr(0, port_label.rfind(':'));
  uint32_t port = 1;
  if (!absl::SimpleAtoi(port_label.substr(port_label.rfind(':') + 1), &port)) port = 1;
  run.client_memory = ep.memory_label();
  run.server_memory = session->server_memory;
  run.setup = ep.Setup();
  if (params.rdma.bidirectional) run.setup.push_back({"Bidirectional", "ON (both sides summed)"});
  const bool both_sends = params.rdma.bidirectional && verb_ == RdmaVerb::kSend;
  std::vector<RdmaEndpoint*> eps = {&ep};  // every queue pair (--qps)
  for (auto& more : session->more) eps.push_back(more.get());
  std::vector<SendReceiver> receivers;  // bidirectional SEND: the server's messages to this side
  if (both_sends) {
    for (RdmaEndpoint* e : eps) receivers.emplace_back(*e, params);
  }
  const int control = session->control.get();
  const std::string driver = DriverOf(kSystem, device);
  const FlowNaming naming{RuleOfDriver(driver), driver, params.trace_flows};
  for (uint64_t size : params.sizes_bytes) {
    for (auto& r : receivers) {
      if (auto s = r.Prepare(); !s.ok()) return Finish(run, s);
    }
    if (auto s = Meet(control, size); !s.ok()) return Finish(run, s);
    // WRITE and SEND carry the data from this side: its port's retransmissions are the path's
    // loss (READ's data comes from the server's port).
    const bool sender = verb_ != RdmaVerb::kRead;
    const auto before = sender ? ReadPortCounters(kSystem, device, port) : std::nullopt;
    BwResult mine;
    if (auto s = MeasureBw(eps, verb_, size, params, both_sends ? &receivers : nullptr, &mine);
        !s.ok()) {
      return Finish(run, s);
    }
    BwPoint point = mine.point;
    if (eps.size() > 1 || params.trace_flows)
      point.flows = QpFlows(eps, session->server_qps, mine.per_qp_gbps, naming);
    if (const auto loss =
            sender ? LossBetween(before, ReadPortCounters(kSystem, device, port)) : std::nullopt;
        loss && loss->packets > 0 && loss->retransmits <= loss->packets) {  // else other traffic's
      point.segments = loss->packets;
      point.retransmits = loss->retransmits;
    }
    // By duration the server counts this side's SENDs until it has as many as it is told; both
    // ways, this side then serves the server's until it has the count it is told.
    absl::Status s;
    if (verb_ == RdmaVerb::kSend && params.duration > absl::ZeroDuration())
      s = TellSent(control, mine);
    if (s.ok() && both_sends) s = ReceiveAll(receivers, control, params);
    if (s.ok() && params.rdma.bidirectional) s = AddServerHalf(control, &point);
    if (!s.ok()) return Finish(run, s);
    run.bw.push_back(point);
  }
  EndSession(session->control.get());
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  if (params.trace_flows && !run.bw.empty()) {
    // The datagrams leave by the interface the queue pairs' packets do: the GID's.
    TraceFlows(run.bw.back().flows, params.cancel,
               GidNetdev(kSystem, ep.device_name(), ep.port(), ep.gid_index()));
  }
  return Finish(run, absl::OkStatus());
}

}  // namespace fabricctl::probes
