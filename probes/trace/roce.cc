#include "probes/trace/roce.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/socket.h"
#include "probes/trace/tcp.h"

namespace fabricctl::probes {
namespace {

constexpr uint16_t kRoceV2Port = 4791;

// How a trace's datagrams leave: by the flow's interface (empty: the routing table's), and the
// hops the trace has so far.
struct TraceSocket {
  std::string interface;
  const std::vector<Hop>* earlier = nullptr;
};

// Whether `address` answered an earlier TTL of this trace: a router is on a path once, so its
// answer now is a late one to the earlier datagram (from a router that quoted too little of it
// to tell by the TTL byte).
bool AnsweredBefore(const std::vector<Hop>& earlier, const std::string& address) {
  for (const Hop& h : earlier) {
    if (h.address == address) return true;
  }
  return false;
}

// One datagram of the flow's 5-tuple with the given TTL, and what answered within `wait`.
HopAnswer DatagramAtTtl(const sockaddr_in& source, const sockaddr_in& destination, uint32_t ttl,
                        absl::Duration wait, const TraceSocket& how) {
  net::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    return {HopAnswer::Kind::kError, "", absl::StrCat("socket: ", std::strerror(errno))};
  const int on = 1, hops = static_cast<int>(ttl);
  if (::setsockopt(fd.get(), IPPROTO_IP, IP_TTL, &hops, sizeof(hops)) != 0 ||
      ::setsockopt(fd.get(), IPPROTO_IP, IP_RECVERR, &on, sizeof(on)) != 0) {
    return {HopAnswer::Kind::kError, "", absl::StrCat("setsockopt: ", std::strerror(errno))};
  }
  if (std::string error = BindToInterface(fd.get(), how.interface); !error.empty())
    return {HopAnswer::Kind::kError, "", error};
  // No SO_REUSEADDR: a port another socket holds is an error, not a share of its answers.
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
    if (left_ms <= 0) return {};  // silent
    pollfd p{fd.get(), 0, 0};     // POLLERR is always reported
    const int ready = ::poll(&p, 1, static_cast<int>(left_ms) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (p.revents & POLLERR) == 0) return {};
    HopAnswer answer;
    std::string quoted;
    if (!ReadQueuedError(fd.get(), destination, &answer, &quoted)) {
      int error = 0;  // a pending error without a queued message: cleared, or POLLERR stays
      socklen_t len = sizeof(error);
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &len);
      continue;
    }
    const bool late = quoted.empty() ? AnsweredBefore(*how.earlier, answer.address)
                                     : quoted != std::string(probe, sizeof(probe));
    if (!late) return answer;
  }
}

}  // namespace

void TraceRoceFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel,
                   const std::string& interface) {
  sockaddr_in source{}, destination{};
  if (!FlowEndpoints(flow, &source, &destination)) return;
  if (ntohs(destination.sin_port) != kRoceV2Port) {
    flow.trace_note =
        absl::StrCat("not a RoCE v2 flow (port ", kRoceV2Port, "): '", flow.destination, "'");
    return;
  }
  sockaddr_in any_port = source;
  any_port.sin_port = 0;
  const TraceSocket how{interface, &flow.hops};
  TracePath(flow, limits, cancel, [&](uint32_t ttl, absl::Duration wait) {
    // Half the hop's wait each for the datagram and, where it draws nothing, the SYN.
    HopAnswer a = DatagramAtTtl(source, destination, ttl, wait / 2, how);
    if (a.kind != HopAnswer::Kind::kSilent) return a;
    // Silence: a router that does not answer, or the destination's RoCE stack, which drops the
    // datagram; a SYN with the same TTL tells the two apart.
    const HopAnswer syn = SynAtTtl(any_port, destination, ttl, wait / 2, interface);
    return syn.kind == HopAnswer::Kind::kReached ? syn : a;
  });
}

}  // namespace fabricctl::probes
