#include "probes/tcp/tcp_probes.h"

#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "probes/common/cause.h"
#include "probes/common/stats.h"
#include "probes/tcp/tcp_info.h"
#include "probes/trace/tcp.h"

namespace fabricctl::probes {
namespace {

// Slack on top of a phase's own time for connection set-up and the final count.
constexpr absl::Duration kSlack = absl::Seconds(30);
// Server-side reads are of the message size (as iperf3's -l sets both sides), within these
// bounds: small reads cost syscalls, and reads beyond the L2 cache cost copies.
constexpr size_t kMinReceiveChunk = 16 << 10;
constexpr size_t kMaxReceiveChunk = 256 << 10;
// Acknowledges the end of a warm-up.
constexpr char kWarmAck = 'W';

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The hot path uses blocking calls (no poll per message); a socket timeout bounds each one.
void SetIoTimeout(int fd, absl::Duration timeout) {
  timeval tv = absl::ToTimeval(std::max(timeout, absl::Milliseconds(1)));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

absl::Status IoError(const char* what) {
  if (errno == EAGAIN || errno == EWOULDBLOCK) {
    return absl::DeadlineExceededError(absl::StrCat(what, ": timed out"));
  }
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status WriteFull(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t sent = ::send(fd, data, n, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return IoError("send");
    }
    data += sent;
    n -= static_cast<size_t>(sent);
  }
  return absl::OkStatus();
}

absl::Status ReadFull(int fd, char* data, size_t n) {
  while (n > 0) {
    ssize_t got = ::recv(fd, data, n, 0);
    if (got == 0) return absl::UnavailableError("recv: connection closed by peer");
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError("recv");
    }
    data += got;
    n -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

// Time one connection of the phase may take: its own measurement plus slack.
absl::Duration PhaseBudget(const ProbeParams& p) {
  absl::Duration budget =
      (p.duration > absl::ZeroDuration() ? p.duration : absl::Minutes(5)) + kSlack;
  return p.timeout > absl::ZeroDuration() ? std::min(budget, p.timeout) : budget;
}

// Connects, says hello and waits for the welcome. A refusal by the server is FailedPrecondition
// carrying the server's reason.
absl::StatusOr<net::UniqueFd> OpenPhase(const ProbeParams& params, uint64_t size, uint32_t stream,
                                        const ServerAddress& server) {
  auto fd = net::ConnectTcp(server.host, server.port, absl::Seconds(10),
                            params.cancel ? &params.cancel->flag() : nullptr, params.source_host,
                            params.netdev);
  if (!fd.ok()) return fd.status();
  const WatchedFd watched(params.cancel, fd->get());
  v1::ProbeHello hello;
  *hello.mutable_spec() = ToSpec(params);
  hello.set_size_bytes(size);
  hello.set_stream(stream);
  hello.set_token(params.token);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  RETURN_IF_ERROR(net::SendFrame(fd->get(), hello, deadline));
  v1::ProbeWelcome welcome;
  RETURN_IF_ERROR(net::RecvFrame(fd->get(), &welcome, deadline));
  if (!welcome.error().empty()) {
    return WithCause(
        absl::FailedPreconditionError(absl::StrCat("server refused: ", welcome.error())),
        v1::CAUSE_PEER_REFUSED, v1::SIDE_SERVER);
  }
  if (params.cancel && params.cancel->cancelled()) return absl::CancelledError("probe cancelled");
  return fd;
}

// The server's answer of a timed phase, checked against what this side knows: `bytes` at most
// what was sent, a window of at least a millisecond and no longer than the phase took here.
absl::Status CheckServerCount(uint64_t bytes, uint64_t sent, int64_t window_ns,
                              int64_t elapsed_ns) {
  if (bytes > sent) {
    return WithCause(absl::DataLossError(absl::StrCat("the server counted ", bytes,
                                                      " bytes of the ", sent, " sent")),
                     v1::CAUSE_INVALID_FIGURES, v1::SIDE_SERVER);
  }
  if (window_ns < 1000000 || window_ns > elapsed_ns + 1000000000) {
    return WithCause(
        absl::DataLossError(absl::StrCat("the server's window of ", window_ns,
                                         " ns is not within this phase's ", elapsed_ns, " ns")),
        v1::CAUSE_INVALID_FIGURES, v1::SIDE_SERVER);
  }
  return absl::OkStatus();
}

// By duration, the receiver keeps the time: it counts what arrives in `duration` from the first
// byte, answers (bytes, nanoseconds) at once, and discards the rest until the sender goes. What
// the sender still has queued on a slow link is not waited for, so a link 100 times slower
// than its peers takes no longer to measure.
absl::Status ServeTimed(int fd, absl::Duration duration, std::vector<char>& buffer) {
  uint64_t received = 0;
  int64_t first_ns = 0, end_ns = 0;
  for (;;) {
    if (first_ns != 0) {
      const int64_t left_ns = end_ns - NowNs();
      if (left_ns <= 0) break;
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left_ns / 1000000 + 1));
      if (ready == 0) break;
      if (ready < 0 && errno != EINTR) return IoError("poll");
    }
    ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (got == 0) break;  // the sender stopped first
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError("recv");
    }
    if (first_ns == 0) {
      first_ns = NowNs();
      end_ns = first_ns + absl::ToInt64Nanoseconds(duration);
    }
    received += static_cast<uint64_t>(got);
  }
  const uint64_t wire[2] = {htobe64(received),
                            htobe64(static_cast<uint64_t>(first_ns ? NowNs() - first_ns : 0))};
  RETURN_IF_ERROR(WriteFull(fd, reinterpret_cast<const char*>(wire), sizeof(wire)));
  ::shutdown(fd, SHUT_WR);
  // Until the sender hangs up (it resets the connection on reading the answer).
  SetIoTimeout(fd, absl::Seconds(5));
  while (::recv(fd, buffer.data(), buffer.size(), 0) > 0) {
  }
  return absl::OkStatus();
}

ProbeRun Failed(const char* kind, const absl::Status& status) { return FailedRun(kind, status); }

// "tcp", or on a rail the interface it leaves through; where the kernel refuses to bind the
// socket to the interface, the result says so: the traffic then follows the routes from the
// rail's address, and may leave through another NIC and hide a slow rail NIC.
std::string TcpDevice(const ProbeParams& params) {
  if (params.netdev.empty()) return "tcp";
  if (net::CanBindToDevice(params.netdev)) return absl::StrCat("tcp via ", params.netdev);
  return absl::StrCat(
      "tcp from ", params.netdev, "'s address, not bound to ", params.netdev,
      " (the kernel refused SO_BINDTODEVICE: before Linux 5.7 it takes CAP_NET_RAW): "
      "the routes may send it out of another interface");
}

}  // namespace

