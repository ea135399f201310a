#include "probes/rdma/rdma_probes.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "probes/common/stats.h"
#include "probes/rdma/port_counters.h"
#include "probes/rdma/session.h"

namespace fabricctl::probes {
using namespace rdma_internal;  // NOLINT: this probe family's own helpers
namespace {

// One size's bandwidth loop: the verb, the message size, how many may be in flight and how often
// one is signaled; with `stop_ns` (perftest -D), posting stops at that time. Posts and
// completions are recorded where asked.
struct BwLoop {
  RdmaVerb verb;
  uint64_t size = 0;
  uint32_t tx_depth = 1;
  uint32_t cq_mod = 1;
  int64_t stop_ns = 0;
  std::vector<int64_t>* posted_ns = nullptr;
  std::vector<Completion>* completions = nullptr;
};

// The bandwidth loop of perftest's run_iter_bw for one size. With `loop.stop_ns`, `messages` is
// only a bound: posting stops at that time, the last message posted is signaled so that every
// completion is seen, and `*sent` says how many went.
absl::Status RunBwLoop(RdmaEndpoint& ep, const BwLoop& loop, uint64_t messages,
                       uint64_t* sent = nullptr) {
  const RdmaVerb verb = loop.verb;
  const uint64_t size = loop.size;
  const uint32_t tx_depth = loop.tx_depth, cq_mod = loop.cq_mod;
  const int64_t stop_ns = loop.stop_ns;
  std::vector<int64_t>* posted_ns = loop.posted_ns;
  std::vector<Completion>* completions = loop.completions;
  int64_t deadline =
      NowNs() + absl::ToInt64Nanoseconds(size_timeout) + std::max<int64_t>(0, stop_ns - NowNs());
  uint64_t posted = 0, completed = 0;
  uint32_t idle_polls = 0;
  ibv_wc wc[16];
  while (completed < messages) {
    if (current_cancel != nullptr && current_cancel->cancelled()) {
      return absl::CancelledError("probe cancelled");
    }
    while (posted < messages && posted - completed < tx_depth) {
      if (stop_ns != 0 && NowNs() >= stop_ns) messages = posted + 1;  // this one is the last
      const bool signaled = (posted + 1) % cq_mod == 0 || posted + 1 == messages;
      if (posted_ns) posted_ns->push_back(NowNs());
      absl::Status s = verb == RdmaVerb::kWrite  ? ep.PostWrite(size, posted, signaled)
                       : verb == RdmaVerb::kRead ? ep.PostRead(size, posted, signaled)
                                                 : ep.PostSend(size, posted, signaled);
      if (!s.ok()) return s;
      ++posted;
    }
    int n = ep.PollSend(wc, 16);
    if (n > 0)
      deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout) +
                 std::max<int64_t>(0, stop_ns - NowNs());
    if (n < 0) return absl::InternalError("ibv_poll_cq failed");
    if (n == 0) {
      if ((++idle_polls & 4095) == 0 && NowNs() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "no completion within ", absl::FormatDuration(size_timeout), " (peer gone?)"));
      }
      continue;
    }
    const int64_t now = NowNs();
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i]);
      completed = wc[i].wr_id + 1;  // unsignaled predecessors completed with it
      if (completions) completions->push_back({wc[i].wr_id, now});
    }
  }
  if (sent) *sent = posted;
  return absl::OkStatus();
}

}  // namespace

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

