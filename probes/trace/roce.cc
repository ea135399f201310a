#include "probes/trace/roce.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/socket.h"
#include "probes/trace/tcp.h"

namespace fabricctl::probes {
namespace {

constexpr uint16_t kRoceV2Port = 4791;

// One datagram of the flow's 5-tuple with the given TTL, and what answered within `wait`.
HopAnswer DatagramAtTtl(const sockaddr_in& source, const sockaddr_in& destination, uint32_t ttl,
                        absl::Duration wait) {
  HopAnswer answer;
  net::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    return {HopAnswer::Kind::kError, "", absl::StrCat("socket: ", std::strerror(errno))};
  const int on = 1, hops = static_cast<int>(ttl);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (::setsockopt(fd.get(), IPPROTO_IP, IP_TTL, &hops, sizeof(hops)) != 0 ||
      ::setsockopt(fd.get(), IPPROTO_IP, IP_RECVERR, &on, sizeof(on)) != 0) {
    return {HopAnswer::Kind::kError, "", absl::StrCat("setsockopt: ", std::strerror(errno))};
  }
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&source), sizeof(source)) != 0) {
    return {HopAnswer::Kind::kError, "",
            absl::StrCat("bind to the flow's port: ", std::strerror(errno))};
  }
  // Unconnected: a connected socket may carry a random flow hash of its own. The last byte is
  // the TTL: an answer that quotes another one is late, for an earlier socket of the same port.
  char probe[8] = {'f', 'a', 'b', 'r', 'i', 'c', 't', static_cast<char>(ttl)};
  if (::sendto(fd.get(), probe, sizeof(probe), 0, reinterpret_cast<const sockaddr*>(&destination),
               sizeof(destination)) < 0) {
    return {HopAnswer::Kind::kError, "", absl::StrCat("sendto: ", std::strerror(errno))};
  }
  const absl::Time deadline = absl::Now() + wait;
  for (;;) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) return answer;  // silent
    pollfd p{fd.get(), 0, 0};         // POLLERR is always reported
    const int ready = ::poll(&p, 1, static_cast<int>(left_ms) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return answer;
    std::string quoted;
    if (ReadQueuedError(fd.get(), destination, &answer, &quoted)) {
      if (quoted.size() != sizeof(probe) || quoted == std::string(probe, sizeof(probe)))
        return answer;
      answer = HopAnswer{};  // a late answer to an earlier TTL: wait on
      continue;
    }
    if ((p.revents & POLLERR) == 0) return answer;
  }
}

}  // namespace

void TraceRoceFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel) {
  sockaddr_in source{}, destination{};
  for (const auto& [text, address] :
       {std::pair{&flow.source, &source}, std::pair{&flow.destination, &destination}}) {
    if (!ParseEndpoint(*text, address)) {
      flow.hops.clear();
      flow.traced = false;
      flow.trace_note = absl::StrCat("not an IPv4 address and port: '", *text, "'");
      return;
    }
  }
  if (ntohs(destination.sin_port) != kRoceV2Port) {
    flow.trace_note =
        absl::StrCat("not a RoCE v2 flow (port ", kRoceV2Port, "): '", flow.destination, "'");
    return;
  }
  sockaddr_in any_port = source;
  any_port.sin_port = 0;
  TracePath(flow, limits, cancel, [&](uint32_t ttl, absl::Duration wait) {
    HopAnswer a = DatagramAtTtl(source, destination, ttl, wait);
    if (a.kind != HopAnswer::Kind::kSilent) return a;
    // Silence: a router that does not answer, or the destination's RoCE stack, which drops the
    // datagram; a SYN with the same TTL tells the two apart.
    const HopAnswer syn = SynAtTtl(any_port, destination, ttl, wait);
    return syn.kind == HopAnswer::Kind::kReached ? syn : a;
  });
}

}  // namespace fabricctl::probes
