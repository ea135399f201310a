#ifndef FABRICCTL_AGENT_RAIL_H_
#define FABRICCTL_AGENT_RAIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "probes/common/params.h"
#include "probes/sysfs/sysfs_root.h"
#include "proto/inventory.pb.h"

namespace fabricctl::agent {

// The first IPv4 address of interface `netdev` on this node. NotFound names the interface and
// says what is missing (no such interface, no IPv4 address).
absl::StatusOr<std::string> InterfaceIpv4(const std::string& netdev);

// Places a probe on its rail: with params->netdev set, source_host becomes that interface's
// IPv4 address and, for an RDMA probe naming no device, the device becomes the one whose port
// carries the netdev. A node without the rail is FailedPrecondition naming it. No netdev: no
// change.
// With params->nearest_gpu and GPU memory, rdma.gpu becomes the first of `gpus` nearest the
// netdev's NIC (NearestGpus; unchanged when none is near).
absl::Status ResolveRail(const probes::SysfsRoot& sysfs, const std::vector<v1::Gpu>& gpus,
                         probes::ProbeParams* params);

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_RAIL_H_
