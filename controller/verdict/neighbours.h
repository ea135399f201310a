#ifndef FABRICCTL_CONTROLLER_VERDICT_NEIGHBOURS_H_
#define FABRICCTL_CONTROLLER_VERDICT_NEIGHBOURS_H_

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "controller/verdict/inventories.h"
#include "proto/config.pb.h"

namespace fabricctl::controller {

// What a node's interface (or HCA) is cabled to, for the cabling checks: its LLDP neighbour, else,
// for an InfiniBand HCA port, the switch port topology.ibnetdiscover shows it on.
struct Seen {
  bool exists = false;                  // the node has the interface or the HCA
  std::string switch_name;              // empty: no neighbour seen
  std::string port;                     // as a finding shows it
  std::vector<std::string> port_names;  // what a planned port may match
  std::string source;                   // "LLDP", "ibnetdiscover" (looked, saw none); "": LLDP only
  // An InfiniBand HCA port of a node the ibnetdiscover file does not show at all (taken before
  // the node was cabled): nothing is known of its cabling.
  bool unknown = false;
};

class Neighbours {
 public:
  explicit Neighbours(const v1::Topology& topology);

  // `name` is an interface, or an HCA (a plan for an InfiniBand fabric may name it, mlx5_0);
  // `rail`, when given, may name the HCA of its interface (rdma_device). An HCA port is looked
  // up in the ibnetdiscover file only where LLDP shows nothing and the port's link layer is
  // InfiniBand: by the HCA's node GUID and the port number, else by its NodeDescription
  // ("node device") and the port number.
  Seen Of(const NodeFacts& node, const std::string& name, const v1::Rail* rail) const;

  // The node's HCA `name` names (itself, or the one whose port carries the interface `name`),
  // "" when none; for matching a plan's lines to rails.
  static std::string HcaName(const v1::NodeInventory& inventory, const std::string& name);

 private:
  // (GUID digits, port) and (node, device, port) -> the cable.
  std::map<std::pair<std::string, uint32_t>, const v1::IbCable*> by_guid_;
  std::map<std::tuple<std::string, std::string, uint32_t>, const v1::IbCable*> by_name_;
  std::set<std::string> hosts_, guids_;  // the nodes and HCAs the file shows
};

// "Ethernet1/1, swp1": the switch port as LLDP names it.
std::string PortOf(const v1::LldpNeighbor& lldp);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_NEIGHBOURS_H_
