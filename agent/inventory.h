#ifndef FABRICCTL_AGENT_INVENTORY_H_
#define FABRICCTL_AGENT_INVENTORY_H_

#include <map>
#include <string>
#include <vector>

#include "probes/sysfs/sysfs_root.h"
#include "proto/inventory.pb.h"

namespace fabricctl::agent {

// The node's GPUs as the CUDA driver lists them, or why there are none, and NCCL's version. Listing
// forks a child process (the driver may hang or crash), so agents do it once, at start.
struct GpuInventory {
  std::vector<v1::Gpu> gpus;
  std::string unavailable_reason;
  std::string nccl_version;  // empty: no NCCL, and nccl_unavailable_reason says why
  std::string nccl_unavailable_reason;
};
GpuInventory CollectGpus(const probes::SysfsRoot& sysfs);

struct InventoryOptions {
  // Name the node registers under; empty: the hostname.
  std::string node_name;
  // HOST:PORT the controller dials to reach this agent.
  std::string agent_address;
  std::map<std::string, std::string> labels;
  GpuInventory gpus;
  // lldpd's control socket, for each interface's LLDP neighbour ("" its default).
  std::string lldp_socket;
};

// Collects this node's inventory: hostname, interfaces (getifaddrs, MTU and speed from sysfs,
// the switch port at the other end from lldpd where it runs),
// RDMA devices (libibverbs) or the reason there are none, the GPUs of options.gpus, and the
// memlock limit.
v1::NodeInventory CollectInventory(const InventoryOptions& options, const probes::SysfsRoot& sysfs);

// The kernel's hostname.
std::string Hostname();

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_INVENTORY_H_
