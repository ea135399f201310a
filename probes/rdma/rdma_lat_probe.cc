// The RDMA latency probes (ib_write_lat, ib_send_lat): ping-pong of one message at a time.
#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "probes/common/cycles.h"
#include "probes/common/stats.h"
#include "probes/rdma/rdma_probes.h"
#include "probes/rdma/session.h"

namespace fabricctl::probes {
using namespace rdma_internal;  // NOLINT: this probe family's own helpers

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

// One side of the ping-pong: the verb, the control connection, the round trips' times (the
// initiator's; nullptr on the server), and whether a receive is posted already (SEND: by
// duration, a size ends with one posted for a round that never came; it serves the next size).
struct PingPongSide {
  RdmaVerb verb;
  int control = -1;
  std::vector<int64_t>* rtt_ns = nullptr;
  bool receive_posted = false;
};

// The length receives are posted at: by duration the largest size, so that one left posted
// serves the next size.
uint64_t ReceiveLength(const ProbeParams& params, uint64_t size) {
  return params.duration > absl::ZeroDuration() ? MaxSize(params) : size;
}

constexpr uint64_t kUntold = std::numeric_limits<uint64_t>::max();

// One side of one size's ping-pong: params.warmup_iterations rounds, then params.iterations, or
// by duration (perftest -D) as many as params.duration holds. The client (the initiator: it has
// `rtt_ns`) sends first and times each round trip; the server answers. Write: spin on the last
// byte of the receive area, then write back; send: wait for the receive, then send back. By
// duration the server does not know the count: while it waits for a round it also watches the
// control connection (every 4096 polls), where the client, done, says how many rounds it ran
// (ProbeHello.messages); the server ends when it has answered them all.
class PingPong {
 public:
  PingPong(RdmaEndpoint& ep, PingPongSide& side, uint64_t size, const ProbeParams& params)
      : ep_(ep), side_(side), size_(size), params_(params) {}

  // The rounds run, warm-up included.
  absl::StatusOr<uint64_t> Run();

 private:
  bool initiator() const { return side_.rtt_ns != nullptr; }
  bool by_time() const { return params_.duration > absl::ZeroDuration(); }
  // Whether the peer's message of `round` is here (or, on a server by duration, the client
  // spoke); errors of the receive queue in `cq_error_`.
  bool Arrived(uint64_t round, bool* arrived);
  absl::Status WaitPeer(uint64_t round);
  absl::Status Answer(uint64_t round);

  RdmaEndpoint& ep_;
  PingPongSide& side_;
  const uint64_t size_;
  const ProbeParams& params_;
  int64_t deadline_ = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
  int64_t stop_ns_ = 0;      // by duration: when the timed rounds end (set after the warm-up)
  uint64_t told_ = kUntold;  // the rounds the client said it ran
  uint32_t polls_ = 0;
  bool last_ = false;  // the initiator's last round, by duration
  absl::Status cq_error_;
};

bool PingPong::Arrived(uint64_t round, bool* arrived) {
  if (side_.verb == RdmaVerb::kWrite) {
    // The NIC writes the byte behind the compiler's back: read it from memory every time.
    const volatile char* mark = ep_.receive_area() + size_ - 1;
    *arrived = *mark == RoundMark(round);
  } else {
    ibv_wc wc;
    const int n = ep_.PollRecv(&wc, 1);
    if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS)) {
      cq_error_ = n < 0 ? absl::InternalError("ibv_poll_cq failed") : CompletionError(wc);
      return true;
    }
    *arrived = n == 1;
  }
  return *arrived ||
         (!initiator() && by_time() && (++polls_ & 4095) == 0 && net::Readable(side_.control));
}

absl::Status PingPong::WaitPeer(uint64_t round) {
  bool arrived = false;
  RETURN_IF_ERROR(SpinUntil([&] { return Arrived(round, &arrived); }, deadline_, "ping-pong"));
  RETURN_IF_ERROR(cq_error_);
  if (!arrived) {  // the client is done: it says how many rounds it ran
    v1::ProbeHello done;
    RETURN_IF_ERROR(net::RecvFrame(side_.control, &done, absl::Now() + kControlTimeout));
    told_ = done.messages();
    if (told_ != round) {
      return absl::DataLossError(
          absl::StrCat("the client ran ", told_, " rounds, this side ", round));
    }
    return absl::OkStatus();
  }
  if (side_.verb == RdmaVerb::kSend) side_.receive_posted = false;
  deadline_ = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
  // By duration the initiator decides here whether this round was its last, so that it posts
  // no receive for a round it will not run.
  const uint64_t warmup = params_.warmup_iterations;
  if (initiator() && by_time() && round >= warmup && NowNs() >= stop_ns_) last_ = true;
  // The next round's receive, posted before this side answers; none after the last round.
  if (side_.verb == RdmaVerb::kSend && !last_ &&
      (by_time() || round + 1 < warmup + params_.iterations)) {
    RETURN_IF_ERROR(ep_.PostRecv(ReceiveLength(params_, size_), round + 1));
    side_.receive_posted = true;
  }
  return absl::OkStatus();
}

