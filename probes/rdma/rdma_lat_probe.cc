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

// One side of one size's ping-pong: params.warmup_iterations rounds, then params.iterations, or
// by duration (perftest -D) as many as params.duration holds. The client (the initiator: it is
// given `rtt_ns`) sends first and times each round trip; the server (no `rtt_ns`) answers. Write:
// spin on the last byte of the receive area, then write back; send: wait for the receive, then
// send back. By duration the server does not know the count: while it waits for a round it
// also watches the control connection (every 4096 polls), where the client, done, says how many
// rounds it ran (ProbeHello.messages); the server ends when it has answered them all. Returns
// the rounds run, warm-up included.
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

absl::StatusOr<uint64_t> PingPong(RdmaEndpoint& ep, PingPongSide& side, uint64_t size,
                                  const ProbeParams& params) {
  const RdmaVerb verb = side.verb;
  const int control = side.control;
  std::vector<int64_t>* rtt_ns = side.rtt_ns;
  const bool initiator = rtt_ns != nullptr;
  const bool by_time = params.duration > absl::ZeroDuration();
  const uint64_t warmup = params.warmup_iterations;
  const uint64_t rounds =
      by_time ? std::numeric_limits<uint64_t>::max() - warmup : params.iterations;
  int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
  int64_t stop_ns = 0;  // by duration: when the timed rounds end (set after the warm-up)
  uint64_t told = std::numeric_limits<uint64_t>::max();  // the rounds the client said it ran
  volatile char* mark = ep.receive_area() + size - 1;
  uint32_t polls = 0;
  bool last = false;  // the initiator's last round, by duration
  // By duration, the server's wait also ends when the client has spoken on the control channel.
  auto client_done = [&] {
    return !initiator && by_time && (++polls & 4095) == 0 && net::Readable(control);
  };
  ibv_wc wc;
  absl::Status cq_error;
  auto wait_peer = [&](uint64_t round) -> absl::Status {
    bool arrived = false;
    auto ready = [&] {
      if (verb == RdmaVerb::kWrite) {
        arrived = *mark == RoundMark(round);
      } else {
        const int n = ep.PollRecv(&wc, 1);
        if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS)) {
          cq_error = n < 0 ? absl::InternalError("ibv_poll_cq failed") : CompletionError(wc);
          return true;
        }
        arrived = n == 1;
      }
      return arrived || client_done();
    };
    RETURN_IF_ERROR(SpinUntil(ready, deadline, "ping-pong"));
    RETURN_IF_ERROR(cq_error);
    if (arrived && verb == RdmaVerb::kSend) side.receive_posted = false;
    if (!arrived) {  // the client is done: it says how many rounds it ran
      v1::ProbeHello done;
      RETURN_IF_ERROR(net::RecvFrame(control, &done, absl::Now() + kControlTimeout));
      told = done.messages();
      if (told != round) {
        return absl::DataLossError(
            absl::StrCat("the client ran ", told, " rounds, this side ", round));
      }
      return absl::OkStatus();
    }
    deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
    // By duration the initiator decides here whether this round was its last, so that it posts
    // no receive for a round it will not run.
    if (initiator && by_time && round >= warmup && NowNs() >= stop_ns) last = true;
    // The next round's receive, posted before this side answers; none after the last round.
    if (verb == RdmaVerb::kSend && !last && (by_time || round + 1 < warmup + rounds)) {
      RETURN_IF_ERROR(ep.PostRecv(ReceiveLength(params, size), round + 1));
      side.receive_posted = true;
    }
    return absl::OkStatus();
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
  rtt_cycles.reserve(initiator && !by_time ? rounds : 0);
  uint64_t previous_post = 0, round = 0;
  for (; round - warmup < rounds || round < warmup; ++round) {
    if (initiator) {
      if (by_time && round == warmup) stop_ns = NowNs() + absl::ToInt64Nanoseconds(params.duration);
      if (last) break;
      const uint64_t now = ReadCycles();
      if (round > warmup) rtt_cycles.push_back(now - previous_post);
      previous_post = now;
      RETURN_IF_ERROR(answer(round));
      RETURN_IF_ERROR(wait_peer(round));
    } else {
      RETURN_IF_ERROR(wait_peer(round));
      if (told != std::numeric_limits<uint64_t>::max()) break;  // the client is done
      RETURN_IF_ERROR(answer(round));
    }
  }
  if (initiator && round > warmup) {
    rtt_cycles.push_back(ReadCycles() - previous_post);
    clock.Stop();
    for (uint64_t cycles : rtt_cycles) rtt_ns->push_back(clock.ToNanoseconds(cycles));
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
        RETURN_IF_ERROR(PrepareSize(**ep, side, size, params));
        if (auto s =
                net::SendFrame(connection.get(), v1::ProbeWelcome(), absl::Now() + kControlTimeout);
            !s.ok()) {
          return s;
        }
        return PingPong(**ep, side, size, params).status();
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
    auto ran = PingPong(ep, side, size, params);
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