absl::Status TcpBwProbe::Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                               const ServeContext& context) const {
  const ProbeParams params = FromSpec(hello.spec());
  const int fd = connection.get();
  if (auto s = net::SendFrame(fd, v1::ProbeWelcome(), absl::Now() + absl::Seconds(10)); !s.ok()) {
    return s;
  }
  SetIoTimeout(fd, PhaseBudget(params));
  std::vector<char> buffer(
      std::clamp<uint64_t>(hello.size_bytes(), kMinReceiveChunk, kMaxReceiveChunk));
  if (params.warmup_iterations > 0) {
    uint64_t left = params.warmup_iterations * hello.size_bytes();
    while (left > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
      RETURN_IF_ERROR(ReadFull(fd, buffer.data(), want));
      left -= want;
    }
    RETURN_IF_ERROR(WriteFull(fd, &kWarmAck, 1));
  }
  if (params.duration > absl::ZeroDuration()) return ServeTimed(fd, params.duration, buffer);
  uint64_t received = 0;
  for (;;) {
    ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError("recv");
    }
    received += static_cast<uint64_t>(got);
  }
  uint64_t wire = htobe64(received);
  return WriteFull(fd, reinterpret_cast<const char*>(&wire), sizeof(wire));
}

namespace {

// One stream of a timed phase, as the server answered it.
struct StreamTally {
  uint64_t sent = 0;      // whole messages this side sent
  uint64_t received = 0;  // what the server counted
  int64_t window_ns = 0;  // by duration: the server's measuring window
  int64_t finished_ns = 0;
  absl::Status error;
  std::optional<TcpCounters> counters;  // the timed part's segments and retransmissions
};

// The kernel's counters of the timed part: the difference of two readings.
std::optional<TcpCounters> CountersSince(int fd, const std::optional<TcpCounters>& before) {
  const std::optional<TcpCounters> after = ReadTcpCounters(fd);
  if (!before || !after || after->segments_out < before->segments_out ||
      after->retransmits < before->retransmits || after->duplicates < before->duplicates) {
    return std::nullopt;
  }
  return TcpCounters{after->segments_out - before->segments_out,
                     after->retransmits - before->retransmits,
                     after->duplicates - before->duplicates};
}

// The set-up of one size, outside the timed part: every stream connected and warmed up.
absl::Status OpenStreams(const ProbeParams& params, uint64_t size, const ServerAddress& server,
                         const std::vector<char>& message, std::vector<net::UniqueFd>* streams,
                         std::vector<WatchedFd>* watched) {
  for (uint32_t s = 0; s < params.tcp_streams; ++s) {
    ASSIGN_OR_RETURN(net::UniqueFd fd, OpenPhase(params, size, s, server));
    // Owned by `streams` before it is registered, so that it closes after it unregisters.
    streams->push_back(std::move(fd));
    const int stream = streams->back().get();
    watched->emplace_back(params.cancel, stream);
    SetIoTimeout(stream, PhaseBudget(params));
    for (uint64_t i = 0; i < params.warmup_iterations; ++i) {
      RETURN_IF_ERROR(WriteFull(stream, message.data(), size));
    }
  }
  if (params.warmup_iterations == 0) return absl::OkStatus();
  for (auto& fd : *streams) {
    char ack = 0;
    RETURN_IF_ERROR(ReadFull(fd.get(), &ack, 1));
    if (ack != kWarmAck) return absl::InternalError("bad warm-up acknowledgement");
  }
  return absl::OkStatus();
}

// The timed part of one stream. By duration the server keeps the time and answers as soon as
// it is up; the answer stops the writer (a send blocked on a slow link returns once the socket
// is shut down). By count: every message, then the server's count.
void TimeStream(int fd, const std::vector<char>& message, int64_t stop_ns, uint64_t iterations,
                StreamTally* tally) {
  const uint64_t size = message.size();
  absl::Status status;
  const std::optional<TcpCounters> before = ReadTcpCounters(fd);
  if (stop_ns != 0) {
    std::atomic<bool> answered{false};
    uint64_t wire[2] = {0, 0};
    absl::Status answer;
    std::thread reader([&] {
      answer = ReadFull(fd, reinterpret_cast<char*>(wire), sizeof(wire));
      answered = true;
      ::shutdown(fd, SHUT_WR);
    });
    while (status.ok() && !answered && NowNs() < stop_ns) {
      status = WriteFull(fd, message.data(), size);
      if (status.ok()) tally->sent += size;
    }
    if (!answered) ::shutdown(fd, SHUT_WR);
    reader.join();
    tally->counters = CountersSince(fd, before);
    // What is still queued for a slow link is dropped, not delivered: reset on close.
    const linger drop{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &drop, sizeof(drop));
    tally->finished_ns = NowNs();
    tally->received = be64toh(wire[0]);
    tally->window_ns = static_cast<int64_t>(be64toh(wire[1]));
    tally->error = answer;  // a send cut short by the answer is no error
    return;
  }
  for (uint64_t i = 0; status.ok() && i < iterations; ++i) {
    status = WriteFull(fd, message.data(), size);
    if (status.ok()) tally->sent += size;
  }
  if (status.ok()) ::shutdown(fd, SHUT_WR);
  uint64_t wire = 0;
  if (status.ok()) status = ReadFull(fd, reinterpret_cast<char*>(&wire), sizeof(wire));
  tally->counters = CountersSince(fd, before);
  tally->finished_ns = NowNs();
  tally->received = be64toh(wire);
  tally->error = status;
}

// One size's figure from its streams' tallies: the server's count over its window (by
// duration) or over the phase (by count), each checked against what this side sent.
absl::StatusOr<BwPoint> FigureOf(const std::vector<StreamTally>& tallies, uint64_t size,
                                 int64_t start_ns, bool by_time) {
  uint64_t bytes = 0, sent = 0;
  int64_t finished = start_ns, window = 0;
  std::optional<TcpCounters> counters = TcpCounters{};
  for (const StreamTally& t : tallies) {
    RETURN_IF_ERROR(t.error);
    if (counters && t.counters) {
      counters->segments_out += t.counters->segments_out;
      counters->retransmits += t.counters->retransmits;
      counters->duplicates += t.counters->duplicates;
    } else {
      counters.reset();
    }
    bytes += t.received;
    sent += t.sent + size;  // a send cut short may have sent part of a message more
    finished = std::max(finished, t.finished_ns);
    window = std::max(window, t.window_ns);
  }
  if (bytes == 0) {
    // Nothing arrived in the time: no figure to report, and never a zero as one.
    return WithCause(absl::DeadlineExceededError("no data reached the server"), v1::CAUSE_NO_DATA);
  }
  int64_t elapsed = finished - start_ns;
  // The server's count (and window) decide the figure: they must be what this side could have
  // caused, no more bytes than were sent and a window no longer than the connection.
  RETURN_IF_ERROR(
      CheckServerCount(bytes, sent, by_time ? window : 1000000, by_time ? elapsed : 1000000));
  if (by_time) elapsed = window;
  // From the bytes, not whole messages: a slow link may move only a few in its time.
  BwPoint point = AverageBandwidth(size, bytes / size, elapsed);
  point.bw_avg_gbps = static_cast<double>(bytes) * 8.0 / static_cast<double>(elapsed);
  if (counters && counters->segments_out > 0) {
    point.segments = counters->segments_out;
    point.retransmits = counters->retransmits;
    point.spurious = std::min(counters->duplicates, counters->retransmits);
  }
  return point;
}

// "IP:PORT" of a socket's own end (`peer`: the other end's); empty where it has none.
std::string EndOf(int fd, bool peer) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  if (rc != 0 || sa.sin_family != AF_INET) return "";
  char ip[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
  return absl::StrCat(ip, ":", ntohs(sa.sin_port));
}

// Each stream as a flow, its 5-tuple read while it is connected (a stream the server has reset
// by the end has no peer left).
std::vector<Flow> FlowsOf(const std::vector<net::UniqueFd>& streams) {
  std::vector<Flow> flows;
  for (const net::UniqueFd& fd : streams) {
    Flow f;
    f.source = EndOf(fd.get(), false);
    f.destination = EndOf(fd.get(), true);
    flows.push_back(std::move(f));
  }
  return flows;
}

// Each flow's own figure: the server's count over that stream's window (or over the phase by
// count).
void FigureFlows(std::vector<Flow>& flows, const std::vector<StreamTally>& tallies,
                 int64_t start_ns, bool by_time) {
  for (size_t s = 0; s < flows.size() && s < tallies.size(); ++s) {
    Flow& f = flows[s];
    const int64_t ns = by_time ? tallies[s].window_ns : tallies[s].finished_ns - start_ns;
    if (ns > 0)
      f.bw_gbps = static_cast<double>(tallies[s].received) * 8.0 / static_cast<double>(ns);
  }
}

}  // namespace