// One size of a bandwidth probe from this side: warm-up, then the measured loop, with
// perftest's CQ moderation rule (100, and 1 above 8 KiB, never above the TX depth).
absl::Status MeasureBw(RdmaEndpoint& ep, RdmaVerb verb, uint64_t size, const ProbeParams& params,
                       BwPoint* point, uint64_t* sent = nullptr) {
  const bool by_time = params.duration > absl::ZeroDuration();
  uint64_t tx_depth = params.rdma.tx_depth ? params.rdma.tx_depth : kDefaultTxDepthBw;
  if (!by_time) tx_depth = std::min<uint64_t>(tx_depth, params.iterations);
  uint32_t cq_mod = params.rdma.cq_moderation;
  if (cq_mod == 0) cq_mod = size > kCqModerationSizeLimit ? 1 : kDefaultCqModeration;
  cq_mod = std::max<uint32_t>(1, std::min<uint32_t>(cq_mod, static_cast<uint32_t>(tx_depth)));
  uint64_t warm = 0;
  if (params.warmup_iterations > 0) {
    const BwLoop warmup{verb, size, static_cast<uint32_t>(tx_depth), cq_mod};
    if (auto s = RunBwLoop(ep, warmup, params.warmup_iterations, &warm); !s.ok()) {
      return s;
    }
  }
  std::vector<int64_t> posted_ns;
  std::vector<Completion> completions;
  uint64_t measured = params.iterations;
  if (by_time) {
    // perftest -D: as many messages as fit in the duration; the bound only guards the loop.
    measured = std::numeric_limits<uint64_t>::max();
    posted_ns.reserve(1 << 16);
  } else {
    posted_ns.reserve(params.iterations);
  }
  const int64_t stop_ns = by_time ? NowNs() + absl::ToInt64Nanoseconds(params.duration) : 0;
  const BwLoop loop{verb,        size,    static_cast<uint32_t>(tx_depth),
                    cq_mod,      stop_ns, by_time ? nullptr : &posted_ns,
                    &completions};
  if (auto s = RunBwLoop(ep, loop, measured, &measured); !s.ok()) {
    return s;
  }
  if (sent) *sent = warm + measured;
  if (by_time) {
    // Time from the start of the loop to the last completion: what perftest -D divides by.
    const int64_t started = stop_ns - absl::ToInt64Nanoseconds(params.duration);
    *point = AverageBandwidth(size, measured, completions.back().time_ns - started);
    return absl::OkStatus();
  }
  *point =
      AverageBandwidth(size, params.iterations, completions.back().time_ns - posted_ns.front());
  if (params.iterations <= kMaxItersForPeak) {
    point->bw_peak_gbps = PeakBandwidthGbps(size, posted_ns, completions);
  }
  return absl::OkStatus();
}

// The receiving half of SEND for one size: receives posted before the sender starts, and
// reposted as they complete, for every message of the size (warm-up and iterations), or by
// duration until the sender says on the control connection how many it sent. By duration the
// receives are posted at the largest size, so that those a size leaves posted serve the next;
// `outstanding` counts them across sizes.
class SendReceiver {
 public:
  SendReceiver(RdmaEndpoint& ep, const ProbeParams& params) : ep_(ep), params_(params) {}

  // Before the sender starts: the first receives.
  absl::Status Prepare() {
    by_time_ = params_.duration > absl::ZeroDuration();
    expected_ = by_time_ ? std::numeric_limits<uint64_t>::max()
                         : params_.warmup_iterations + params_.iterations;
    received_ = 0;
    return PostMore();
  }

  // Until every message of the size has arrived.
  absl::Status Receive(int control) {
    int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout + params_.duration);
    ibv_wc wc[16];
    uint32_t idle = 0;
    while (received_ < expected_) {
      int n = ep_.PollRecv(wc, 16);
      if (n < 0) return absl::InternalError("ibv_poll_cq failed");
      if (n == 0) {
        if ((++idle & 1023) != 0) continue;
        if (by_time_ && expected_ == std::numeric_limits<uint64_t>::max() &&
            net::Readable(control)) {
          v1::ProbeHello done;
          RETURN_IF_ERROR(net::RecvFrame(control, &done, absl::Now() + kControlTimeout));
          expected_ = done.messages();
        }
        if (current_cancel != nullptr && current_cancel->cancelled()) {
          return absl::CancelledError("probe cancelled");
        }
        if (NowNs() > deadline) return absl::DeadlineExceededError("receive: no message");
        continue;
      }
      deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i]);
        ++received_;
        --outstanding_;
      }
      RETURN_IF_ERROR(PostMore());
    }
    return absl::OkStatus();
  }

 private:
  absl::Status PostMore() {
    const uint64_t length = MaxSize(params_);
    while (outstanding_ < kRxDepthSend && received_ + outstanding_ < expected_) {
      RETURN_IF_ERROR(ep_.PostRecv(length, next_id_++));
      ++outstanding_;
    }
    return absl::OkStatus();
  }

  RdmaEndpoint& ep_;
  const ProbeParams& params_;
  bool by_time_ = false;
  uint64_t expected_ = 0, received_ = 0, next_id_ = 0, outstanding_ = 0;
};

