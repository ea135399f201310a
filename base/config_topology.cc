// The topology files a configuration names (topology.cabling, topology.slurm,
// topology.ibnetdiscover), loaded into it: its cables, and its nodes' labels; see config.h.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cabling_plan.h"
#include "base/config.h"
#include "base/ibnetdiscover.h"
#include "base/slurm_topology.h"
#include "base/status_macros.h"
#include "base/tls.h"

namespace fabricctl {

namespace {

// A file the configuration names, relative to the configuration's directory.
std::string NextTo(const std::string& config_path, const std::string& path) {
  const size_t slash = config_path.rfind('/');
  return path[0] != '/' && slash != std::string::npos ? config_path.substr(0, slash + 1) + path
                                                      : path;
}

// The host ports of an ibnetdiscover file kept as cables, as many as a cabling plan's.
constexpr size_t kMaxIbCables = kMaxCables;

// Each node's switches, lowest first, from topology.slurm or topology.ibnetdiscover (both:
// Slurm's where it names the node).
absl::StatusOr<std::map<std::string, std::vector<std::string>>> TopologyFiles(
    const v1::Topology& topology, const std::string& rdma_device, const std::string& config_path,
    std::map<std::string, std::string>* switch_ports,
    google::protobuf::RepeatedPtrField<v1::IbCable>* ib_cables) {
  std::map<std::string, std::vector<std::string>> tree;
  if (!topology.slurm().empty()) {
    const std::string path = NextTo(config_path, topology.slurm());
    ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path, "topology.slurm"));
    ASSIGN_OR_RETURN(tree, ParseSlurmTopology(text, path));
  }
  if (!topology.ibnetdiscover().empty()) {
    const std::string path = NextTo(config_path, topology.ibnetdiscover());
    ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path, "topology.ibnetdiscover"));
    ASSIGN_OR_RETURN(const auto ports, ParseIbnetdiscover(text, path));
    // A fabric of more host ports places its nodes, but its cables are not kept for accept's
    // cabling checks (a configuration copied into every sweep stays small).
    for (size_t i = 0; ports.size() <= kMaxIbCables && i < ports.size(); ++i) {
      const IbHostPort& port = ports[i];
      v1::IbCable* cable = ib_cables->Add();
      cable->set_node(port.host);
      const size_t space = port.description.find(' ');
      if (space != std::string::npos) cable->set_device(port.description.substr(space + 1));
      cable->set_ca_guid(port.ca_guid);
      cable->set_port(port.port);
      cable->set_switch_name(port.switch_name);
      cable->set_switch_port(port.switch_port);
    }
    // A host with several HCAs (one per rail) is placed by the one the probes use
    // (probes.rdma_device, the NodeDescription's second word), else by its first.
    for (const bool preferred : {true, false}) {
      for (const IbHostPort& port : ports) {
        const std::string device = port.description.substr(port.description.find(' ') + 1);
        if (port.host.empty() || (preferred && (rdma_device.empty() || device != rdma_device)))
          continue;
        if (tree.try_emplace(port.host, std::vector<std::string>{port.switch_name}).second) {
          (*switch_ports)[port.host] = absl::StrCat(port.switch_port);
        }
      }
    }
  }
  return tree;
}

}  // namespace

// The topology files' trees as the nodes' labels; see config.h.
absl::Status LoadTopologyFiles(v1::Config* config, const std::string& config_path) {
  v1::Topology* topology = config->mutable_topology();
  RETURN_IF_ERROR(LoadCablingPlan(
      topology, topology->cabling().empty() ? "" : NextTo(config_path, topology->cabling())));
  if (topology->slurm().empty() && topology->ibnetdiscover().empty()) return absl::OkStatus();
  std::map<std::string, std::string> switch_ports;  // host -> its leaf switch's port (InfiniBand)
  google::protobuf::RepeatedPtrField<v1::IbCable> ib_cables;
  ASSIGN_OR_RETURN(const auto tree, TopologyFiles(*topology, config->probes().rdma_device(),
                                                  config_path, &switch_ports, &ib_cables));
  *topology->mutable_ib_cables() = std::move(ib_cables);
  // The levels a file implies where none are named.
  if (topology->levels().empty()) {
    topology->add_levels("leaf");
    if (!topology->slurm().empty()) topology->add_levels("spine");
  }
  std::map<std::string, v1::NodeLabels*> entries;
  for (auto& entry : *config->mutable_nodes()) entries.emplace(entry.node(), &entry);
  for (const auto& [node, switches] : tree) {
    v1::NodeLabels*& entry = entries[node];
    if (entry == nullptr) {
      entry = config->add_nodes();
      entry->set_node(node);
    }
    for (int l = 0; l < topology->levels_size() && l < static_cast<int>(switches.size()); ++l) {
      entry->mutable_labels()->insert({topology->levels(l), switches[l]});
    }
    // The port of its leaf switch, as "<leaf level>_port" (what a switch finding lists).
    auto port = switch_ports.find(node);
    if (port != switch_ports.end())
      entry->mutable_labels()->insert({topology->levels(0) + "_port", port->second});
  }
  return absl::OkStatus();
}

}  // namespace fabricctl
