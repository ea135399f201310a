#ifndef FABRICCTL_AGENT_LLDP_H_
#define FABRICCTL_AGENT_LLDP_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/inventory.pb.h"

namespace fabricctl::agent {

// What lldpd has learned of each interface's neighbour (the switch port at the other end of
// its cable), by interface name, through liblldpctl, the library lldpcli is built on: loaded
// when first needed (liblldpctl.so.4 from Debian's lldpd), so that lldpd stays optional.
// `socket` is lldpd's control socket ("" for its default). The read runs on its own thread
// and is given up after `timeout` (an lldpd that accepts and never answers does not hold the
// agent); calls while a read runs wait for that read, so at most one thread is ever held.
// An interface with several neighbours gives its first. Unavailable (no library, no lldpd)
// is FAILED_PRECONDITION saying which.
absl::StatusOr<std::map<std::string, v1::LldpNeighbor>> ReadLldpNeighbors(
    const std::string& socket, absl::Duration timeout = absl::Seconds(2));

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_LLDP_H_