// Both directions at once (perftest -b), this side's half: its own loop towards the peer, and
// for SEND the peer's messages received meanwhile on a thread of their own (their completions
// come on the receive queue's own CQ). By duration, this side says how many it sent before it
// waits for the peer's messages to be counted.
struct Peer {
  int control = -1;
  SendReceiver* receiver = nullptr;  // SEND: the peer's messages to this side
};
absl::Status MeasureBothWays(RdmaEndpoint& ep, RdmaVerb verb, uint64_t size,
                             const ProbeParams& params, const Peer& peer, BwPoint* point) {
  const int control = peer.control;
  SendReceiver* receiver = peer.receiver;
  absl::Status received;
  std::thread receiving;
  if (receiver != nullptr) receiving = std::thread([&] { received = receiver->Receive(control); });
  uint64_t sent = 0;
  absl::Status measured = MeasureBw(ep, verb, size, params, point, &sent);
  if (measured.ok() && receiver != nullptr && params.duration > absl::ZeroDuration()) {
    v1::ProbeHello done;
    done.set_messages(sent);
    measured = net::SendFrame(control, done, absl::Now() + kControlTimeout);
  }
  if (receiving.joinable()) receiving.join();
  RETURN_IF_ERROR(measured);
  return received;
}

// Runs `each(q)` for every queue pair at once, one thread each beyond the first; the first
// error wins.
absl::Status ForEachQp(size_t n, const std::function<absl::Status(size_t)>& each) {
  std::vector<absl::Status> status(n);
  std::vector<std::thread> threads;
  for (size_t q = 1; q < n; ++q) threads.emplace_back([&, q] { status[q] = each(q); });
  status[0] = each(0);
  for (auto& t : threads) t.join();
  for (const auto& s : status) RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

// The queue pairs' points as one, as perftest -q reports them: bandwidths, message rates and
// messages summed. No peak over several: each queue pair's peak came at its own moment, and
// their sum would be a figure no window measured.
BwPoint SumPoints(const std::vector<BwPoint>& points) {
  BwPoint sum = points[0];
  for (size_t q = 1; q < points.size(); ++q) {
    sum.bw_avg_gbps += points[q].bw_avg_gbps;
    sum.msg_rate_mpps += points[q].msg_rate_mpps;
    sum.iterations += points[q].iterations;
    sum.bw_peak_gbps.reset();
  }
  return sum;
}

// Each queue pair as a flow of its own (RoCE v2 gives each its own UDP source port, which
// equal-cost routing hashes): named by its device and the two queue pair numbers.
std::vector<Flow> QpFlows(const std::vector<RdmaEndpoint*>& eps,
                          const std::vector<uint32_t>& server_qpns,
                          const std::vector<BwPoint>& points) {
  std::vector<Flow> flows;
  for (size_t q = 0; q < eps.size(); ++q) {
    Flow f;
    f.protocol = "roce";
    f.source = absl::StrCat(eps[q]->label(), " qp ", eps[q]->LocalInfo().qpn());
    f.destination = q < server_qpns.size() ? absl::StrCat("qp ", server_qpns[q]) : "";
    f.bw_gbps = points[q].bw_avg_gbps;
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
  std::vector<std::unique_ptr<RdmaEndpoint>>& eps = *ep;
  std::vector<SendReceiver> receivers;
  for (auto& e : eps) receivers.emplace_back(*e, params);
  return ServeMeetings(
      connection.get(),
      [&](uint64_t size) -> absl::Status {
        // WRITE and READ need nothing from this side; SEND needs its receives posted first.
        for (auto& r : receivers) {
          if (send) RETURN_IF_ERROR(r.Prepare());
        }
        if (auto s =
                net::SendFrame(connection.get(), v1::ProbeWelcome(), absl::Now() + kControlTimeout);
            !s.ok()) {
          return s;
        }
        if (params.rdma.bidirectional) {
          // Both directions at once (perftest -b): this side runs the same loop towards the
          // client on every queue pair and reports its own figures, which the client adds to its
          // own. (SEND both ways: one queue pair, CheckSupported.)
          std::vector<BwPoint> points(eps.size());
          RETURN_IF_ERROR(ForEachQp(eps.size(), [&](size_t q) {
            return MeasureBothWays(*eps[q], verb_, size, params,
                                   {connection.get(), send ? &receivers[q] : nullptr}, &points[q]);
          }));
          const BwPoint point = SumPoints(points);
          v1::ProbeResult mine;
          mine.add_bw()->set_bw_avg_gbps(point.bw_avg_gbps);
          mine.mutable_bw(0)->set_msg_rate_mpps(point.msg_rate_mpps);
          mine.mutable_bw(0)->set_iterations(point.iterations);
          if (point.bw_peak_gbps) mine.mutable_bw(0)->set_bw_peak_gbps(*point.bw_peak_gbps);
          return net::SendFrame(connection.get(), mine, absl::Now() + kControlTimeout);
        }
        if (!send) return absl::OkStatus();
        return ForEachQp(receivers.size(),
                         [&](size_t q) { return receivers[q].Receive(connection.get()); });
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
  SendReceiver receiver(ep, params);       // bidirectional SEND: the server's messages to this side
  std::vector<RdmaEndpoint*> eps = {&ep};  // every queue pair (--qps)
  for (auto& more : session->more) eps.push_back(more.get());
  for (uint64_t size : params.sizes_bytes) {
    if (both_sends) {
      if (auto s = receiver.Prepare(); !s.ok()) return Finish(run, s);
    }
    if (auto s = Meet(session->control.get(), size); !s.ok()) return Finish(run, s);
    BwPoint point;
    uint64_t sent = 0;
    // WRITE and SEND carry the data from this side: its port's retransmissions are the path's
    // loss (READ's data comes from the server's port).
    const bool sender = verb_ != RdmaVerb::kRead;
    const auto before = sender ? ReadPortCounters(kSystem, device, port) : std::nullopt;
    std::vector<BwPoint> points(eps.size());
    std::vector<uint64_t> sent_by(eps.size(), 0);
    const absl::Status measured = ForEachQp(eps.size(), [&](size_t q) {
      return params.rdma.bidirectional
                 ? MeasureBothWays(*eps[q], verb_, size, params,
                                   {session->control.get(), both_sends ? &receiver : nullptr},
                                   &points[q])
                 : MeasureBw(*eps[q], verb_, size, params, &points[q], &sent_by[q]);
    });
    if (!measured.ok()) return Finish(run, measured);
    point = SumPoints(points);
    sent = sent_by[0];
    if (eps.size() > 1) point.flows = QpFlows(eps, session->server_qpns, points);
    if (const auto loss =
            sender ? LossBetween(before, ReadPortCounters(kSystem, device, port)) : std::nullopt;
        loss && loss->packets > 0 && loss->retransmits <= loss->packets) {  // else other traffic's
      point.segments = loss->packets;
      point.retransmits = loss->retransmits;
    }
    if (verb_ == RdmaVerb::kSend && !params.rdma.bidirectional &&
        params.duration > absl::ZeroDuration()) {
      // The server counts receives until it has them all.
      v1::ProbeHello done;
      done.set_messages(sent);
      if (auto s = net::SendFrame(session->control.get(), done, absl::Now() + kControlTimeout);
          !s.ok()) {
        return Finish(run, s);
      }
    }
    if (params.rdma.bidirectional) {
      if (auto s = AddServerHalf(session->control.get(), &point); !s.ok()) return Finish(run, s);
    }
    run.bw.push_back(point);
  }
  EndSession(session->control.get());
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  return Finish(run, absl::OkStatus());
}

}  // namespace fabricctl::probes
