// The RDMA latency probes (ib_write_lat, ib_send_lat): ping-pong of one message at a time.
#include <algorithm>
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

// One side of one size's ping-pong, params.iterations rounds after params.warmup_iterations.
// The client (the initiator: it is given `rtt_ns`) sends first and times each round trip; the
// server (no `rtt_ns`) answers. Write: spin on the last byte of the receive area, then write
// back; send: wait for the receive, then send back.
absl::Status PingPong(RdmaEndpoint& ep, RdmaVerb verb, uint64_t size, const ProbeParams& params,
                      std::vector<int64_t>* rtt_ns) {
  const bool initiator = rtt_ns != nullptr;
  const uint64_t rounds = params.iterations, warmup = params.warmup_iterations;
  const int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
  volatile char* mark = ep.receive_area() + size - 1;
  auto wait_peer = [&](uint64_t round) -> absl::Status {
    if (verb == RdmaVerb::kWrite) {
      const char want = RoundMark(round);
      return SpinUntil([&] { return *mark == want; }, deadline, "ping-pong");
    }
    RETURN_IF_ERROR(Reap(ep, /*receive=*/true, 1, deadline));
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
      RETURN_IF_ERROR(answer(round));
      RETURN_IF_ERROR(wait_peer(round));
    } else {
      RETURN_IF_ERROR(wait_peer(round));
      RETURN_IF_ERROR(answer(round));
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
    RETURN_IF_ERROR(PrepareSize(**ep, verb_, size));
    if (auto s =
            net::SendFrame(connection.get(), v1::ProbeWelcome(), absl::Now() + kControlTimeout);
        !s.ok()) {
      return s;
    }
    return PingPong(**ep, verb_, size, params, /*rtt_ns=*/nullptr);
  });
}

ProbeRun RdmaLatProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  const ScopedSizeTimeout bound(params, params.cancel);
  ProbeRun run;
  run.kind = name();
  if (auto s = CheckSupported(params, /*bidirectional_ok=*/false); !s.ok()) return Finish(run, s);
  if (params.duration > absl::ZeroDuration()) {
    // A ping-pong's time does not grow with a slow link's bandwidth: a count bounds it.
    return Finish(
        run, absl::InvalidArgumentError("RDMA latency probes measure by --iters, not --duration"));
  }
  const absl::Time started = absl::Now();
  auto session = OpenSession(params, server, /*bandwidth=*/false, verb_ == RdmaVerb::kSend);
  if (!session.ok()) return Finish(run, session.status());
  RdmaEndpoint& ep = *session->endpoint;
  run.device = ep.label();
  run.client_memory = ep.memory_label();
  run.server_memory = session->server_memory;
  run.setup = ep.Setup();
  for (uint64_t size : params.sizes_bytes) {
    if (auto s = PrepareSize(ep, verb_, size); !s.ok()) return Finish(run, s);
    if (auto s = Meet(session->control.get(), size); !s.ok()) return Finish(run, s);
    std::vector<int64_t> rtt_ns;
    rtt_ns.reserve(params.iterations);
    if (auto s = PingPong(ep, verb_, size, params, &rtt_ns); !s.ok()) {
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
