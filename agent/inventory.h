#ifndef FABRICCTL_AGENT_INVENTORY_H_
#define FABRICCTL_AGENT_INVENTORY_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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

// Where the inventory reads a netdev's firmware version: ReadNetdevFirmware on a live node, a
// fake in tests. The version comes from the driver through an ioctl, not from a file.
using NetdevFirmwareSource = std::function<absl::StatusOr<std::string>(const std::string& netdev)>;

// The firmware version the netdev's driver reports to ETHTOOL_GDRVINFO, which needs no
// privilege. NotFound when the driver gives none.
absl::StatusOr<std::string> ReadNetdevFirmware(const std::string& netdev);

struct InventoryOptions {
  // Name the node registers under; empty: the hostname.
  std::string node_name;
  // HOST:PORT the controller dials to reach this agent.
  std::string agent_address;
  std::map<std::string, std::string> labels;
  GpuInventory gpus;
  // lldpd's control socket, for each interface's LLDP neighbour ("" its default).
  std::string lldp_socket;
  // Where the PCI interfaces' firmware versions come from. Unset: none is read (a fixture tree
  // has no kernel behind it).
  NetdevFirmwareSource netdev_firmware;
};

// Collects this node's inventory: hostname, interfaces (getifaddrs, what sysfs says of each, the
// switch port at the other end from lldpd where it runs), RDMA devices (libibverbs, then sysfs)
// or the reason there are none, the GPUs of options.gpus, and the memlock limit.
v1::NodeInventory CollectInventory(const InventoryOptions& options, const probes::SysfsRoot& sysfs);

// The parts of the inventory that sysfs gives, one device at a time, so that tests run them on
// a fixture tree. A file that is absent leaves its field empty (or -1, or 0); every string is
// trimmed and at most kMaxAttributeBytes long.
inline constexpr size_t kMaxAttributeBytes = 128;

// The link of the PCI function at `address` ("0000:18:00.0"):
// /sys/bus/pci/devices/<address>/{current,max}_link_{speed,width}. nullopt when none of them
// reads (a virtual device, a kernel without them) or `address` is not a PCI address.
std::optional<v1::PcieLink> ReadPcieLink(const probes::SysfsRoot& sysfs,
                                         const std::string& address);

// What /sys/class/net/<name> says of the interface itf->name(): MTU, speed, NUMA node, PCI
// path, driver and PCIe link.
void ReadInterfaceAttributes(const probes::SysfsRoot& sysfs, v1::NetInterface* itf);

// What /sys/class/infiniband/<name> says of the RDMA device device->name() (its pci_address
// set): firmware version, board id, HCA type, and the PCIe link of its PCI function.
void ReadRdmaDeviceAttributes(const probes::SysfsRoot& sysfs, v1::RdmaDevice* device);

// What sysfs says of the GPU at gpu->pci_bus_id(): NUMA node, PCI path and PCIe link.
void ReadGpuAttributes(const probes::SysfsRoot& sysfs, v1::Gpu* gpu);

// A GPU driver's bus id in the form sysfs names a PCI function by, "0000:18:00.0": CUDA gives
// that form, NVML an eight-digit domain ("00000000:18:00.0"), either case; a domain above
// 0xffff keeps its digits ("10000:01:00.0", behind a VMD controller).
std::string SysfsPciAddress(const std::string& bus_id);

// The kernel's hostname.
std::string Hostname();

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_INVENTORY_H_