ProbeRun TcpBwProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  ProbeRun run;
  run.kind = name();
  run.device = TcpDevice(params);
  const absl::Time started = absl::Now();
  for (uint64_t size : params.sizes_bytes) {
    std::vector<net::UniqueFd> streams;
    std::vector<WatchedFd> watched;  // after `streams`: unregistered before they close
    const std::vector<char> message(size, 'f');
    if (auto st = OpenStreams(params, size, server, message, &streams, &watched); !st.ok()) {
      return Failed(name(), st);
    }
    std::vector<Flow> flows = FlowsOf(streams);
    // Timed part: every stream writes, closes its side, and reads the server's count.
    std::vector<StreamTally> tallies(streams.size());
    const int64_t start_ns = NowNs();
    const bool by_time = params.duration > absl::ZeroDuration();
    const int64_t stop_ns = by_time ? start_ns + absl::ToInt64Nanoseconds(params.duration) : 0;
    std::vector<std::thread> threads;
    for (size_t s = 0; s < streams.size(); ++s) {
      threads.emplace_back(TimeStream, streams[s].get(), std::cref(message), stop_ns,
                           params.iterations, &tallies[s]);
    }
    for (auto& t : threads) t.join();
    auto point = FigureOf(tallies, size, start_ns, by_time);
    if (!point.ok()) return Failed(name(), point.status());
    // Flows where there are several to tell apart, or paths to trace (one stream's flow is the
    // point itself).
    if (streams.size() > 1 || params.trace_flows) {
      FigureFlows(flows, tallies, start_ns, by_time);
      point->flows = std::move(flows);
    }
    if (params.trace_flows) {
      // A stream closed with a reset leaves no TIME_WAIT behind: its port can carry its trace.
      const linger reset{1, 0};
      for (auto& fd : streams) ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
    run.bw.push_back(*std::move(point));
  }
  // The traces leave as the streams did: by the rail's interface where the socket could be
  // bound to it (TcpDevice), else by the routes from its address.
  if (params.trace_flows && !run.bw.empty()) {
    const bool bound = !params.netdev.empty() && net::CanBindToDevice(params.netdev);
    TraceFlows(run.bw.back().flows, params.cancel, bound ? params.netdev : "");
  }
  run.outcome = Outcome::kOk;
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  return run;
}

