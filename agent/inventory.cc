#include "agent/inventory.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/lldp.h"
#include "base/pci_topology.h"
#include "base/utf8.h"
#include "base/version.h"
#include "probes/gpu/cuda.h"
#include "probes/gpu/nccl.h"
#include "probes/rdma/device.h"

namespace fabricctl::agent {
namespace {

// `text` trimmed, at most kMaxAttributeBytes, and valid UTF-8.
std::string Bounded(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  text = absl::StripTrailingAsciiWhitespace(text.substr(0, kMaxAttributeBytes));
  return ValidUtf8(std::string(text));
}

// A sysfs attribute, Bounded; empty when absent.
std::string Attribute(const probes::SysfsRoot& sysfs, const std::string& path) {
  auto text = sysfs.Read(path);
  return text.ok() ? Bounded(*text) : "";
}

// The last component of a link's target ("../../../0000:18:00.0", ".../drivers/mlx5_core"),
// Bounded; empty when `path` is not a link.
std::string LinkName(const probes::SysfsRoot& sysfs, const std::string& path) {
  auto target = sysfs.ReadLink(path);
  return target.ok() ? Bounded(target->substr(target->rfind('/') + 1)) : "";
}

// "0000:18:00.0": domain:bus:device.function, nothing that could leave /sys/bus/pci/devices.
// "DDDD:BB:DD.F" as sysfs names a PCI function: a domain of 4 hex digits, or more where it is
// above 0xffff (a VMD domain, "10000:01:00.0"), at most 8.
bool IsPciAddress(const std::string& s) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon < 4 || colon > 8 || s.size() != colon + 8) return false;
  const std::string rest = s.substr(colon);  // ":BB:DD.F"
  if (rest[3] != ':' || rest[6] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == colon || i == colon + 3 || i == colon + 6) continue;
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

void AddInterfaces(const probes::SysfsRoot& sysfs, const NetdevFirmwareSource& firmware,
                   v1::NodeInventory* inventory) {
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) return;
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, &::freeifaddrs);
  std::map<std::string, v1::NetInterface> by_name;
  for (ifaddrs* it = raw; it != nullptr; it = it->ifa_next) {
    v1::NetInterface& itf = by_name[it->ifa_name];
    itf.set_name(it->ifa_name);
    itf.set_up((it->ifa_flags & IFF_UP) != 0);
    if (it->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (it->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr, text,
                sizeof(text));
      itf.add_addresses(text);
    } else if (it->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(it->ifa_addr)->sin6_addr, text,
                sizeof(text));
      itf.add_addresses(text);
    }
  }
  for (auto& [name, itf] : by_name) {
    ReadInterfaceAttributes(sysfs, &itf);
    // Only a PCI device has firmware to speak of; veths and bridges come by the thousand.
    if (firmware && !itf.pci_path().empty()) {
      if (auto version = firmware(name); version.ok()) {
        itf.set_firmware(Bounded(*version));
      }
    }
    *inventory->add_interfaces() = std::move(itf);
  }
}

// Each interface's LLDP neighbour, or why there is none.
void AddLldpNeighbors(const std::string& socket, v1::NodeInventory* inventory) {
  auto neighbors = ReadLldpNeighbors(socket);
  if (!neighbors.ok()) {
    inventory->set_lldp_unavailable_reason(std::string(neighbors.status().message()));
    return;
  }
  for (auto& itf : *inventory->mutable_interfaces()) {
    auto it = neighbors->find(itf.name());
    if (it != neighbors->end()) *itf.mutable_lldp() = it->second;
  }
  if (neighbors->empty()) inventory->set_lldp_unavailable_reason("lldpd knows no neighbour");
}

