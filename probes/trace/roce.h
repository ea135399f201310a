#ifndef FABRICCTL_PROBES_TRACE_ROCE_H_
#define FABRICCTL_PROBES_TRACE_ROCE_H_

#include <string>

#include "probes/common/cancel.h"
#include "probes/common/result.h"
#include "probes/trace/path.h"

namespace fabricctl::probes {

// Traces a RoCE v2 flow's path with the flow's own 5-tuple: UDP datagrams from flow.source (the
// queue pair's address and UDP source port) to flow.destination (port 4791) with TTL 1, 2, ...
// and IP_RECVERR, each hashed onto the queue pair's equal-cost path; routers answer with ICMP
// time exceeded. A datagram of 8 bytes is too short to be a RoCE packet (a base transport
// header and its ICRC are 16), so a RoCE stack that receives it drops it without a word: where a
// TTL draws no answer, a TCP SYN to the destination's port 4791 with the same TTL asks whether
// that TTL reaches the destination (a reset or a connection: equal-cost paths are equally long,
// whichever one the SYN is hashed onto). A destination that answers the datagram itself (ICMP
// port unreachable: no RoCE there) is reached too. `interface` (the queue pair's netdev; empty:
// the routing table's) is the one the datagrams and SYNs leave by (SO_BINDTODEVICE, which needs
// CAP_NET_RAW). A silent hop waits half its time for the datagram and half for the SYN.
void TraceRoceFlow(Flow& flow, const TraceLimits& limits, const Cancellation* cancel,
                   const std::string& interface = "");

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TRACE_ROCE_H_
