#include "probes/audit/dcb.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fabricctl::probes {
namespace {

constexpr size_t kAlign = 4;

size_t Align(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

uint16_t U16(const std::string& b, size_t at) {
  uint16_t v;
  std::memcpy(&v, b.data() + at, sizeof(v));
  return v;  // netlink is host-endian
}
uint32_t U32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, sizeof(v));
  return v;
}

void PutU16(std::string* b, uint16_t v) { b->append(reinterpret_cast<const char*>(&v), 2); }
void PutU32(std::string* b, uint32_t v) { b->append(reinterpret_cast<const char*>(&v), 4); }

// Calls `each(type, payload_offset, payload_length)` for every attribute in [begin, end);
// false when an attribute's length runs past the end.
template <typename Each>
bool ForEachAttribute(const std::string& b, size_t begin, size_t end, Each each) {
  size_t at = begin;
  while (at + 4 <= end) {
    const uint16_t length = U16(b, at);
    const uint16_t type = U16(b, at + 2) & NLA_TYPE_MASK;
    if (length < 4 || at + length > end) return false;
    each(type, at + 4, static_cast<size_t>(length - 4));
    at += Align(length);
  }
  return true;
}

}  // namespace

std::string BuildDcbIeeeGetRequest(const std::string& ifname, uint32_t sequence) {
  std::string attr;
  const std::string name = ifname + '\0';
  PutU16(&attr, static_cast<uint16_t>(4 + name.size()));
  PutU16(&attr, DCB_ATTR_IFNAME);
  attr += name;
  attr.resize(Align(attr.size()), '\0');
  std::string msg;
  PutU32(&msg, static_cast<uint32_t>(NLMSG_HDRLEN + 4 + attr.size()));
  PutU16(&msg, RTM_GETDCB);
  PutU16(&msg, NLM_F_REQUEST);
  PutU32(&msg, sequence);
  PutU32(&msg, 0);
  msg += static_cast<char>(AF_UNSPEC);  // struct dcbmsg
  msg += static_cast<char>(DCB_CMD_IEEE_GET);
  PutU16(&msg, 0);
  return msg + attr;
}

absl::StatusOr<DcbIeee> ParseDcbIeeeReply(const std::string& b) {
  DcbIeee out;
  bool found = false;
  size_t at = 0;
  while (at + NLMSG_HDRLEN <= b.size()) {
    const uint32_t length = U32(b, at);
    const uint16_t type = U16(b, at + 4);
    if (length < NLMSG_HDRLEN || at + length > b.size()) {
      return absl::InvalidArgumentError("DCB reply: a message runs past the end");
    }
    if (type == NLMSG_ERROR) {
      if (length < NLMSG_HDRLEN + 4) return absl::InvalidArgumentError("DCB reply: short error");
      const int error = -static_cast<int32_t>(U32(b, at + NLMSG_HDRLEN));
      if (error == 0) {
        at += Align(length);
        continue;  // an acknowledgement
      }
      std::string why = absl::StrCat("DCB netlink: ", std::strerror(error));
      if (error == EOPNOTSUPP || error == ENODEV) return absl::UnimplementedError(why);
      return absl::UnavailableError(why);
    }
    if (type == RTM_GETDCB && length >= NLMSG_HDRLEN + 4) {
      found = true;
      const size_t attrs = at + NLMSG_HDRLEN + 4;  // past struct dcbmsg
      bool ok = ForEachAttribute(b, attrs, at + length, [&](uint16_t t, size_t p, size_t n) {
        if (t != DCB_ATTR_IEEE) return;
        ForEachAttribute(b, p, p + n, [&](uint16_t it, size_t ip, size_t in) {
          if (it == DCB_ATTR_IEEE_PFC && in >= 2) {
            out.has_pfc = true;
            out.pfc_enabled = static_cast<uint8_t>(b[ip + 1]);  // struct ieee_pfc: pfc_cap, pfc_en
          } else if (it == DCB_ATTR_IEEE_APP_TABLE) {
            ForEachAttribute(b, ip, ip + in, [&](uint16_t at_type, size_t ap, size_t an) {
              if (at_type != DCB_ATTR_IEEE_APP || an < 4) return;
              out.apps.push_back(
                  {static_cast<uint8_t>(b[ap]), static_cast<uint8_t>(b[ap + 1]), U16(b, ap + 2)});
            });
          }
        });
      });
      if (!ok) return absl::InvalidArgumentError("DCB reply: an attribute runs past its message");
    }
    at += Align(length);
  }
  if (!found) return absl::InvalidArgumentError("DCB reply: no RTM_GETDCB message");
  return out;
}

absl::StatusOr<std::string> QueryDcbIeee(const std::string& ifname) {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("netlink socket: ", std::strerror(errno)));
  const std::string request = BuildDcbIeeeGetRequest(ifname, 1);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) < 0) {
    int error = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("netlink send: ", std::strerror(error)));
  }
  pollfd pfd{fd, POLLIN, 0};
  if (::poll(&pfd, 1, 2000) <= 0) {
    ::close(fd);
    return absl::DeadlineExceededError("DCB netlink: no reply within 2s");
  }
  std::string reply(65536, '\0');
  ssize_t n = ::recv(fd, reply.data(), reply.size(), 0);
  int error = errno;
  ::close(fd);
  if (n < 0) return absl::UnavailableError(absl::StrCat("netlink recv: ", std::strerror(error)));
  reply.resize(static_cast<size_t>(n));
  return reply;
}

}  // namespace fabricctl::probes
