#ifndef FABRICCTL_AGENT_LINK_STATE_H_
#define FABRICCTL_AGENT_LINK_STATE_H_

#include <string>
#include <vector>

#include "probes/sysfs/sysfs_root.h"
#include "proto/inventory.pb.h"

namespace fabricctl::agent {

// The links a heartbeat reports: the NICs of the registered inventory (interfaces with an IPv4
// address and a link speed, as the controller compares them) and its RDMA ports.
struct WatchedLinks {
  std::vector<std::string> interfaces;
  std::vector<std::pair<std::string, uint32_t>> rdma_ports;  // device, port
  static WatchedLinks Of(const v1::NodeInventory& inventory);
  // The links the agent's link watch samples: those of Of(), and a NIC with a PCI device and an
  // IPv4 address whose link was down when the agent started (no speed yet): the link that
  // flaps at bring-up is the one to watch.
  static WatchedLinks ToWatch(const v1::NodeInventory& inventory);
};

// Whether `netdev` stands for other links rather than being one: a bridge (its carrier falls
// when its last port goes, a container's), a bond (its slaves are the links), a tun/tap device.
// Neither watched nor counted in the heartbeat.
bool IsAggregate(const probes::SysfsRoot& sysfs, const std::string& netdev);

// Their state now, as one line for the heartbeat (HeartbeatRequest.link_state): "eth0 up 100000
// Mb/s carrier_changes 2; mlx5_0:1 ACTIVE 400 Gb/sec link_downed 0". Read from sysfs each time
// (a few small files); a file that cannot be read reads "?", a counter the kernel lacks is left
// out. A change from one heartbeat to the next, a flap between them included, ends the node's
// known-good state at the controller.
std::string LinkState(const probes::SysfsRoot& sysfs, const WatchedLinks& links);

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_LINK_STATE_H_
