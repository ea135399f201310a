#ifndef FABRICCTL_CONTROLLER_SWEEP_FLEET_H_
#define FABRICCTL_CONTROLLER_SWEEP_FLEET_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/store/store.h"
#include "controller/sweep/agent_client.h"
#include "controller/sweep/trust.h"
#include "controller/verdict/inventories.h"
#include "proto/controller.pb.h"
#include "proto/inventory.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::controller::sweep {

// One node of a sweep, as the sweep knows it.
struct Node {
  std::string name;
  std::string address;
  v1::NodeInventory inventory;
  bool reachable = true;
  std::string reason;  // why not reachable
  // An RPC to this node failed in transport during the sweep: ask again whether it is there.
  std::atomic<bool> transport_failures{false};
};

// OK when `address` (HOST:PORT, what the node's agent answered as a probe server's or a ring
// rank's endpoint) is the node's own: the host the controller dials its agent at, or an address
// its inventory lists (or none at all). A lying agent must not point its peers' probes at
// another host.
absl::Status OwnAddress(const Node& node, const std::string& address);

// The nodes of a sweep, in the registry's order; indices into `nodes` name them everywhere.
struct Fleet {
  std::vector<std::unique_ptr<Node>> nodes;
  std::map<uint32_t, std::vector<v1::AuditResult>> audits;  // by node index, when asked for
  // The largest bandwidth a probe result of this sweep may claim (the sweep sets it from the
  // expected link rates: MaxPlausibleGbps).
  double max_gbps = kBandwidthCeilingGbps;

  // Indices of the reachable nodes.
  std::vector<uint32_t> Live() const;
  // Each node as the rules on inventories see it (a view: valid while the fleet is).
  std::vector<NodeFacts> Facts() const;
  // What the nodes' link watches found (AskLinkWatch), every node's.
  std::vector<v1::Finding> WatchFindings() const;
  const std::string& Name(uint32_t i) const { return nodes[i]->name; }
};

// The registry's nodes the request names (all when it names none). A named node that is not
// registered is in the fleet without an address (CheckReachable reports it unregistered, and
// the verdict names it node_unreachable); a fleet of no node is FAILED_PRECONDITION.
absl::StatusOr<Fleet> SelectNodes(const v1::SweepRequest& request,
                                  const std::vector<StoredNode>& registry);

// The most agent calls the node stages below make at once: a fleet of any size costs the
// controller at most this many threads (each waits on one call).
inline constexpr size_t kMaxParallelCalls = 256;

// Asks every node (kMaxParallelCalls at a time) for its inventory: one that does not answer within
// `deadline` is unreachable, with the reason, and left out of the plan. With `only_suspect`, only
// the reachable nodes whose RPCs failed in transport are asked again.
void CheckReachable(AgentClient& agents, Fleet& fleet, absl::Duration deadline,
                    bool only_suspect = false);

// The node audits of every reachable node, kMaxParallelCalls at a time; a node whose audits cannot
// run gets one AUDIT_FAILED result with the reason.
void RunNodeAudits(AgentClient& agents, Fleet& fleet, absl::Duration deadline);

// Every reachable node's link watch (the agent's "link_watch" audit: what its links did between
// sweeps and during this one), asked once the measurements are done and kept among the node's
// audits in place of one its audits gave earlier. A node that cannot say (an older agent, gone
// since) keeps what it had; this never fails a sweep.
void AskLinkWatch(AgentClient& agents, Fleet& fleet, absl::Duration deadline);

// gpu_copy on every reachable node, kMaxParallelCalls at a time (each node copies to and from its
// own GPUs; nothing crosses the fabric), added to the node's audits as "gpu_copy": measured,
// skipped (no GPU) or failed with the reason.
void RunGpuCopies(AgentClient& agents, Fleet& fleet, const v1::ProbeSpec& spec,
                  absl::Duration deadline);

// A node's labels as the topology sees them: its own, the configuration's (nodes:, topology
// files), and with topology.lldp, its leaf from LLDP where it has none (the system name of the
// switch the agent's interface is cabled to) and each rail's leaf (`<leaf>@<rail>`: the switch
// the rail's interface is cabled to).
// Built once per use over a fleet: the configuration's nodes: entries indexed by name.
class Placement {
 public:
  explicit Placement(const v1::Config& config);
  // The node's labels: the administrator's (nodes:, Slurm's topology, ibnetdiscover) over
  // those LLDP gives (topology.lldp), over the agent's own --label. `placed_by`, when given,
  // says which source gave its first topology level: "configuration", "lldp", "agent label",
  // or "" when none did.
  std::map<std::string, std::string> LabelsOf(const Node& node,
                                              std::string* placed_by = nullptr) const;

 private:
  const v1::Config& config_;
  std::map<std::string, const v1::NodeLabels*> entries_;
};

// A node's group at `level` on `rail` (labels as Placement gives them): its label
// `<level>@<rail>` (a rail's own leaf: from the configuration, or LLDP on the rail's interface),
// else its label `<level>`; "" when it has neither.
std::string GroupAt(const std::map<std::string, std::string>& labels, const std::string& level,
                    const std::string& rail);

// The MTU of the interface that holds the address the node's agent registered with, and that
// interface's name; 0 when not found. What the sweep's MTU check compares.
uint32_t AgentInterfaceMtu(const v1::NodeInventory& inventory, std::string* interface_name);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_FLEET_H_
