#ifndef FABRICCTL_PROBES_AUDIT_ETHTOOL_NETLINK_H_
#define FABRICCTL_PROBES_AUDIT_ETHTOOL_NETLINK_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fabricctl::probes {

// What the readers of ethtool netlink (module EEPROM pages, FEC statistics) share: building a
// generic netlink request and asking the kernel on a socket of their own. Netlink is
// host-endian and its attributes are aligned to 4 bytes (netlink(7), genetlink.h).

// Appends one attribute to `m`: its header, the `n` bytes of `data`, zeros up to 4 bytes.
void PutAttribute(std::string* m, uint16_t type, const void* data, size_t n);

// A generic netlink request (sequence 1): the netlink header, the genl header, `attributes`.
std::string GenlRequest(uint16_t family, uint8_t command, uint8_t version,
                        const std::string& attributes);

// The payload of the first attribute of `type` (flags such as NLA_F_NESTED ignored) among
// `attributes`; NotFound when none is there before the end or a malformed attribute.
absl::StatusOr<std::string> FindAttribute(const std::string& attributes, uint16_t type);

// A NETLINK_GENERIC socket, closed with the object. Each reply is awaited 2 s at most
// (SO_RCVTIMEO). The kernel handles a request within the send itself (ethtool's under the rtnl
// lock, which a driver stuck on its firmware can hold): that part is not bounded here.
// Not thread-safe: one caller at a time, one request in flight.
class GenlSocket {
 public:
  GenlSocket();
  ~GenlSocket();
  GenlSocket(const GenlSocket&) = delete;
  GenlSocket& operator=(const GenlSocket&) = delete;

  // Unavailable when the socket could not be made; every Ask then fails with it.
  const absl::Status& status() const { return status_; }

  // Sends `request` and returns the attributes (what follows the genl header) of the first
  // reply message of netlink type `type`. The kernel's error becomes a Status naming it:
  // EOPNOTSUPP Unimplemented; ENODEV and ENOENT NotFound; EPERM PermissionDenied; the others,
  // and a reply without such a message, Unavailable. No reply within 2 s: DeadlineExceeded.
  absl::StatusOr<std::string> Ask(const std::string& request, uint16_t type) const;

  // The id of the "ethtool" generic netlink family; Unimplemented on a kernel without it
  // (before Linux 5.6).
  absl::StatusOr<uint16_t> EthtoolFamily() const;

 private:
  int fd_ = -1;
  absl::Status status_;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_AUDIT_ETHTOOL_NETLINK_H_