void AddRdmaDevices(const probes::SysfsRoot& sysfs, v1::NodeInventory* inventory) {
  auto devices = probes::ListRdmaDevices(sysfs);
  if (!devices.ok()) {
    inventory->set_rdma_unavailable_reason(std::string(devices.status().message()));
    return;
  }
  for (const auto& device : *devices) {
    v1::RdmaDevice* out = inventory->add_rdma_devices();
    out->set_name(device.name);
    out->set_node_guid(device.node_guid);
    out->set_pci_address(device.pci_address);
    out->set_numa_node(device.numa_node);
    for (const auto& port : device.ports) {
      v1::RdmaPort* p = out->add_ports();
      p->set_port(port.port);
      p->set_state(port.state);
      p->set_phys_state(port.phys_state);
      p->set_link_layer(port.link_layer);
      p->set_rate_gbps(port.rate_gbps);
      p->set_active_mtu(port.active_mtu_bytes);
      p->set_lid(port.lid);
      p->set_netdev(port.netdev);
    }
    ReadRdmaDeviceAttributes(sysfs, out);
  }
}

}  // namespace

GpuInventory CollectGpus(const probes::SysfsRoot& sysfs) {
  GpuInventory out;
  // The CUDA driver is asked in a child process: a hung or crashing driver costs the timeout.
  auto gpus = probes::ListGpus(absl::Seconds(20));
  if (!gpus.ok()) {
    out.unavailable_reason = std::string(gpus.status().message());
    out.nccl_unavailable_reason = "no GPU";
    return out;
  }
  // NCCL matters only beside GPUs.
  auto nccl = probes::FindNccl(absl::Seconds(20));
  if (nccl.ok()) {
    out.nccl_version = *nccl;
  } else {
    out.nccl_unavailable_reason = std::string(nccl.status().message());
  }
  for (auto& gpu : *gpus) {
    ReadGpuAttributes(sysfs, &gpu);
    out.gpus.push_back(std::move(gpu));
  }
  return out;
}

absl::StatusOr<std::string> ReadNetdevFirmware(const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError("not a netdev name: '" + netdev + "'");
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&info);
  const int result = ::ioctl(fd, SIOCETHTOOL, &ifr);
  const int error = errno;
  ::close(fd);
  if (result < 0) {
    return absl::UnavailableError(
        absl::StrCat(netdev, ": ETHTOOL_GDRVINFO: ", std::strerror(error)));
  }
  // The kernel fills fixed arrays, NUL-terminated within them.
  std::string firmware(info.fw_version, ::strnlen(info.fw_version, sizeof(info.fw_version)));
  firmware = std::string(absl::StripAsciiWhitespace(firmware));
  // Drivers without a firmware to name leave it empty or write "N/A".
  if (firmware.empty() || firmware == "N/A") {
    return absl::NotFoundError(absl::StrCat(netdev, ": its driver reports no firmware version"));
  }
  return firmware;
}

std::optional<v1::PcieLink> ReadPcieLink(const probes::SysfsRoot& sysfs,
                                         const std::string& address) {
  if (!IsPciAddress(address)) return std::nullopt;
  const std::string dir = "/sys/bus/pci/devices/" + address;
  v1::PcieLink link;
  link.set_speed(Attribute(sysfs, dir + "/current_link_speed"));
  link.set_max_speed(Attribute(sysfs, dir + "/max_link_speed"));
  bool any = !link.speed().empty() || !link.max_speed().empty();
  uint32_t lanes = 0;
  if (absl::SimpleAtoi(Attribute(sysfs, dir + "/current_link_width"), &lanes)) {
    link.set_width(lanes);
    any = true;
  }
  if (absl::SimpleAtoi(Attribute(sysfs, dir + "/max_link_width"), &lanes)) {
    link.set_max_width(lanes);
    any = true;
  }
  if (!any) return std::nullopt;
  return link;
}

