#include "probes/trace/path.h"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fabricctl::probes {
namespace {

std::string Ntop(const in_addr& a) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, text, sizeof(text));
  return text;
}

}  // namespace

bool ReadQueuedError(int fd, const sockaddr_in& destination, HopAnswer* answer,
                     std::string* quoted) {
  char data[64], control[512];
  iovec iov{data, sizeof(data)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t got = ::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
  if (got < 0) return false;
  if (quoted != nullptr) quoted->assign(data, static_cast<size_t>(got));
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

std::string BindToInterface(int fd, const std::string& interface) {
  if (interface.empty()) return "";
  if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, interface.c_str(),
                   static_cast<socklen_t>(interface.size())) != 0) {
    return absl::StrCat("SO_BINDTODEVICE ", interface, ": ", std::strerror(errno));
  }
  return "";
}

bool ParseEndpoint(const std::string& text, sockaddr_in* address) {
  *address = sockaddr_in{};
  address->sin_family = AF_INET;
  const size_t colon = text.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(text.substr(colon + 1), &port) || port == 0 ||
      port > 65535 ||
      ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &address->sin_addr) != 1) {
    return false;
  }
  address->sin_port = htons(static_cast<uint16_t>(port));
  return true;
}

bool FlowEndpoints(Flow& flow, sockaddr_in* source, sockaddr_in* destination) {
  flow.hops.clear();
  flow.traced = false;
  for (const auto& [text, address] :
       {std::pair{&flow.source, source}, std::pair{&flow.destination, destination}}) {
    if (!ParseEndpoint(*text, address)) {
      flow.trace_note = absl::StrCat("not an IPv4 address and port: '", *text, "'");
      return false;
    }
  }
  return true;
}

void TracePath(Flow& flow, const TraceLimits& limits, const Cancellation* cancel,
               const TtlProbe& probe) {
  flow.hops.clear();
  flow.traced = false;
  flow.trace_note.clear();
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
    const HopAnswer a = probe(ttl, std::min(limits.per_hop, deadline - absl::Now()));
    switch (a.kind) {
      case HopAnswer::Kind::kReached:
        flow.traced = true;
        return;
      case HopAnswer::Kind::kError:
        flow.trace_note = absl::StrCat("TTL ", ttl, ": ", a.error);
        return;
      case HopAnswer::Kind::kRouter:
        silent = 0;
        flow.hops.push_back({ttl, a.address, ""});
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
