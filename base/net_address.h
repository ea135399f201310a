#ifndef FABRICCTL_BASE_NET_ADDRESS_H_
#define FABRICCTL_BASE_NET_ADDRESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl {

struct HostPort {
  std::string host;  // name or literal address, without IPv6 brackets
  uint16_t port = 0;

  // "host:port", with brackets around an IPv6 literal.
  std::string ToString() const;
};

// Parses "host:port", "[v6]:port", or "host" when `default_port` is non-zero.
// `what` names the flag or field in the error, e.g. "--listen".
absl::StatusOr<HostPort> ParseHostPort(const std::string& text, const std::string& what,
                                       uint16_t default_port = 0);

// A list of HOST:PORT separated by commas ("a:7400,b:7400": a controller and its standby), in
// order; at most kMaxHostPorts, each as ParseHostPort takes it.
inline constexpr size_t kMaxHostPorts = 8;
absl::StatusOr<std::vector<HostPort>> ParseHostPorts(const std::string& text,
                                                     const std::string& what);

// True for "localhost", 127.0.0.0/8 and ::1. A name is not resolved; only these count.
bool IsLoopbackHost(const std::string& host);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_NET_ADDRESS_H_