absl::Status PingPong::Answer(uint64_t round) {
  absl::Status s;
  if (side_.verb == RdmaVerb::kWrite) {
    ep_.send_area()[size_ - 1] = RoundMark(round);
    s = ep_.PostWrite(size_, round, /*signaled=*/true);
  } else {
    s = ep_.PostSend(size_, round, /*signaled=*/true);
  }
  if (!s.ok()) return s;
  return Reap(ep_, /*receive=*/false, 1, deadline_);
}

absl::StatusOr<uint64_t> PingPong::Run() {
  const uint64_t warmup = params_.warmup_iterations;
  const uint64_t total = by_time() ? kUntold : warmup + params_.iterations;
  // The initiator stamps each post, as perftest does (tposted[]); a round trip is the time
  // between two consecutive posts, the last one closed by a stamp after the final echo.
  CycleClock clock;
  std::vector<uint64_t> rtt_cycles;
  rtt_cycles.reserve(initiator() && !by_time() ? params_.iterations : 0);
  uint64_t previous_post = 0, round = 0;
  for (; round < total; ++round) {
    if (initiator()) {
      if (by_time() && round == warmup)
        stop_ns_ = NowNs() + absl::ToInt64Nanoseconds(params_.duration);
      if (last_) break;
      const uint64_t now = ReadCycles();
      if (round > warmup) rtt_cycles.push_back(now - previous_post);
      previous_post = now;
      RETURN_IF_ERROR(Answer(round));
      RETURN_IF_ERROR(WaitPeer(round));
    } else {
      RETURN_IF_ERROR(WaitPeer(round));
      if (told_ != kUntold) break;  // the client is done
      RETURN_IF_ERROR(Answer(round));
    }
  }
  if (initiator() && round > warmup) {
    rtt_cycles.push_back(ReadCycles() - previous_post);
    clock.Stop();
    for (uint64_t cycles : rtt_cycles) side_.rtt_ns->push_back(clock.ToNanoseconds(cycles));
  }
  return round;
}

// Clears the receive area's last byte for a fresh size (write) or posts the first receive
// (send) unless one is posted already, before the size's meeting completes.
absl::Status PrepareSize(RdmaEndpoint& ep, PingPongSide& side, uint64_t size,
                         const ProbeParams& params) {
  if (side.verb == RdmaVerb::kWrite) {
    ep.receive_area()[size - 1] = 0;
    return absl::OkStatus();
  }
  if (side.receive_posted) return absl::OkStatus();
  side.receive_posted = true;
  return ep.PostRecv(ReceiveLength(params, size), 0);
}

}  // namespace

absl::Status RdmaLatProbe::Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                                 const ServeContext& context) const {
  const ScopedSizeTimeout bound(FromSpec(hello.spec()), context.cancel);
  auto ep = AcceptSession(connection.get(), hello, context, /*bandwidth=*/false,
                          verb_ == RdmaVerb::kSend);
  if (!ep.ok()) return ep.status();
  const ProbeParams params = FromSpec(hello.spec());
  PingPongSide side{verb_, connection.get()};
  return ServeMeetings(
      connection.get(),
      [&](uint64_t size) -> absl::Status {
        RETURN_IF_ERROR(PrepareSize(*(*ep)[0], side, size, params));
        if (auto s =
                net::SendFrame(connection.get(), v1::ProbeWelcome(), absl::Now() + kControlTimeout);
            !s.ok()) {
          return s;
        }
        return PingPong(*(*ep)[0], side, size, params).Run().status();
      },
      params.duration);
}

ProbeRun RdmaLatProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  const ScopedSizeTimeout bound(params, params.cancel);
  ProbeRun run;
  run.kind = name();
  if (auto s = CheckSupported(params, /*bidirectional_ok=*/false); !s.ok()) return Finish(run, s);
  const absl::Time started = absl::Now();
  auto session = OpenSession(params, server, /*bandwidth=*/false, verb_ == RdmaVerb::kSend);
  if (!session.ok()) return Finish(run, session.status());
  RdmaEndpoint& ep = *session->endpoint;
  run.device = ep.label();
  run.client_memory = ep.memory_label();
  run.server_memory = session->server_memory;
  run.setup = ep.Setup();
  PingPongSide side{verb_, session->control.get()};
  for (uint64_t size : params.sizes_bytes) {
    if (auto s = PrepareSize(ep, side, size, params); !s.ok()) return Finish(run, s);
    if (auto s = Meet(session->control.get(), size); !s.ok()) return Finish(run, s);
    std::vector<int64_t> rtt_ns;
    rtt_ns.reserve(params.iterations);
    side.rtt_ns = &rtt_ns;
    auto ran = PingPong(ep, side, size, params).Run();
    if (!ran.ok()) return Finish(run, ran.status());
    if (params.duration > absl::ZeroDuration()) {  // the server learns where the rounds ended
      v1::ProbeHello done;
      done.set_messages(*ran);
      if (auto s = net::SendFrame(session->control.get(), done, absl::Now() + kControlTimeout);
          !s.ok()) {
        return Finish(run, s);
      }
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
