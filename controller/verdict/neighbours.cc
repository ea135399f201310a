#include "controller/verdict/neighbours.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace fabricctl::controller {
namespace {

const v1::NetInterface* InterfaceNamed(const v1::NodeInventory& inventory,
                                       const std::string& name) {
  for (const auto& itf : inventory.interfaces()) {
    if (itf.name() == name) return &itf;
  }
  return nullptr;
}

// A GUID as digits only: lower case, no "0x", no colons, no leading zeros ("0x0C42a1..." and
// sysfs's "0c42:a103:..." alike).
std::string GuidKey(const std::string& guid) {
  std::string out;
  std::string g = guid;
  if (g.rfind("0x", 0) == 0 || g.rfind("0X", 0) == 0) g = g.substr(2);
  for (char c : g) {
    if (c == ':' || (out.empty() && c == '0')) continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

struct HcaPort {
  const v1::RdmaDevice* device = nullptr;
  const v1::RdmaPort* port = nullptr;  // null: the device lists no port
};

// The HCA port `name` names: the rail's rdma_device, an RDMA device of that name, or the one whose
// port carries the interface `name`; its port carrying `name`, else its first.
HcaPort HcaPortOf(const v1::NodeInventory& inventory, const std::string& name,
                  const v1::Rail* rail) {
  const std::string wanted =
      rail != nullptr && !rail->rdma_device().empty() ? rail->rdma_device() : name;
  for (const auto& dev : inventory.rdma_devices()) {
    for (const auto& port : dev.ports()) {
      if (!port.netdev().empty() && port.netdev() == name) return {&dev, &port};
    }
  }
  for (const auto& dev : inventory.rdma_devices()) {
    if (dev.name() == wanted) return {&dev, dev.ports().empty() ? nullptr : &dev.ports(0)};
  }
  return {};
}

}  // namespace

std::string PortOf(const v1::LldpNeighbor& lldp) {
  if (lldp.port_id().empty())
    return lldp.port_description().empty() ? "unknown" : lldp.port_description();
  if (lldp.port_description().empty() || lldp.port_description() == lldp.port_id())
    return lldp.port_id();
  return absl::StrCat(lldp.port_id(), ", ", lldp.port_description());
}

Neighbours::Neighbours(const v1::Topology& topology) {
  for (const v1::IbCable& c : topology.ib_cables()) {
    hosts_.insert(c.node());
    if (!c.ca_guid().empty()) {
      guids_.insert(GuidKey(c.ca_guid()));
      by_guid_.emplace(std::make_pair(GuidKey(c.ca_guid()), c.port()), &c);
    }
    if (!c.device().empty()) by_name_.emplace(std::make_tuple(c.node(), c.device(), c.port()), &c);
  }
}

std::string Neighbours::HcaName(const v1::NodeInventory& inventory, const std::string& name) {
  const HcaPort hca = HcaPortOf(inventory, name, nullptr);
  return hca.device == nullptr ? "" : hca.device->name();
}

Seen Neighbours::Of(const NodeFacts& node, const std::string& name, const v1::Rail* rail) const {
  Seen seen;
  const v1::NetInterface* itf = InterfaceNamed(node.inventory, name);
  seen.exists = itf != nullptr;
  if (itf != nullptr && !itf->lldp().system_name().empty()) {
    seen.switch_name = itf->lldp().system_name();
    seen.port = PortOf(itf->lldp());
    seen.port_names = {itf->lldp().port_id(), itf->lldp().port_description()};
    seen.source = "LLDP";
    return seen;
  }
  if (hosts_.empty()) return seen;
  const HcaPort hca = HcaPortOf(node.inventory, name, rail);
  // Ethernet (RoCE) ports are LLDP's to show; an unknown link layer may be either.
  if (hca.device == nullptr || (hca.port != nullptr && hca.port->link_layer() == "Ethernet"))
    return seen;
  seen.exists = true;
  const uint32_t port = hca.port == nullptr ? 1 : hca.port->port();
  const std::string guid = GuidKey(hca.device->node_guid());
  const v1::IbCable* cable = nullptr;
  if (auto it = by_guid_.find({guid, port}); !guid.empty() && it != by_guid_.end()) {
    cable = it->second;
  } else if (auto named = by_name_.find({node.name, hca.device->name(), port});
             named != by_name_.end()) {
    cable = named->second;
  }
  if (cable == nullptr) {
    seen.unknown = hosts_.count(node.name) == 0 && (guid.empty() || guids_.count(guid) == 0);
    if (!seen.unknown) seen.source = "ibnetdiscover";
    return seen;
  }
  seen.switch_name = cable->switch_name();
  seen.port = absl::StrCat(cable->switch_port());
  seen.port_names = {seen.port};
  seen.source = "ibnetdiscover";
  return seen;
}

}  // namespace fabricctl::controller
