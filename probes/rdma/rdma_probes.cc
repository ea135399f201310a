#include "probes/rdma/rdma_probes.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "probes/common/cycles.h"
#include "probes/common/stats.h"
#include "probes/rdma/endpoint.h"
#include "probes/rdma/gpu_memory.h"

namespace fabricctl::probes {
namespace {

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
thread_local absl::Duration size_timeout = kDefaultSizeTimeout;  // NOLINT: per-probe-thread bound

// This thread's probe's cancellation (set with the size bound), checked by the spinning loops.
thread_local const Cancellation* current_cancel = nullptr;  // NOLINT: per-probe-thread

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

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status CompletionError(const ibv_wc& wc) {
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
      return absl::DeadlineExceededError(absl::StrCat(what, ": no progress within ",
                                                      absl::FormatDuration(size_timeout)));
    }
  }
}

// Waits for `count` completions on the send (or receive) CQ.
absl::Status Reap(RdmaEndpoint& ep, bool receive, int count, int64_t deadline_ns) {
  ibv_wc wc[16];
  int got = 0;
  absl::Status error;
  auto ready = [&] {
    int n = receive ? ep.PollRecv(wc, std::min(16, count - got)) : ep.PollSend(wc, std::min(16, count - got));
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
  if (auto s = SpinUntil(ready, deadline_ns, receive ? "receive" : "send"); !s.ok()) return s;
  return error;
}

uint64_t MaxSize(const ProbeParams& p) {
  return *std::max_element(p.sizes_bytes.begin(), p.sizes_bytes.end());
}

EndpointOptions OptionsFor(const RdmaParams& selection, const ProbeParams& p, bool bandwidth,
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

ProbeRun Finish(ProbeRun run, const absl::Status& status) {
  if (status.ok()) {
    run.outcome = Outcome::kOk;
    return run;
  }
  run.bw.clear();
  run.lat.clear();
  run.reason = std::string(status.message());
  if (absl::IsNotFound(status) || absl::IsResourceExhausted(status)) {
    run.outcome = Outcome::kSkipped;  // no device here, or memlock too low
  } else if (absl::IsDeadlineExceeded(status)) {
    run.outcome = Outcome::kTimeout;
  } else {
    run.outcome = Outcome::kFailed;
  }
  return run;
}

// Client side of the out-of-band handshake: open the endpoint, send its queue pair, connect to
// the server's. The connection stays open for the per-size meetings.
struct ClientSession {
  net::UniqueFd control;
  std::optional<WatchedFd> watched;  // after `control`: unregistered before it closes
  std::unique_ptr<RdmaEndpoint> endpoint;
};

absl::StatusOr<ClientSession> OpenSession(const ProbeParams& params, const ServerAddress& server,
                                          bool bandwidth, bool send_verb) {
  ClientSession session;
  auto ep = RdmaEndpoint::Open(OptionsFor(params.rdma, params, bandwidth, send_verb));
  if (!ep.ok()) return ep.status();
  session.endpoint = *std::move(ep);
  auto fd = net::ConnectTcp(server.host, server.port, absl::Seconds(10),
                            params.cancel ? &params.cancel->flag() : nullptr);
  if (!fd.ok()) return fd.status();
  session.control = *std::move(fd);
  session.watched.emplace(params.cancel, session.control.get());
  v1::ProbeHello hello;
  *hello.mutable_spec() = ToSpec(params);
  hello.set_size_bytes(params.sizes_bytes.front());
  *hello.mutable_endpoint()->add_qps() = session.endpoint->LocalInfo();
  const absl::Time deadline = absl::Now() + kControlTimeout;
  if (auto s = net::SendFrame(session.control.get(), hello, deadline); !s.ok()) return s;
  v1::ProbeWelcome welcome;
  if (auto s = net::RecvFrame(session.control.get(), &welcome, deadline); !s.ok()) return s;
  if (!welcome.error().empty()) {
    // The server's own "not here" (no device on its side) is still a skip for the pair.
    std::string why = absl::StrCat("server: ", welcome.error());
    return welcome.skipped() ? absl::NotFoundError(why) : absl::FailedPreconditionError(why);
  }
  if (welcome.endpoint().qps_size() != 1) {
    return absl::InvalidArgumentError("server sent no queue-pair data");
  }
  if (auto s = session.endpoint->Connect(welcome.endpoint().qps(0)); !s.ok()) return s;
  return session;
}

// The per-size meeting: the client names the size, the server gets ready and answers.
absl::Status Meet(int control, uint64_t size) {
  v1::ProbeHello ready;
  ready.set_size_bytes(size);
  const absl::Time deadline = absl::Now() + kControlTimeout;
  if (auto s = net::SendFrame(control, ready, deadline); !s.ok()) return s;
  v1::ProbeWelcome go;
  if (auto s = net::RecvFrame(control, &go, deadline); !s.ok()) return s;
  if (!go.error().empty()) return absl::FailedPreconditionError(absl::StrCat("server: ", go.error()));
  return absl::OkStatus();
}

// Server side of the handshake; on failure the client is told why (and whether it is a skip).
absl::StatusOr<std::unique_ptr<RdmaEndpoint>> AcceptSession(int control,
                                                            const v1::ProbeHello& hello,
                                                            const ServeContext& context,
                                                            bool bandwidth, bool send_verb) {
  const ProbeParams params = FromSpec(hello.spec());
  RdmaParams local = context.local_rdma;
  local.tx_depth = params.rdma.tx_depth;
  absl::StatusOr<std::unique_ptr<RdmaEndpoint>> ep =
      local.gpu_memory && params.kind == v1::RDMA_WRITE_LAT
          ? absl::FailedPreconditionError(
                "this server's buffers are in GPU memory, which rdma_write_lat cannot poll")
          : RdmaEndpoint::Open(OptionsFor(local, params, bandwidth, send_verb));
  v1::ProbeWelcome welcome;
  absl::Status status = ep.ok() ? absl::OkStatus() : ep.status();
  if (status.ok() && hello.endpoint().qps_size() != 1) {
    status = absl::InvalidArgumentError("client sent no queue-pair data");
  }
  if (status.ok()) status = (*ep)->Connect(hello.endpoint().qps(0));
  if (!status.ok()) {
    welcome.set_error(std::string(status.message()));
    welcome.set_skipped(absl::IsNotFound(status) || absl::IsResourceExhausted(status));
    (void)net::SendFrame(control, welcome, absl::Now() + kControlTimeout);
    return status;
  }
  *welcome.mutable_endpoint()->add_qps() = (*ep)->LocalInfo();
  if (auto s = net::SendFrame(control, welcome, absl::Now() + kControlTimeout); !s.ok()) return s;
  return ep;
}

// Serves the per-size meetings until the client ends the session (bye or closed connection).
// `measuring` is how long the client may measure one size on top of that (its --duration).
template <typename PerSize>
absl::Status ServeMeetings(int control, PerSize per_size, absl::Duration measuring = absl::ZeroDuration()) {
  for (;;) {
    v1::ProbeHello ready;
    absl::Status s = net::RecvFrame(control, &ready, absl::Now() + size_timeout + measuring);
    if (absl::IsUnavailable(s) || ready.bye()) return absl::OkStatus();  // the client is done
    if (!s.ok()) return s;
    if (auto st = per_size(ready.size_bytes()); !st.ok()) return st;
  }
}

void EndSession(int control) {
  v1::ProbeHello bye;
  bye.set_bye(true);
  (void)net::SendFrame(control, bye, absl::Now() + absl::Seconds(5));
}

// The bandwidth loop of perftest's run_iter_bw for one size. Records posts and completions
// when `timed`.
//
// With `stop_ns` (perftest -D), `messages` is only a bound: posting stops at that time, the last
// message posted is signaled so that every completion is seen, and `*sent` says how many went.
absl::Status RunBwLoop(RdmaEndpoint& ep, RdmaVerb verb, uint64_t size, uint64_t messages,
                       uint32_t tx_depth, uint32_t cq_mod, std::vector<int64_t>* posted_ns,
                       std::vector<Completion>* completions, int64_t stop_ns = 0,
                       uint64_t* sent = nullptr) {
  int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout) +
                     std::max<int64_t>(0, stop_ns - NowNs());
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
    if (n > 0) deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout) +
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
  return verb_ == RdmaVerb::kWrite ? v1::RDMA_WRITE_BW
         : verb_ == RdmaVerb::kRead ? v1::RDMA_READ_BW
                                    : v1::RDMA_SEND_BW;
}
const char* RdmaBwProbe::name() const {
  return verb_ == RdmaVerb::kWrite ? "rdma_write_bw"
         : verb_ == RdmaVerb::kRead ? "rdma_read_bw"
                                    : "rdma_send_bw";
}
const char* RdmaBwProbe::title() const {
  return verb_ == RdmaVerb::kWrite ? "RDMA_Write BW Test"
         : verb_ == RdmaVerb::kRead ? "RDMA_Read BW Test"
                                    : "Send BW Test";
}

