#ifndef FABRICCTL_PROBES_RDMA_SESSION_H_
#define FABRICCTL_PROBES_RDMA_SESSION_H_

// What the RDMA probes share: perftest's defaults, the per-probe-thread bounds, completion
// polling, and the out-of-band session (handshake, per-size meetings, bye). Internal to
// probes/rdma (rdma_probes.cc, rdma_lat_probe.cc).

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/socket.h"
#include "base/status_macros.h"
#include "probes/common/cancel.h"
#include "probes/common/cause.h"
#include "probes/common/params.h"
#include "probes/probe.h"
#include "probes/rdma/endpoint.h"
#include "probes/rdma/gpu_memory.h"

namespace fabricctl::probes::rdma_internal {

// perftest's defaults (src/perftest_parameters.h).
constexpr uint32_t kDefaultTxDepthBw = 128;
constexpr uint32_t kDefaultCqModeration = 100;
constexpr uint64_t kCqModerationSizeLimit = 8192;  // MSG_SIZE_CQ_MOD_LIMIT
constexpr uint32_t kRxDepthSend = 512;
constexpr uint64_t kMaxItersForPeak = 20000;
// One size of a sweep may take this long on top of nothing: soft-RoCE in an emulated VM is
// slow, so the bound is generous; it exists so that a dead peer cannot hang a probe.
constexpr absl::Duration kDefaultSizeTimeout = absl::Minutes(2);
// The bound on one size, and on waiting at the out-of-band meetings, for this thread's probe
// (set from ProbeParams::timeout when given).
inline thread_local absl::Duration size_timeout =
    kDefaultSizeTimeout;  // NOLINT: per-probe-thread bound

// This thread's probe's cancellation (set with the size bound), checked by the spinning loops.
inline thread_local const Cancellation* current_cancel = nullptr;  // NOLINT: per-probe-thread

class ScopedSizeTimeout {
 public:
  ScopedSizeTimeout(const ProbeParams& p, const Cancellation* cancel) {
    size_timeout = p.timeout > absl::ZeroDuration() ? std::min(p.timeout, kDefaultSizeTimeout)
                                                    : kDefaultSizeTimeout;
    current_cancel = cancel;
  }
  ~ScopedSizeTimeout() {
    size_timeout = kDefaultSizeTimeout;
    current_cancel = nullptr;
  }
};
constexpr absl::Duration kControlTimeout = absl::Seconds(30);

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline absl::Status CompletionError(const ibv_wc& wc) {
  return absl::InternalError(absl::StrCat("completion with error: ", ibv_wc_status_str(wc.status),
                                          " (status ", static_cast<int>(wc.status),
                                          ", vendor syndrome 0x", absl::Hex(wc.vendor_err), ")"));
}

// Spins until `ready()` or the deadline. The clock is read every 4096 spins only, never on the
// first: a ping-pong answered at once must not pay for a clock read (under emulation one costs
// as much as the whole poll).
template <typename Ready>
absl::Status SpinUntil(Ready ready, int64_t deadline_ns, const char* what) {
  for (uint32_t spins = 1;; ++spins) {
    if (ready()) return absl::OkStatus();
    if ((spins & 4095) == 0 && current_cancel != nullptr && current_cancel->cancelled()) {
      return absl::CancelledError(absl::StrCat(what, ": probe cancelled"));
    }
    if ((spins & 4095) == 0 && NowNs() > deadline_ns) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, ": no progress within ", absl::FormatDuration(size_timeout)));
    }
  }
}

// Waits for `count` completions on the send (or receive) CQ.
inline absl::Status Reap(RdmaEndpoint& ep, bool receive, int count, int64_t deadline_ns) {
  ibv_wc wc[16];
  int got = 0;
  absl::Status error;
  auto ready = [&] {
    int n = receive ? ep.PollRecv(wc, std::min(16, count - got))
                    : ep.PollSend(wc, std::min(16, count - got));
    if (n < 0) {
      error = absl::InternalError("ibv_poll_cq failed");
      return true;
    }
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        error = CompletionError(wc[i]);
        return true;
      }
    }
    got += n;
    return got >= count;
  };
  RETURN_IF_ERROR(SpinUntil(ready, deadline_ns, receive ? "receive" : "send"));
  return error;
}

inline uint64_t MaxSize(const ProbeParams& p) {
  return *std::max_element(p.sizes_bytes.begin(), p.sizes_bytes.end());
}

inline EndpointOptions OptionsFor(const RdmaParams& selection, const ProbeParams& p, bool bandwidth,
                                  bool send_verb) {
  EndpointOptions o;
  o.selection = selection;
  o.message_bytes = MaxSize(p);
  o.send_depth = bandwidth ? (p.rdma.tx_depth ? p.rdma.tx_depth : kDefaultTxDepthBw) : 2;
  o.recv_depth = send_verb ? (bandwidth ? kRxDepthSend : 2) : 1;
  if (selection.gpu_memory) {  // this side's choice, as perftest's --use_cuda
    const uint32_t gpu = selection.gpu;
    o.allocate = [gpu](size_t bytes) { return AllocateGpuMemory(gpu, bytes); };
  }
  return o;
}