absl::Status TcpLatProbe::Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                                const ServeContext& context) const {
  const int fd = connection.get();
  if (auto s = net::SendFrame(fd, v1::ProbeWelcome(), absl::Now() + absl::Seconds(10)); !s.ok()) {
    return s;
  }
  net::SetNoDelay(fd).IgnoreError();
  SetIoTimeout(fd, PhaseBudget(FromSpec(hello.spec())));
  std::vector<char> message(hello.size_bytes());
  for (;;) {
    // The first byte tells a closed connection (the client is done) from a message.
    ssize_t got = ::recv(fd, message.data(), message.size(), 0);
    if (got == 0) return absl::OkStatus();
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError("recv");
    }
    if (static_cast<size_t>(got) < message.size()) {
      RETURN_IF_ERROR(ReadFull(fd, message.data() + got, message.size() - got));
    }
    RETURN_IF_ERROR(WriteFull(fd, message.data(), message.size()));
  }
}

ProbeRun TcpLatProbe::Run(const ProbeParams& params, const ServerAddress& server) const {
  ProbeRun run;
  run.kind = name();
  run.device = TcpDevice(params);
  const absl::Time started = absl::Now();
  for (uint64_t size : params.sizes_bytes) {
    auto fd = OpenPhase(params, size, 0, server);
    if (!fd.ok()) return Failed(name(), fd.status());
    const WatchedFd watched(params.cancel, fd->get());
    net::SetNoDelay(fd->get()).IgnoreError();
    SetIoTimeout(fd->get(), PhaseBudget(params));
    std::vector<char> message(size, 'f');
    std::vector<char> echo(size);
    auto round_trip = [&]() -> absl::Status {
      RETURN_IF_ERROR(WriteFull(fd->get(), message.data(), size));
      return ReadFull(fd->get(), echo.data(), size);
    };
    for (uint64_t i = 0; i < params.warmup_iterations; ++i) {
      if (auto s = round_trip(); !s.ok()) return Failed(name(), s);
    }
    std::vector<int64_t> rtt_ns;
    rtt_ns.reserve(params.iterations > 0 ? params.iterations : 1 << 16);
    const int64_t stop_ns = params.duration > absl::ZeroDuration()
                                ? NowNs() + absl::ToInt64Nanoseconds(params.duration)
                                : 0;
    for (uint64_t i = 0; stop_ns != 0 || i < params.iterations; ++i) {
      const int64_t t0 = NowNs();
      if (stop_ns != 0 && t0 >= stop_ns) break;
      if (auto s = round_trip(); !s.ok()) return Failed(name(), s);
      rtt_ns.push_back(NowNs() - t0);
    }
    ::shutdown(fd->get(), SHUT_WR);
    auto point = LatencyStats(size, std::move(rtt_ns), 2.0);
    if (!point) {
      return Failed(name(), absl::InvalidArgumentError(
                                "too few round trips for statistics (at least 3 are needed)"));
    }
    run.lat.push_back(*point);
  }
  run.outcome = Outcome::kOk;
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  return run;
}

}  // namespace fabricctl::probes
