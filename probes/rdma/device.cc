#include "probes/rdma/device.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fabricctl::probes {

DeviceList::DeviceList() {
  errno = 0;
  devices_ = ibv_get_device_list(&count_);
  if (devices_ == nullptr) {
    error_ = errno ? errno : ENODEV;
    count_ = 0;
  }
}

DeviceList::~DeviceList() {
  if (devices_ != nullptr) ibv_free_device_list(devices_);
}

double LaneSpeedGbps(uint8_t active_speed) {
  // IBTA encodings of PortInfo:LinkSpeedActive / LinkSpeedExtActive as libibverbs reports them.
  switch (active_speed) {
    case 1:
      return 2.5;  // SDR
    case 2:
      return 5.0;  // DDR
    case 4:
      return 10.0;  // QDR
    case 8:
      return 10.0;  // FDR10 (10.3125 signalling, 64b/66b)
    case 16:
      return 14.0;  // FDR
    case 32:
      return 25.0;  // EDR
    case 64:
      return 50.0;  // HDR
    case 128:
      return 100.0;  // NDR
    default:
      return 0.0;
  }
}

int WidthLanes(uint8_t active_width) {
  switch (active_width) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

std::string PortStateName(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
  }
  return "UNKNOWN";
}

absl::StatusOr<std::vector<RdmaDeviceInfo>> ListRdmaDevices(const SysfsRoot& sysfs) {
  DeviceList list;
  if (list.error() != 0) {
    return absl::NotFoundError(absl::StrCat(
        "no RDMA device (libibverbs cannot list devices: ", std::strerror(list.error()), ")"));
  }
  if (list.size() == 0) {
    return absl::NotFoundError("no RDMA device (libibverbs lists none)");
  }
  std::vector<RdmaDeviceInfo> out;
  for (int i = 0; i < list.size(); ++i) {
    RdmaDeviceInfo info;
    info.name = ibv_get_device_name(list[i]);
    info.node_guid = absl::StrFormat("%016x", be64toh(ibv_get_device_guid(list[i])));
    const std::string dev_dir = absl::StrCat("/sys/class/infiniband/", info.name);
    if (auto link = sysfs.ReadLink(dev_dir + "/device"); link.ok()) {
      info.pci_address = link->substr(link->rfind('/') + 1);
    }
    if (auto numa = sysfs.ReadTrimmed(dev_dir + "/device/numa_node"); numa.ok()) {
      info.numa_node = std::atoi(numa->c_str());
    }
    ContextPtr context(ibv_open_device(list[i]));
    if (!context) {
      out.push_back(std::move(info));  // listed, but not openable: no ports to report
      continue;
    }
    ibv_device_attr device_attr{};
    if (ibv_query_device(context.get(), &device_attr) != 0) {
      out.push_back(std::move(info));
      continue;
    }
    for (uint32_t port = 1; port <= device_attr.phys_port_cnt; ++port) {
      ibv_port_attr attr{};
      if (ibv_query_port(context.get(), static_cast<uint8_t>(port), &attr) != 0) continue;
      RdmaPortInfo p;
      p.port = port;
      p.state = PortStateName(attr.state);
      p.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
      p.rate_gbps = LaneSpeedGbps(attr.active_speed) * WidthLanes(attr.active_width);
      p.active_mtu_bytes = attr.active_mtu >= IBV_MTU_256 && attr.active_mtu <= IBV_MTU_4096
                               ? 128u << attr.active_mtu
                               : 0;
      p.lid = attr.lid;
      const std::string port_dir = absl::StrCat(dev_dir, "/ports/", port);
      if (auto phys = sysfs.ReadTrimmed(port_dir + "/phys_state"); phys.ok()) {
        size_t space = phys->find(' ');
        p.phys_state = space == std::string::npos ? *phys : phys->substr(space + 1);
      }
      if (auto ndev = sysfs.ReadTrimmed(port_dir + "/gid_attrs/ndevs/0"); ndev.ok()) {
        p.netdev = *ndev;
      }
      info.ports.push_back(std::move(p));
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace fabricctl::probes