inline ProbeRun Finish(ProbeRun run, const absl::Status& status) {
  if (status.ok()) {
    run.outcome = Outcome::kOk;
    return run;
  }
  run.bw.clear();
  run.lat.clear();
  run.reason = std::string(status.message());
  if (absl::IsNotFound(status) || absl::IsResourceExhausted(status)) {
    run.outcome = Outcome::kSkipped;  // no device here, or memlock too low
    return run;
  }
  run.outcome = absl::IsDeadlineExceeded(status) ? Outcome::kTimeout : Outcome::kFailed;
  const Cause cause = CauseOf(status);
  run.cause = cause.cause;
  run.server_side = cause.side == v1::SIDE_SERVER;
  return run;
}

// Client side of the out-of-band handshake: open the endpoint, send its queue pair, connect to
// the server's. The connection stays open for the per-size meetings.
struct ClientSession {
  net::UniqueFd control;
  std::optional<WatchedFd> watched;  // after `control`: unregistered before it closes
  std::unique_ptr<RdmaEndpoint> endpoint;
  // Queue pairs 2..N (--qps, perftest -q): each an endpoint of its own, connected to the
  // server's same-numbered one.
  std::vector<std::unique_ptr<RdmaEndpoint>> more;
  std::vector<v1::RdmaQpInfo> server_qps;  // the server's queue pairs, in the same order
  std::string server_memory;               // where the server's buffers are, as it said
};

inline absl::StatusOr<ClientSession> OpenSession(const ProbeParams& params,
                                                 const ServerAddress& server, bool bandwidth,
                                                 bool send_verb) {
  ClientSession session;
  const uint32_t qps = std::max<uint32_t>(1, params.rdma.queue_pairs);
  for (uint32_t q = 0; q < qps; ++q) {
    auto ep = RdmaEndpoint::Open(OptionsFor(params.rdma, params, bandwidth, send_verb));
    if (!ep.ok()) return ep.status();
    if (q == 0) {
      session.endpoint = *std::move(ep);
    } else {
      session.more.push_back(*std::move(ep));
    }
  }
  // The control connection on the rail too, as the TCP probes' (the server listens there).
  auto fd = net::ConnectTcp(server.host, server.port, absl::Seconds(10),
                            params.cancel ? &params.cancel->flag() : nullptr, params.source_host,
                            params.netdev);
  if (!fd.ok()) return fd.status();
  session.control = *std::move(fd);
  session.watched.emplace(params.cancel, session.control.get());
  v1::ProbeHello hello;
  *hello.mutable_spec() = ToSpec(params);
  hello.set_size_bytes(params.sizes_bytes.front());
  *hello.mutable_endpoint()->add_qps() = session.endpoint->LocalInfo();
  for (const auto& ep : session.more) *hello.mutable_endpoint()->add_qps() = ep->LocalInfo();
  hello.set_token(params.token);
  const absl::Time deadline = absl::Now() + kControlTimeout;
  RETURN_IF_ERROR(net::SendFrame(session.control.get(), hello, deadline));
  v1::ProbeWelcome welcome;
  RETURN_IF_ERROR(net::RecvFrame(session.control.get(), &welcome, deadline));
  if (!welcome.error().empty()) {
    // The server's own "not here" (no device on its side) is still a skip for the pair.
    std::string why = absl::StrCat("server: ", welcome.error());
    if (welcome.skipped()) return absl::NotFoundError(why);
    const v1::FailureCause cause =
        welcome.cause() == v1::FAILURE_CAUSE_UNSPECIFIED ? v1::CAUSE_PEER_REFUSED : welcome.cause();
    return WithCause(absl::FailedPreconditionError(why), cause, v1::SIDE_SERVER);
  }
  if (welcome.endpoint().qps_size() != static_cast<int>(qps)) {
    return absl::InvalidArgumentError("server sent no queue-pair data");
  }
  RETURN_IF_ERROR(session.endpoint->Connect(welcome.endpoint().qps(0)));
  for (uint32_t q = 1; q < qps; ++q) {
    RETURN_IF_ERROR(session.more[q - 1]->Connect(welcome.endpoint().qps(static_cast<int>(q))));
  }
  for (const auto& qp : welcome.endpoint().qps()) session.server_qps.push_back(qp);
  session.server_memory = welcome.memory();
  return session;
}

