#ifndef FABRICCTL_PROBES_TCP_TRACE_H_
#define FABRICCTL_PROBES_TCP_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "probes/common/cancel.h"
#include "probes/common/result.h"

namespace fabricctl::probes {

// Bounds of one flow's trace: the TTLs tried, the wait for each hop's answer, the whole trace's
// time, and how many silent hops in a row end it.
struct TraceLimits {
  uint32_t max_ttl = 16;
  absl::Duration per_hop = absl::Milliseconds(500);
  absl::Duration total = absl::Seconds(5);
  uint32_t max_silent = 3;
};

// Traces a TCP flow's path with the flow's own 5-tuple (Paris traceroute's idea, as fbtracert
// and 007 do for TCP): for TTL 1, 2, ... a non-blocking connect() from flow.source to
// flow.destination with that TTL and IP_RECVERR, so that the SYN is hashed onto the same
// equal-cost path as the flow's data; a router's ICMP time exceeded ends that connect and its
// address comes back on the socket's error queue (SO_EE_OFFENDER); a connection, a refusal or an
// ICMP from the destination itself ends the trace (flow.traced). Needs no privilege. The flow's
// own connection must be gone (closed with a reset, as tcp_bw closes its streams), or its port
// cannot be bound again. Fills flow.hops (each answering router's address, and its name where
// the resolver knows one) and flow.trace_note (why incomplete).
void TraceTcpFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel);

// "IP:PORT" into its parts; false when it is not an IPv4 address and port.
bool SplitAddress(const std::string& text, std::string* ip, uint16_t* port);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TCP_TRACE_H_
