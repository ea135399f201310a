#include "probes/audit/ethtool_netlink.h"

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fabricctl::probes {
namespace {

constexpr int kReplySeconds = 2;

// 524 is the kernel's own ENOTSUPP, which some drivers let through to user space.
constexpr int kKernelNotSupported = 524;

absl::Status KernelError(int error) {
  const std::string why = absl::StrCat("netlink: ", std::strerror(error));
  switch (error) {
    case EOPNOTSUPP:
    case kKernelNotSupported:
      return absl::UnimplementedError(why);
    case ENODEV:
    case ENOENT:
      return absl::NotFoundError(why);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(why);
    default:
      return absl::UnavailableError(why);
  }
}

}  // namespace

void PutAttribute(std::string* m, uint16_t type, const void* data, size_t n) {
  const uint16_t length = static_cast<uint16_t>(NLA_HDRLEN + n);
  m->append(reinterpret_cast<const char*>(&length), 2);
  m->append(reinterpret_cast<const char*>(&type), 2);
  m->append(static_cast<const char*>(data), n);
  m->resize(NLA_ALIGN(m->size()), '\0');
}

std::string GenlRequest(uint16_t family, uint8_t command, uint8_t version,
                        const std::string& attributes) {
  nlmsghdr header{};
  header.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + GENL_HDRLEN + attributes.size());
  header.nlmsg_type = family;
  header.nlmsg_flags = NLM_F_REQUEST;
  header.nlmsg_seq = 1;
  genlmsghdr genl{};
  genl.cmd = command;
  genl.version = version;
  std::string m(reinterpret_cast<const char*>(&header), sizeof(header));
  m.append(reinterpret_cast<const char*>(&genl), sizeof(genl));
  return m + attributes;
}

absl::StatusOr<std::string> FindAttribute(const std::string& attributes, uint16_t type) {
  for (size_t at = 0; at + NLA_HDRLEN <= attributes.size();) {
    nlattr attr;
    std::memcpy(&attr, attributes.data() + at, sizeof(attr));
    if (attr.nla_len < NLA_HDRLEN || attr.nla_len > attributes.size() - at) break;
    if ((attr.nla_type & NLA_TYPE_MASK) == type) {
      return attributes.substr(at + NLA_HDRLEN, attr.nla_len - NLA_HDRLEN);
    }
    at += NLA_ALIGN(attr.nla_len);
  }
  return absl::NotFoundError(absl::StrCat("netlink: the reply has no attribute ", type));
}

GenlSocket::GenlSocket() {
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  if (fd_ < 0) {
    status_ = absl::UnavailableError(absl::StrCat("netlink socket: ", std::strerror(errno)));
    return;
  }
  const timeval timeout{kReplySeconds, 0};
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0) {
    status_ = absl::UnavailableError(absl::StrCat("netlink SO_RCVTIMEO: ", std::strerror(errno)));
    ::close(fd_);
    fd_ = -1;
  }
}

GenlSocket::~GenlSocket() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::string> GenlSocket::Ask(const std::string& request, uint16_t type) const {
  if (!status_.ok()) return status_;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) < 0) {
    return absl::UnavailableError(absl::StrCat("netlink send: ", std::strerror(errno)));
  }
  std::string reply(65536, '\0');
  ssize_t n = 0;
  do {
    n = ::recv(fd_, reply.data(), reply.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    return absl::DeadlineExceededError(absl::StrCat("netlink: no reply in ", kReplySeconds, "s"));
  }
  if (n < 0) return absl::UnavailableError(absl::StrCat("netlink recv: ", std::strerror(errno)));
  reply.resize(static_cast<size_t>(n));
  for (size_t at = 0; at + NLMSG_HDRLEN <= reply.size();) {
    nlmsghdr h;
    std::memcpy(&h, reply.data() + at, sizeof(h));
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > reply.size() - at) break;
    if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
      int error;
      std::memcpy(&error, reply.data() + at + NLMSG_HDRLEN, sizeof(error));
      if (error != 0) return KernelError(-error);  // 0: an acknowledgement
    } else if (h.nlmsg_type == type && h.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN) {
      const size_t begin = at + NLMSG_HDRLEN + GENL_HDRLEN;
      return reply.substr(begin, at + h.nlmsg_len - begin);
    }
    at += NLMSG_ALIGN(h.nlmsg_len);
  }
  return absl::UnavailableError("netlink: the reply holds no message of the type asked for");
}

absl::StatusOr<uint16_t> GenlSocket::EthtoolFamily() const {
  std::string name;
  PutAttribute(&name, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME, sizeof(ETHTOOL_GENL_NAME));
  auto reply = Ask(GenlRequest(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, name), GENL_ID_CTRL);
  if (absl::IsNotFound(reply.status())) {
    return absl::UnimplementedError("the kernel has no ethtool netlink (Linux 5.6 or later)");
  }
  if (!reply.ok()) return reply.status();
  auto id = FindAttribute(*reply, CTRL_ATTR_FAMILY_ID);
  if (!id.ok() || id->size() < sizeof(uint16_t)) {
    return absl::UnavailableError("netlink: the ethtool family's reply has no id");
  }
  uint16_t family;
  std::memcpy(&family, id->data(), sizeof(family));
  return family;
}

}  // namespace fabricctl::probes