namespace {

// What these probes do not do yet, refused by name rather than measured wrongly.
absl::Status CheckSupported(const ProbeParams& p, bool bidirectional_ok) {
  if (p.rdma.queue_pairs > 1) {
    return absl::InvalidArgumentError("--qps: the RDMA probes use one queue pair");
  }
  if (p.rdma.bidirectional && !bidirectional_ok) {
    return absl::InvalidArgumentError(
        "--bidirectional: for rdma_write_bw and rdma_read_bw only");
  }
  return absl::OkStatus();
}

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
    if (auto s = RunBwLoop(ep, verb, size, params.warmup_iterations, static_cast<uint32_t>(tx_depth),
                           cq_mod, nullptr, nullptr, 0, &warm);
        !s.ok()) {
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
  if (auto s = RunBwLoop(ep, verb, size, measured, static_cast<uint32_t>(tx_depth), cq_mod,
                         by_time ? nullptr : &posted_ns, &completions, stop_ns, &measured);
      !s.ok()) {
    return s;
  }
  if (sent) *sent = warm + measured;
  if (by_time) {
    // Time from the start of the loop to the last completion: what perftest -D divides by.
    const int64_t started = stop_ns - absl::ToInt64Nanoseconds(params.duration);
    *point = AverageBandwidth(size, measured, completions.back().time_ns - started);
    return absl::OkStatus();
  }
  *point = AverageBandwidth(size, params.iterations, completions.back().time_ns - posted_ns.front());
  if (params.iterations <= kMaxItersForPeak) {
    point->bw_peak_gbps = PeakBandwidthGbps(size, posted_ns, completions);
  }
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
  const bool by_time = params.duration > absl::ZeroDuration();
  // By duration, receives are posted at the largest size, so that those a size leaves posted
  // serve the next; `outstanding` counts them across sizes.
  uint64_t outstanding = 0;
  return ServeMeetings(connection.get(), [&](uint64_t size) -> absl::Status {
    // WRITE and READ need nothing from this side. SEND needs receives posted, and reposted
    // as they complete, for every message of the size: warm-up and iterations, or by duration
    // until the client says how many it sent.
    uint64_t expected = by_time ? std::numeric_limits<uint64_t>::max()
                                : params.warmup_iterations + params.iterations;
    uint64_t next_id = 0, received = 0;
    const uint64_t length = by_time ? MaxSize(params) : size;
    auto post_more = [&]() -> absl::Status {
      while (outstanding < kRxDepthSend && received + outstanding < expected) {
        if (auto s = (*ep)->PostRecv(length, next_id++); !s.ok()) return s;
        ++outstanding;
      }
      return absl::OkStatus();
    };
    if (send) {
      if (auto s = post_more(); !s.ok()) return s;
    }
    if (auto s = net::SendFrame(connection.get(), v1::ProbeWelcome(), absl::Now() + kControlTimeout);
        !s.ok()) {
      return s;
    }
    if (params.rdma.bidirectional && !send) {
      // Both directions at once (perftest -b): this side runs the same loop towards the
      // client and reports its own figures, which the client adds to its own.
      BwPoint point;
      if (auto s = MeasureBw(**ep, verb_, size, params, &point); !s.ok()) return s;
      v1::ProbeResult mine;
      mine.add_bw()->set_bw_avg_gbps(point.bw_avg_gbps);
      mine.mutable_bw(0)->set_msg_rate_mpps(point.msg_rate_mpps);
      if (point.bw_peak_gbps) mine.mutable_bw(0)->set_bw_peak_gbps(*point.bw_peak_gbps);
      return net::SendFrame(connection.get(), mine, absl::Now() + kControlTimeout);
    }
    int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout + params.duration);
    ibv_wc wc[16];
    uint32_t idle = 0;
    while (send && received < expected) {
      int n = (*ep)->PollRecv(wc, 16);
      if (n < 0) return absl::InternalError("ibv_poll_cq failed");
      if (n == 0) {
        if ((++idle & 1023) != 0) continue;
        if (by_time && expected == std::numeric_limits<uint64_t>::max() &&
            net::Readable(connection.get())) {
          v1::ProbeHello done;
          if (auto s = net::RecvFrame(connection.get(), &done, absl::Now() + kControlTimeout); !s.ok()) return s;
          expected = done.messages();
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
        ++received;
        --outstanding;
      }
      if (auto s = post_more(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }, params.duration);
}

ProbeRun RdmaBwProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  const ScopedSizeTimeout bound(params, params.cancel);
  ProbeRun run;
  run.kind = name();
  if (auto s = CheckSupported(params, verb_ != RdmaVerb::kSend); !s.ok()) return Finish(run, s);
  const absl::Time started = absl::Now();
  auto session = OpenSession(params, server, /*bandwidth=*/true, verb_ == RdmaVerb::kSend);
  if (!session.ok()) return Finish(run, session.status());
  RdmaEndpoint& ep = *session->endpoint;
  run.device = ep.label();
  run.setup = ep.Setup();
  if (params.rdma.bidirectional) run.setup.push_back({"Bidirectional", "ON (both sides summed)"});
  for (uint64_t size : params.sizes_bytes) {
    if (auto s = Meet(session->control.get(), size); !s.ok()) return Finish(run, s);
    BwPoint point;
    uint64_t sent = 0;
    if (auto s = MeasureBw(ep, verb_, size, params, &point, &sent); !s.ok()) return Finish(run, s);
    if (verb_ == RdmaVerb::kSend && params.duration > absl::ZeroDuration()) {
      // The server counts receives until it has them all.
      v1::ProbeHello done;
      done.set_messages(sent);
      if (auto s = net::SendFrame(session->control.get(), done, absl::Now() + kControlTimeout); !s.ok()) {
        return Finish(run, s);
      }
    }
    if (params.rdma.bidirectional) {
      // perftest -b sums the two sides' figures.
      v1::ProbeResult theirs;
      if (auto s = net::RecvFrame(session->control.get(), &theirs, absl::Now() + size_timeout); !s.ok()) {
        return Finish(run, s);
      }
      if (theirs.bw_size() != 1) {
        return Finish(run, absl::InvalidArgumentError("server sent no bidirectional figures"));
      }
      point.bw_avg_gbps += theirs.bw(0).bw_avg_gbps();
      point.msg_rate_mpps += theirs.bw(0).msg_rate_mpps();
      if (point.bw_peak_gbps && theirs.bw(0).has_bw_peak_gbps()) {
        *point.bw_peak_gbps += theirs.bw(0).bw_peak_gbps();
      } else {
        point.bw_peak_gbps.reset();
      }
      point.iterations *= 2;
    }
    run.bw.push_back(point);
  }
  EndSession(session->control.get());
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  return Finish(run, absl::OkStatus());
}

v1::ProbeKind RdmaLatProbe::kind() const {
  return verb_ == RdmaVerb::kWrite ? v1::RDMA_WRITE_LAT : v1::RDMA_SEND_LAT;
}
const char* RdmaLatProbe::name() const {
  return verb_ == RdmaVerb::kWrite ? "rdma_write_lat" : "rdma_send_lat";
}
const char* RdmaLatProbe::title() const {
  return verb_ == RdmaVerb::kWrite ? "RDMA_Write Latency Test" : "Send Latency Test";
}

namespace {

// The value a ping-pong round writes into the last byte: 1..255, never the zero the area was
// cleared to.
char RoundMark(uint64_t round) { return static_cast<char>(round % 255 + 1); }

// One side of one size's ping-pong. The client (`initiator`) sends first and times each
// round trip; the server answers. Write: spin on the last byte of the receive area, then
// write back; send: wait for the receive, then send back.
absl::Status PingPong(RdmaEndpoint& ep, RdmaVerb verb, bool initiator, uint64_t size,
                      uint64_t rounds, uint64_t warmup, std::vector<int64_t>* rtt_ns) {
  const int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
  volatile char* mark = ep.receive_area() + size - 1;
  auto wait_peer = [&](uint64_t round) -> absl::Status {
    if (verb == RdmaVerb::kWrite) {
      const char want = RoundMark(round);
      return SpinUntil([&] { return *mark == want; }, deadline, "ping-pong");
    }
    if (auto s = Reap(ep, /*receive=*/true, 1, deadline); !s.ok()) return s;
    // The next round's receive, posted before this side answers; none after the last round.
    return round + 1 < warmup + rounds ? ep.PostRecv(size, round + 1) : absl::OkStatus();
  };
  auto answer = [&](uint64_t round) -> absl::Status {
    absl::Status s;
    if (verb == RdmaVerb::kWrite) {
      ep.send_area()[size - 1] = RoundMark(round);
      s = ep.PostWrite(size, round, /*signaled=*/true);
    } else {
      s = ep.PostSend(size, round, /*signaled=*/true);
    }
    if (!s.ok()) return s;
    return Reap(ep, /*receive=*/false, 1, deadline);
  };
  // The initiator stamps each post, as perftest does (tposted[]); a round trip is the time
  // between two consecutive posts, the last one closed by a stamp after the final echo.
  CycleClock clock;
  std::vector<uint64_t> rtt_cycles;
  rtt_cycles.reserve(initiator ? rounds : 0);
  uint64_t previous_post = 0;
  for (uint64_t round = 0; round < warmup + rounds; ++round) {
    if (initiator) {
      const uint64_t now = ReadCycles();
      if (round > warmup) rtt_cycles.push_back(now - previous_post);
      previous_post = now;
      if (auto s = answer(round); !s.ok()) return s;
      if (auto s = wait_peer(round); !s.ok()) return s;
    } else {
      if (auto s = wait_peer(round); !s.ok()) return s;
      if (auto s = answer(round); !s.ok()) return s;
    }
  }
  if (initiator && rounds > 0) {
    rtt_cycles.push_back(ReadCycles() - previous_post);
    clock.Stop();
    for (uint64_t cycles : rtt_cycles) rtt_ns->push_back(clock.ToNanoseconds(cycles));
  }
  return absl::OkStatus();
}

// Clears the receive area's last byte for a fresh size (write) or posts the first receive
// (send), before the size's meeting completes.
absl::Status PrepareSize(RdmaEndpoint& ep, RdmaVerb verb, uint64_t size) {
  if (verb == RdmaVerb::kWrite) {
    ep.receive_area()[size - 1] = 0;
    return absl::OkStatus();
  }
  return ep.PostRecv(size, 0);
}

}  // namespace

absl::Status RdmaLatProbe::Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                                 const ServeContext& context) const {
  const ScopedSizeTimeout bound(FromSpec(hello.spec()), context.cancel);
  auto ep = AcceptSession(connection.get(), hello, context, /*bandwidth=*/false,
                          verb_ == RdmaVerb::kSend);
  if (!ep.ok()) return ep.status();
  const ProbeParams params = FromSpec(hello.spec());
  return ServeMeetings(connection.get(), [&](uint64_t size) -> absl::Status {
    if (auto s = PrepareSize(**ep, verb_, size); !s.ok()) return s;
    if (auto s = net::SendFrame(connection.get(), v1::ProbeWelcome(), absl::Now() + kControlTimeout);
        !s.ok()) {
      return s;
    }
    return PingPong(**ep, verb_, /*initiator=*/false, size, params.iterations,
                    params.warmup_iterations, nullptr);
  });
}

ProbeRun RdmaLatProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  const ScopedSizeTimeout bound(params, params.cancel);
  ProbeRun run;
  run.kind = name();
  if (auto s = CheckSupported(params, /*bidirectional_ok=*/false); !s.ok()) return Finish(run, s);
  if (params.duration > absl::ZeroDuration()) {
    // A ping-pong's time does not grow with a slow link's bandwidth: a count bounds it.
    return Finish(run, absl::InvalidArgumentError("RDMA latency probes measure by --iters, not --duration"));
  }
  const absl::Time started = absl::Now();
  auto session = OpenSession(params, server, /*bandwidth=*/false, verb_ == RdmaVerb::kSend);
  if (!session.ok()) return Finish(run, session.status());
  RdmaEndpoint& ep = *session->endpoint;
  run.device = ep.label();
  run.setup = ep.Setup();
  for (uint64_t size : params.sizes_bytes) {
    if (auto s = PrepareSize(ep, verb_, size); !s.ok()) return Finish(run, s);
    if (auto s = Meet(session->control.get(), size); !s.ok()) return Finish(run, s);
    std::vector<int64_t> rtt_ns;
    rtt_ns.reserve(params.iterations);
    if (auto s = PingPong(ep, verb_, /*initiator=*/true, size, params.iterations,
                          params.warmup_iterations, &rtt_ns);
        !s.ok()) {
      return Finish(run, s);
    }
    auto point = LatencyStats(size, std::move(rtt_ns), 2.0);
    if (!point) {
      return Finish(run, absl::InvalidArgumentError("too few iterations (at least 3 are needed)"));
    }
    run.lat.push_back(*point);
  }
  EndSession(session->control.get());
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  return Finish(run, absl::OkStatus());
}

}  // namespace fabricctl::probes