// The per-size meeting: the client names the size, the server gets ready and answers.
inline absl::Status Meet(int control, uint64_t size) {
  v1::ProbeHello ready;
  ready.set_size_bytes(size);
  const absl::Time deadline = absl::Now() + kControlTimeout;
  RETURN_IF_ERROR(net::SendFrame(control, ready, deadline));
  v1::ProbeWelcome go;
  RETURN_IF_ERROR(net::RecvFrame(control, &go, deadline));
  if (!go.error().empty()) {
    return WithCause(absl::FailedPreconditionError(absl::StrCat("server: ", go.error())),
                     v1::CAUSE_PEER_REFUSED, v1::SIDE_SERVER);
  }
  return absl::OkStatus();
}

// Server side of the handshake, one endpoint per queue pair the client asked for (--qps); on
// failure the client is told why (and whether it is a skip).
inline absl::StatusOr<std::vector<std::unique_ptr<RdmaEndpoint>>> AcceptSession(
    int control, const v1::ProbeHello& hello, const ServeContext& context, bool bandwidth,
    bool send_verb) {
  const ProbeParams params = FromSpec(hello.spec());
  RdmaParams local = context.local_rdma;
  local.tx_depth = params.rdma.tx_depth;
  const int qps = static_cast<int>(std::max<uint32_t>(1, params.rdma.queue_pairs));
  std::vector<std::unique_ptr<RdmaEndpoint>> eps;
  absl::Status status = hello.endpoint().qps_size() == qps
                            ? absl::OkStatus()
                            : absl::InvalidArgumentError("client sent no queue-pair data");
  if (status.ok() && local.gpu_memory && params.kind == v1::RDMA_WRITE_LAT) {
    status = absl::FailedPreconditionError(
        "this server's buffers are in GPU memory, which rdma_write_lat cannot poll");
  }
  for (int q = 0; status.ok() && q < qps; ++q) {
    auto ep = RdmaEndpoint::Open(OptionsFor(local, params, bandwidth, send_verb));
    status = ep.ok() ? (*ep)->Connect(hello.endpoint().qps(q)) : ep.status();
    if (ep.ok()) eps.push_back(*std::move(ep));
  }
  v1::ProbeWelcome welcome;
  if (!status.ok()) {
    welcome.set_error(std::string(status.message()));
    welcome.set_skipped(absl::IsNotFound(status) || absl::IsResourceExhausted(status));
    if (CauseOf(status).cause == v1::CAUSE_GPUDIRECT_UNAVAILABLE) {
      welcome.set_cause(v1::CAUSE_GPUDIRECT_UNAVAILABLE);
    }
    (void)net::SendFrame(control, welcome, absl::Now() + kControlTimeout);
    return status;
  }
  for (const auto& ep : eps) *welcome.mutable_endpoint()->add_qps() = ep->LocalInfo();
  welcome.set_memory(eps[0]->memory_label());
  RETURN_IF_ERROR(net::SendFrame(control, welcome, absl::Now() + kControlTimeout));
  return eps;
}

// Serves the per-size meetings until the client ends the session (bye or closed connection).
// `measuring` is how long the client may measure one size on top of that (its --duration).
template <typename PerSize>
absl::Status ServeMeetings(int control, PerSize per_size,
                           absl::Duration measuring = absl::ZeroDuration()) {
  for (;;) {
    v1::ProbeHello ready;
    absl::Status s = net::RecvFrame(control, &ready, absl::Now() + size_timeout + measuring);
    if (absl::IsUnavailable(s) || ready.bye()) return absl::OkStatus();  // the client is done
    if (!s.ok()) return s;
    RETURN_IF_ERROR(per_size(ready.size_bytes()));
  }
}

inline void EndSession(int control) {
  v1::ProbeHello bye;
  bye.set_bye(true);
  (void)net::SendFrame(control, bye, absl::Now() + absl::Seconds(5));
}

// What these probes do not do yet, refused by name rather than measured wrongly.
inline absl::Status CheckSupported(const ProbeParams& p, bool bidirectional_ok) {
  if (p.rdma.queue_pairs > 1 && (p.kind == v1::RDMA_WRITE_LAT || p.kind == v1::RDMA_SEND_LAT)) {
    return absl::InvalidArgumentError("--qps: a latency probe uses one queue pair");
  }
  // READ's data comes from the server's queue pairs: their paths would be traced from there.
  if (p.trace_flows && p.kind != v1::RDMA_WRITE_BW && p.kind != v1::RDMA_SEND_BW) {
    return absl::InvalidArgumentError(
        "--trace: for rdma_write_bw and rdma_send_bw (the queue pairs that carry the data "
        "from this side)");
  }
  if (p.rdma.bidirectional && !bidirectional_ok) {
    return absl::InvalidArgumentError("--bidirectional: for rdma_write_bw and rdma_read_bw only");
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::probes::rdma_internal

#endif  // FABRICCTL_PROBES_RDMA_SESSION_H_
