#ifndef FABRICCTL_CONTROLLER_VERDICT_INVENTORY_DIFF_H_
#define FABRICCTL_CONTROLLER_VERDICT_INVENTORY_DIFF_H_

#include <string>
#include <vector>

#include "proto/inventory.pb.h"

namespace fabricctl::controller {

// One part of an inventory that two differ in: what it is ("interface eth0", "RDMA port
// mlx5_0:1", "GPU 0000:18:00.0", "agent version", "RDMA device mlx5_0 firmware", "interface
// eth0 driver", "GPU 0000:18:00.0 PCIe") and how it reads in each, "none" where one lacks it.
struct InventoryDifference {
  std::string part;
  std::string before;
  std::string after;
};

// "part: before -> after".
std::string Describe(const InventoryDifference& d);

// What changed, between two registrations of one node, that a past verdict on it rests on: its
// agent restarted (it may have been rebooted or reconfigured), a NIC (an interface with an IPv4
// address and a link speed), RDMA port or GPU came or went, a link's rate or MTU changed, an
// RDMA device's firmware, board, HCA type or PCIe link, a NIC's driver, firmware or PCIe link,
// a GPU's PCIe link (read at its maximum on both sides: an idle GPU lowers it), or the agent's
// or NCCL's version. Those that an older agent does not report count only where both
// registrations give them. One line each (Describe), "what: before -> after", in a fixed order;
// empty when nothing that matters changed (an agent registering again after the controller was
// away changes nothing).
std::vector<std::string> InventoryChanges(const v1::NodeInventory& before,
                                          const v1::NodeInventory& after);

// How `node` differs from `reference`, another node that should be configured alike: the same
// comparison as InventoryChanges, less the agents' start times (two nodes' agents never started
// at the same instant). Interfaces, RDMA devices and ports, and GPUs are matched by name, so
// nodes built alike (the same NIC names, the same PCI slots) compare part by part. The
// reference's side is `before`, the node's `after`.
std::vector<InventoryDifference> DifferencesFrom(const v1::NodeInventory& reference,
                                                 const v1::NodeInventory& node);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_INVENTORY_DIFF_H_