void ReadInterfaceAttributes(const probes::SysfsRoot& sysfs, v1::NetInterface* itf) {
  const std::string dir = absl::StrCat("/sys/class/net/", itf->name());
  uint32_t value = 0;
  if (absl::SimpleAtoi(Attribute(sysfs, dir + "/mtu"), &value)) itf->set_mtu(value);
  // Where its PCI device sits (virtual interfaces have none), for the GPU nearest it.
  itf->set_numa_node(-1);
  if (auto link = sysfs.ReadLink(dir); link.ok()) itf->set_pci_path(PciPathOf(*link));
  int numa = -1;
  if (absl::SimpleAtoi(Attribute(sysfs, dir + "/device/numa_node"), &numa)) {
    itf->set_numa_node(numa);
  }
  // speed reads -1 or fails (EINVAL) for virtual or down links: then unknown (0).
  int speed = 0;
  if (absl::SimpleAtoi(Attribute(sysfs, dir + "/speed"), &speed) && speed > 0) {
    itf->set_speed_mbps(static_cast<uint32_t>(speed));
  }
  itf->set_driver(LinkName(sysfs, dir + "/device/driver"));
  // The PCI function is the last component of its path ("pci0000:17/.../0000:18:00.0").
  const std::string& path = itf->pci_path();
  if (auto pcie = ReadPcieLink(sysfs, path.substr(path.rfind('/') + 1)); pcie.has_value()) {
    *itf->mutable_pcie() = std::move(*pcie);
  }
}

void ReadRdmaDeviceAttributes(const probes::SysfsRoot& sysfs, v1::RdmaDevice* device) {
  const std::string dir = absl::StrCat("/sys/class/infiniband/", device->name());
  device->set_fw_ver(Attribute(sysfs, dir + "/fw_ver"));
  device->set_board_id(Attribute(sysfs, dir + "/board_id"));
  device->set_hca_type(Attribute(sysfs, dir + "/hca_type"));
  if (auto pcie = ReadPcieLink(sysfs, device->pci_address()); pcie.has_value()) {
    *device->mutable_pcie() = std::move(*pcie);
  }
}

void ReadGpuAttributes(const probes::SysfsRoot& sysfs, v1::Gpu* gpu) {
  const std::string address = SysfsPciAddress(gpu->pci_bus_id());
  if (!IsPciAddress(address)) return;
  const std::string dir = "/sys/bus/pci/devices/" + address;
  int node = -1;
  if (absl::SimpleAtoi(Attribute(sysfs, dir + "/numa_node"), &node)) gpu->set_numa_node(node);
  if (auto link = sysfs.ReadLink(dir); link.ok()) gpu->set_pci_path(PciPathOf(*link));
  if (auto pcie = ReadPcieLink(sysfs, address); pcie.has_value()) {
    *gpu->mutable_pcie() = std::move(*pcie);
  }
}

std::string SysfsPciAddress(const std::string& bus_id) {
  const std::string lower = absl::AsciiStrToLower(bus_id);
  const size_t colon = lower.find(':');
  uint32_t domain = 0;
  // NVML's domain has 8 digits ("00000000:17:00.0"); sysfs prints it with 4 at least.
  if (colon == std::string::npos || colon > 8 ||
      !absl::SimpleHexAtoi(absl::string_view(lower).substr(0, colon), &domain)) {
    return lower;
  }
  return absl::StrCat(absl::Hex(domain, absl::kZeroPad4), lower.substr(colon));
}

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

v1::NodeInventory CollectInventory(const InventoryOptions& options,
                                   const probes::SysfsRoot& sysfs) {
  v1::NodeInventory inventory;
  inventory.set_hostname(Hostname());
  inventory.set_node_name(options.node_name.empty() ? inventory.hostname() : options.node_name);
  inventory.set_agent_address(options.agent_address);
  inventory.set_agent_version(kVersion);
  for (const auto& [key, value] : options.labels) (*inventory.mutable_labels())[key] = value;
  AddInterfaces(sysfs, options.netdev_firmware, &inventory);
  AddLldpNeighbors(options.lldp_socket, &inventory);
  AddRdmaDevices(sysfs, &inventory);
  for (const auto& gpu : options.gpus.gpus) *inventory.add_gpus() = gpu;
  inventory.set_gpu_unavailable_reason(options.gpus.unavailable_reason);
  inventory.set_nccl_version(options.gpus.nccl_version);
  inventory.set_nccl_unavailable_reason(options.gpus.nccl_unavailable_reason);
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    inventory.set_memlock_limit_bytes(
        limit.rlim_cur == RLIM_INFINITY ? std::numeric_limits<uint64_t>::max() : limit.rlim_cur);
  }
  return inventory;
}

}  // namespace fabricctl::agent
