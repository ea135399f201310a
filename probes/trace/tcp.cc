#include "probes/trace/tcp.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/socket.h"

namespace fabricctl::probes {

HopAnswer SynAtTtl(const sockaddr_in& source, const sockaddr_in& destination, uint32_t ttl,
                   absl::Duration wait, const std::string& interface) {
  HopAnswer answer;
  net::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    return {HopAnswer::Kind::kError, "", absl::StrCat("socket: ", std::strerror(errno))};
  const int on = 1, hops = static_cast<int>(ttl);
  const linger reset{1, 0};  // a connection that reaches the destination ends with a reset
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  if (::setsockopt(fd.get(), IPPROTO_IP, IP_TTL, &hops, sizeof(hops)) != 0 ||
      ::setsockopt(fd.get(), IPPROTO_IP, IP_RECVERR, &on, sizeof(on)) != 0) {
    return {HopAnswer::Kind::kError, "", absl::StrCat("setsockopt: ", std::strerror(errno))};
  }
  if (std::string error = BindToInterface(fd.get(), interface); !error.empty())
    return {HopAnswer::Kind::kError, "", error};
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&source), sizeof(source)) != 0) {
    return {HopAnswer::Kind::kError, "",
            absl::StrCat("bind to the flow's port: ", std::strerror(errno))};
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&destination), sizeof(destination)) ==
      0) {
    return {HopAnswer::Kind::kReached, "", ""};
  }
  if (errno != EINPROGRESS) {
    return {HopAnswer::Kind::kError, "", absl::StrCat("connect: ", std::strerror(errno))};
  }
  const absl::Time deadline = absl::Now() + wait;
  for (;;) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) return answer;  // silent
    pollfd p{fd.get(), POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left_ms) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return answer;
    if (ReadQueuedError(fd.get(), destination, &answer)) return answer;
    int error = 0;
    socklen_t len = sizeof(error);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &len);
    // Connected, or refused by the destination's stack: either way the SYN arrived.
    if (error == 0 || error == ECONNREFUSED) return {HopAnswer::Kind::kReached, "", ""};
    return {HopAnswer::Kind::kError, "", absl::StrCat("connect: ", std::strerror(error))};
  }
}

void TraceTcpFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel,
                  const std::string& interface) {
  sockaddr_in source{}, destination{};
  if (!FlowEndpoints(flow, &source, &destination)) return;
  TracePath(flow, limits, cancel, [&](uint32_t ttl, absl::Duration wait) {
    return SynAtTtl(source, destination, ttl, wait, interface);
  });
}

}  // namespace fabricctl::probes
