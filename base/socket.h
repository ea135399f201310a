#ifndef FABRICCTL_BASE_SOCKET_H_
#define FABRICCTL_BASE_SOCKET_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/message_lite.h"

namespace fabricctl::net {

// Owns a file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.Release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
};

// A listening TCP socket.
struct Listener {
  UniqueFd fd;
  uint16_t port = 0;  // the bound port (useful when 0 was asked for)
};

// Listens on host:port (host may be "0.0.0.0", "::" or a literal address; port 0: any).
absl::StatusOr<Listener> ListenTcp(const std::string& host, uint16_t port);

// Accepts one connection, waiting at most `timeout`; DeadlineExceeded when none came.
absl::StatusOr<UniqueFd> AcceptTcp(const Listener& listener, absl::Duration timeout);

// Whether `fd` has something to read now (or its peer closed); never waits.
bool Readable(int fd);

// Connects to host:port (name or literal), giving up after `timeout`, or with CANCELLED within
// 100 ms of `*stop` turning true. Errors name the address. On a rail, the socket is bound to
// the interface `device` (SO_BINDTODEVICE, where the kernel allows it) and to the literal
// address `source`, so that the connection leaves through that interface whatever the routes.
absl::StatusOr<UniqueFd> ConnectTcp(const std::string& host, uint16_t port, absl::Duration timeout,
                                    const std::atomic<bool>* stop = nullptr,
                                    const std::string& source = "", const std::string& device = "");

// Whether this process may bind a socket to the interface `device` (SO_BINDTODEVICE: any
// process since Linux 5.7, before only with CAP_NET_RAW). Where it may not, ConnectTcp binds to
// the source address alone, and the routes may send the traffic out of another interface.
bool CanBindToDevice(const std::string& device);

// Writes or reads exactly `n` bytes before `deadline`. A peer that closes first is
// Unavailable ("connection closed by peer"); the deadline passing is DeadlineExceeded.
absl::Status SendAll(int fd, const void* data, size_t n, absl::Time deadline);
absl::Status RecvAll(int fd, void* data, size_t n, absl::Time deadline);

// Length-prefixed protobuf frames (4-byte big-endian length, at most 1 MiB).
absl::Status SendFrame(int fd, const google::protobuf::MessageLite& message, absl::Time deadline);
absl::Status RecvFrame(int fd, google::protobuf::MessageLite* message, absl::Time deadline);

// Sets TCP_NODELAY (latency probes).
absl::Status SetNoDelay(int fd);

}  // namespace fabricctl::net

#endif  // FABRICCTL_BASE_SOCKET_H_
