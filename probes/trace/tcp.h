#ifndef FABRICCTL_PROBES_TRACE_TCP_H_
#define FABRICCTL_PROBES_TRACE_TCP_H_

#include <netinet/in.h>

#include <string>

#include "probes/common/cancel.h"
#include "probes/common/result.h"
#include "probes/trace/path.h"

namespace fabricctl::probes {

// Traces a TCP flow's path with the flow's own 5-tuple (as fbtracert and 007 do for TCP): for
// TTL 1, 2, ... a non-blocking connect() from flow.source to flow.destination with that TTL and
// IP_RECVERR, so that the SYN is hashed onto the same equal-cost path as the flow's data; a
// router's ICMP time exceeded ends that connect and its address comes back on the socket's
// error queue (SO_EE_OFFENDER); a connection, a refusal or an ICMP from the destination itself
// ends the trace (flow.traced). Needs no privilege. The flow's own connection must be gone
// (closed with a reset, as tcp_bw closes its streams), or its port cannot be bound again.
// `interface` (empty: the routing table's) is the one the SYNs leave by (SO_BINDTODEVICE).
void TraceTcpFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel,
                  const std::string& interface = "");

// One SYN from `source` (port 0: any) to `destination` with the given TTL, and what answered
// within `wait`: a router, the destination (a connection or a refusal), or nothing.
HopAnswer SynAtTtl(const sockaddr_in& source, const sockaddr_in& destination, uint32_t ttl,
                   absl::Duration wait, const std::string& interface);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TRACE_TCP_H_
