#include "probes/tcp/trace.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/socket.h"

namespace fabricctl::probes {
namespace {

// What one TTL's connect() came to.
struct HopAnswer {
  enum class Kind { kRouter, kReached, kSilent, kError } kind = Kind::kSilent;
  std::string address;  // the router's, for kRouter
  std::string error;    // for kError
};

std::string Ntop(const in_addr& a) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, text, sizeof(text));
  return text;
}

// The name the resolver gives an address (the hosts file, DNS), empty where none.
std::string NameOf(const std::string& address) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) return "";
  char host[NI_MAXHOST] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&sa), sizeof(sa), host, sizeof(host), nullptr,
                    0, NI_NAMEREQD) != 0) {
    return "";
  }
  return host;
}

// The ICMP error queued on `fd`, if any: a router's time exceeded, or an error from the
// destination (which the SYN reached).
bool ReadQueuedError(int fd, const sockaddr_in& destination, HopAnswer* answer) {
  char data[64], control[512];
  iovec iov{data, sizeof(data)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_IP || c->cmsg_type != IP_RECVERR) continue;
    const auto* e = reinterpret_cast<const sock_extended_err*>(CMSG_DATA(c));
    if (e->ee_origin != SO_EE_ORIGIN_ICMP) continue;
    const auto* from = reinterpret_cast<const sockaddr_in*>(SO_EE_OFFENDER(e));
    if (from->sin_family != AF_INET) continue;
    if (from->sin_addr.s_addr == destination.sin_addr.s_addr) {
      answer->kind = HopAnswer::Kind::kReached;
    } else if (e->ee_type == 11) {  // ICMP time exceeded
      answer->kind = HopAnswer::Kind::kRouter;
      answer->address = Ntop(from->sin_addr);
    } else {
      answer->kind = HopAnswer::Kind::kError;
      answer->error = absl::StrCat("ICMP type ", e->ee_type, " code ", e->ee_code, " from ",
                                   Ntop(from->sin_addr));
    }
    return true;
  }
  return false;
}

// One TTL: a SYN of the flow's 5-tuple, and what answered within `wait`.
HopAnswer TryTtl(const sockaddr_in& source, const sockaddr_in& destination, uint32_t ttl,
                 absl::Duration wait) {
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

}  // namespace

bool SplitAddress(const std::string& text, std::string* ip, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  *ip = text.substr(0, colon);
  uint32_t value = 0;
  in_addr parsed{};
  if (!absl::SimpleAtoi(text.substr(colon + 1), &value) || value == 0 || value > 65535 ||
      ::inet_pton(AF_INET, ip->c_str(), &parsed) != 1) {
    return false;
  }
  *port = static_cast<uint16_t>(value);
  return true;
}

void TraceTcpFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel) {
  flow.hops.clear();
  flow.traced = false;
  std::string ip;
  uint16_t port = 0;
  sockaddr_in source{}, destination{};
  source.sin_family = destination.sin_family = AF_INET;
  if (!SplitAddress(flow.source, &ip, &port) ||
      ::inet_pton(AF_INET, ip.c_str(), &source.sin_addr) != 1) {
    flow.trace_note = absl::StrCat("not an IPv4 address and port: '", flow.source, "'");
    return;
  }
  source.sin_port = htons(port);
  if (!SplitAddress(flow.destination, &ip, &port) ||
      ::inet_pton(AF_INET, ip.c_str(), &destination.sin_addr) != 1) {
    flow.trace_note = absl::StrCat("not an IPv4 address and port: '", flow.destination, "'");
    return;
  }
  destination.sin_port = htons(port);
  const absl::Time deadline = absl::Now() + limits.total;
  uint32_t silent = 0;
  for (uint32_t ttl = 1; ttl <= limits.max_ttl; ++ttl) {
    if (cancel != nullptr && cancel->cancelled()) {
      flow.trace_note = "cancelled";
      return;
    }
    if (absl::Now() >= deadline) {
      flow.trace_note =
          absl::StrCat("the trace's ", absl::FormatDuration(limits.total), " ran out at TTL ", ttl);
      return;
    }
    const HopAnswer a = TryTtl(source, destination, ttl, limits.per_hop);
    switch (a.kind) {
      case HopAnswer::Kind::kReached:
        flow.traced = true;
        flow.trace_note.clear();
        return;
      case HopAnswer::Kind::kError:
        flow.trace_note = absl::StrCat("TTL ", ttl, ": ", a.error);
        return;
      case HopAnswer::Kind::kRouter:
        silent = 0;
        flow.hops.push_back({ttl, a.address, NameOf(a.address)});
        break;
      case HopAnswer::Kind::kSilent:
        flow.hops.push_back({ttl, "", ""});
        if (++silent >= limits.max_silent) {
          flow.trace_note =
              absl::StrCat(silent, " hops in a row did not answer from TTL ", ttl + 1 - silent);
          return;
        }
        break;
    }
  }
  flow.trace_note = absl::StrCat("the destination was not reached within TTL ", limits.max_ttl);
}

}  // namespace fabricctl::probes
