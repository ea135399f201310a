#ifndef FABRICCTL_PROBES_RDMA_DEVICE_H_
#define FABRICCTL_PROBES_RDMA_DEVICE_H_

#include <infiniband/verbs.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "probes/sysfs/sysfs_root.h"

namespace fabricctl::probes {

// What libibverbs says about one port.
struct RdmaPortInfo {
  uint32_t port = 0;
  std::string state;       // "ACTIVE", "DOWN", ...
  std::string phys_state;  // "LinkUp", "Polling", ... (from sysfs; empty when unreadable)
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  double rate_gbps = 0;    // active width x lane speed
  uint32_t active_mtu_bytes = 0;
  uint32_t lid = 0;
  std::string netdev;  // RoCE: the netdev of GID 0; empty when none
};

struct RdmaDeviceInfo {
  std::string name;         // "mlx5_0"
  std::string node_guid;    // 16 hex digits
  std::string pci_address;  // "0000:18:00.0" or empty
  int numa_node = -1;
  std::vector<RdmaPortInfo> ports;
};

// Owns the array from ibv_get_device_list.
class DeviceList {
 public:
  DeviceList();
  ~DeviceList();
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;

  int size() const { return count_; }
  ibv_device* operator[](int i) const { return devices_[i]; }
  // errno of a failed ibv_get_device_list, 0 on success (an empty list is a success).
  int error() const { return error_; }

 private:
  ibv_device** devices_ = nullptr;
  int count_ = 0;
  int error_ = 0;
};

// Owns an opened device context.
struct ContextDeleter {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;

// Every RDMA device and port libibverbs sees. Sysfs (through `sysfs`) adds what verbs does not
// say: PCI address, NUMA node, physical state, netdev. NotFound with the reason when there is
// no device at all (no provider, no kernel module, or none present).
absl::StatusOr<std::vector<RdmaDeviceInfo>> ListRdmaDevices(const SysfsRoot& sysfs);

// Per-lane speed in Gb/s of ibv_port_attr.active_speed, and lanes of active_width.
double LaneSpeedGbps(uint8_t active_speed);
int WidthLanes(uint8_t active_width);
// "ACTIVE" for IBV_PORT_ACTIVE, and so on.
std::string PortStateName(ibv_port_state state);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_DEVICE_H_
