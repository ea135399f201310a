#include "base/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace fabricctl::net {
namespace {

constexpr uint32_t kMaxFrameBytes = 1u << 20;

absl::Status Errno(const std::string& what, int error) {
  std::string message = absl::StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ECONNRESET:
    case EPIPE:
      return absl::UnavailableError(message);
    case ETIMEDOUT:
      return absl::DeadlineExceededError(message);
    case EADDRINUSE:
    case EACCES:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

int MillisUntil(absl::Time deadline) {
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitReady(int fd, short events, absl::Time deadline, const char* what) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    int ready = ::poll(&pfd, 1, MillisUntil(deadline));
    if (ready > 0) return absl::OkStatus();
    if (ready == 0) return absl::DeadlineExceededError(absl::StrCat(what, ": timed out"));
    if (errno != EINTR) return Errno(what, errno);
  }
}

std::string Endpoint(const std::string& host, uint16_t port) {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

}  // namespace

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

absl::StatusOr<Listener> ListenTcp(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* raw = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &raw);
  if (rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen ", Endpoint(host, port), ": ", ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(raw, &::freeaddrinfo);
  absl::Status last = absl::UnavailableError("no address");
  for (addrinfo* ai = raw; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last = Errno("socket", errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), 128) != 0) {
      last = Errno(absl::StrCat("listen ", Endpoint(host, port)), errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
    Listener listener;
    listener.port =
        ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    listener.fd = std::move(fd);
    return listener;
  }
  return last;
}

absl::StatusOr<UniqueFd> AcceptTcp(const Listener& listener, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    RETURN_IF_ERROR(WaitReady(listener.fd.get(), POLLIN, deadline, "accept"));
    int fd = ::accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return UniqueFd(fd);
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) return Errno("accept", errno);
  }
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

namespace {

// Binds `fd` (of `family`) to the literal address `source`, port 0, before it connects.
absl::Status BindSource(int fd, int family, const std::string& source) {
  sockaddr_storage local{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&local);
    in->sin_family = AF_INET;
    if (::inet_pton(AF_INET, source.c_str(), &in->sin_addr) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("source address '", source, "' is not IPv4"));
    }
    len = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&local);
    in6->sin6_family = AF_INET6;
    if (::inet_pton(AF_INET6, source.c_str(), &in6->sin6_addr) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("source address '", source, "' is not IPv6"));
    }
    len = sizeof(sockaddr_in6);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), len) != 0) {
    return Errno(absl::StrCat("bind to ", source), errno);
  }
  return absl::OkStatus();
}

}  // namespace

bool CanBindToDevice(const std::string& device) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  return ::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, device.c_str(),
                      static_cast<socklen_t>(device.size())) == 0 ||
         errno != EPERM;
}

absl::StatusOr<UniqueFd> ConnectTcp(const std::string& host, uint16_t port, absl::Duration timeout,
                                    const std::atomic<bool>* stop, const std::string& source,
                                    const std::string& device) {
  const absl::Time deadline = absl::Now() + timeout;
  const std::string where = Endpoint(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* raw = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &raw);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("connect ", where, ": ", ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(raw, &::freeaddrinfo);
  absl::Status last = absl::UnavailableError(absl::StrCat("connect ", where, ": no address"));
  for (addrinfo* ai = raw; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd.valid()) {
      last = Errno("socket", errno);
      continue;
    }
    // Its port may be bound again while the kernel still holds the closed connection (a probe
    // traces a flow from the flow's own port: probes/trace/tcp.h).
    const int reuse = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
    // The interface itself, so that the traffic leaves through it whatever the routes say
    // (unprivileged since Linux 5.7; on an older kernel without CAP_NET_RAW, the address alone).
    if (!device.empty() &&
        ::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, device.c_str(),
                     static_cast<socklen_t>(device.size())) != 0 &&
        errno != EPERM) {
      last = Errno(absl::StrCat("bind to interface ", device), errno);
      continue;
    }
    if (!source.empty()) {
      if (absl::Status bound = BindSource(fd.get(), ai->ai_family, source); !bound.ok()) {
        last = bound;
        continue;
      }
    }
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = Errno(absl::StrCat("connect ", where), errno);
      continue;
    }
    // In slices, so that a caller that gives up is not held for the whole timeout.
    absl::Status ready;
    do {
      if (stop != nullptr && stop->load()) {
        return absl::CancelledError(absl::StrCat("connect ", where, ": cancelled"));
      }
      ready = WaitReady(fd.get(), POLLOUT,
                        std::min(deadline, absl::Now() + absl::Milliseconds(100)), "connect");
    } while (!ready.ok() && absl::Now() < deadline);
    if (!ready.ok()) {
      last = absl::DeadlineExceededError(
          absl::StrCat("connect ", where, ": no answer within ", absl::FormatDuration(timeout)));
      continue;
    }
    int error = 0;
    socklen_t len = sizeof(error);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) {
      last = Errno(absl::StrCat("connect ", where), error);
      continue;
    }
    int flags = ::fcntl(fd.get(), F_GETFL);
    ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    return fd;
  }
  return last;
}

absl::Status SendAll(int fd, const void* data, size_t n, absl::Time deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t sent = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      p += sent;
      n -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline, "send"));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EPIPE || errno == ECONNRESET)) {
      return absl::UnavailableError("send: connection closed by peer");
    }
    return Errno("send", errno);
  }
  return absl::OkStatus();
}

absl::Status RecvAll(int fd, void* data, size_t n, absl::Time deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t got = ::recv(fd, p, n, MSG_DONTWAIT);
    if (got > 0) {
      p += got;
      n -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) return absl::UnavailableError("recv: connection closed by peer");
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, "recv"));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) return absl::UnavailableError("recv: connection reset by peer");
    return Errno("recv", errno);
  }
  return absl::OkStatus();
}

absl::Status SendFrame(int fd, const google::protobuf::MessageLite& message, absl::Time deadline) {
  std::string bytes = message.SerializeAsString();
  if (bytes.size() > kMaxFrameBytes) return absl::InvalidArgumentError("frame too large");
  uint32_t length = htonl(static_cast<uint32_t>(bytes.size()));
  std::string frame(reinterpret_cast<const char*>(&length), sizeof(length));
  frame += bytes;
  return SendAll(fd, frame.data(), frame.size(), deadline);
}

absl::Status RecvFrame(int fd, google::protobuf::MessageLite* message, absl::Time deadline) {
  uint32_t length = 0;
  RETURN_IF_ERROR(RecvAll(fd, &length, sizeof(length), deadline));
  length = ntohl(length);
  if (length > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("out-of-band frame of ", length, " bytes: not a fabricctl probe peer?"));
  }
  std::string bytes(length, '\0');
  RETURN_IF_ERROR(RecvAll(fd, bytes.data(), length, deadline));
  if (!message->ParseFromString(bytes)) {
    return absl::InvalidArgumentError(
        "out-of-band frame does not parse: not a fabricctl probe peer?");
  }
  return absl::OkStatus();
}

absl::Status SetNoDelay(int fd) {
  int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    return Errno("TCP_NODELAY", errno);
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::net
