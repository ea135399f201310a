#ifndef FABRICCTL_PROBES_TRACE_PATH_H_
#define FABRICCTL_PROBES_TRACE_PATH_H_

#include <netinet/in.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

// What one TTL's probe came to: a router's ICMP time exceeded (its address), the destination
// reached, no answer within the wait, or an error that ends the trace.
struct HopAnswer {
  enum class Kind { kRouter, kReached, kSilent, kError } kind = Kind::kSilent;
  std::string address;  // the router's, for kRouter
  std::string error;    // for kError
};

// Sends one TTL's probe of the flow and waits up to the given time for what answers.
using TtlProbe = std::function<HopAnswer(uint32_t ttl, absl::Duration wait)>;

// The TTL loop every flow's trace shares (Paris traceroute's: the flow's own 5-tuple at every
// TTL, so each probe is hashed onto the flow's equal-cost path): TTL 1, 2, ... until the
// destination is reached (flow.traced), an error, max_silent silent hops in a row, max_ttl, the
// total time or a cancellation. Fills flow.hops (each router's address, empty where a TTL was
// silent; RouterNames names them afterwards) and flow.trace_note (why the path is incomplete).
void TracePath(Flow& flow, const TraceLimits& limits, const Cancellation* cancel,
               const TtlProbe& probe);

// The flows' paths one after another ("tcp" flows by TraceTcpFlow, "roce" by TraceRoceFlow),
// leaving by `interface` (empty: the routing table's), within 10 s for them all (a fabric whose
// routers do not answer costs each flow its silent hops' waits, not more), then their routers
// named (names.h). A flow that already has a trace_note (why it cannot be traced) is left as
// it is.
void TraceFlows(std::vector<Flow>& flows, const Cancellation* cancel,
                const std::string& interface = "");

// SO_BINDTODEVICE to `interface` (nothing when empty): "" or what failed.
std::string BindToInterface(int fd, const std::string& interface);

// The ICMP error queued on a socket with IP_RECVERR, if any: a router's time exceeded, the
// destination reached (an error from `destination` itself), or another ICMP error. `quoted`,
// where given, receives what the ICMP message quoted of the probe's payload (for UDP: as much of
// the datagram's data as the router sent back, possibly none).
bool ReadQueuedError(int fd, const sockaddr_in& destination, HopAnswer* answer,
                     std::string* quoted = nullptr);

// "IP:PORT" into a socket address; false when it is not an IPv4 address and port.
bool ParseEndpoint(const std::string& text, sockaddr_in* address);
// A flow's two ends as socket addresses; where one is not an IPv4 address and port, false,
// with the flow untraced and its trace_note saying which.
bool FlowEndpoints(Flow& flow, sockaddr_in* source, sockaddr_in* destination);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TRACE_PATH_H_
