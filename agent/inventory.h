#ifndef FABRICCTL_AGENT_INVENTORY_H_
#define FABRICCTL_AGENT_INVENTORY_H_

#include <map>
#include <string>

#include "probes/audit/sysfs_root.h"
#include "proto/inventory.pb.h"

namespace fabricctl::agent {

struct InventoryOptions {
  // Name the node registers under; empty: the hostname.
  std::string node_name;
  // HOST:PORT the controller dials to reach this agent.
  std::string agent_address;
  std::map<std::string, std::string> labels;
};

// Collects this node's inventory: hostname, interfaces (getifaddrs, MTU and speed from sysfs),
// RDMA devices (libibverbs) or the reason there are none, and the memlock limit. GPUs are
// listed by the GPU back-end when it is loaded; until then gpu_unavailable_reason says so.
v1::NodeInventory CollectInventory(const InventoryOptions& options,
                                   const probes::SysfsRoot& sysfs);

// The kernel's hostname.
std::string Hostname();

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_INVENTORY_H_
