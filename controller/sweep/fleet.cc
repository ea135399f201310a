#include "controller/sweep/fleet.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "base/net_address.h"
#include "base/parallel.h"
#include "base/utf8.h"
#include "controller/sweep/inventory_check.h"
#include "controller/sweep/trust.h"
#include "probes/gpu/copy_audit.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {

std::vector<uint32_t> Fleet::Live() const {
  std::vector<uint32_t> live;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->reachable) live.push_back(i);
  }
  return live;
}

absl::StatusOr<Fleet> SelectNodes(const v1::SweepRequest& request,
                                  const std::vector<StoredNode>& registry) {
  Fleet fleet;
  const std::set<std::string> named(request.nodes().begin(), request.nodes().end());
  std::set<std::string> selected;
  for (const auto& stored : registry) {
    if (!named.empty() && named.count(stored.inventory.node_name()) == 0) continue;
    selected.insert(stored.inventory.node_name());
    auto node = std::make_unique<Node>();
    node->name = stored.inventory.node_name();
    node->address = stored.inventory.agent_address();
    node->inventory = stored.inventory;
    fleet.nodes.push_back(std::move(node));
  }
  // A named node the controller does not know is part of the verdict: unreachable (a node
  // whose agent never came up must hold the job), not an error that fails the whole sweep.
  for (const auto& name : request.nodes()) {
    if (selected.insert(name).second) {
      auto node = std::make_unique<Node>();
      node->name = name;  // no address: CheckReachable reports it unregistered
      fleet.nodes.push_back(std::move(node));
    }
  }
  // One node is a sweep too: its audits and its own GPUs' all-reduce (pair probes say they
  // need two); none is not.
  if (fleet.nodes.empty()) {
    return absl::FailedPreconditionError("a sweep needs at least 1 node; none is registered");
  }
  return fleet;
}

void CheckReachable(AgentClient& agents, Fleet& fleet, absl::Duration deadline, bool only_suspect) {
  std::vector<Node*> asked;
  for (auto& node : fleet.nodes) {
    if (only_suspect && !(node->reachable && node->transport_failures)) continue;
    if (node->address.empty()) {
      node->reachable = false;
      node->reason = "not registered with the controller (is its fabric-agent running?)";
      continue;
    }
    asked.push_back(node.get());
  }
  ParallelFor(asked.size(), kMaxParallelCalls, [&](size_t k) {
    Node* n = asked[k];
    auto inventory = agents.GetInventory(n->address, deadline);
    absl::Status valid = inventory.ok() ? ValidateInventory(*inventory) : inventory.status();
    if (valid.ok() && inventory->node_name() != n->name) {
      // The agent at this node's address answers as another node: not this node's agent.
      valid = absl::FailedPreconditionError(absl::StrCat(
          "answers as '", PrintableText(inventory->node_name()), "', not as ", n->name));
    } else if (inventory.ok() && !valid.ok()) {
      valid =
          absl::InvalidArgumentError(absl::StrCat("its inventory is invalid: ", valid.message()));
    }
    if (valid.ok()) {
      n->inventory = *std::move(inventory);
      SanitizeText(&n->inventory);
      n->reachable = true;
    } else {
      n->reachable = false;
      n->reason = PrintableText(absl::StrCat(n->address, ": ", valid.message()));
    }
    n->transport_failures = false;
  });
}

void RunNodeAudits(AgentClient& agents, Fleet& fleet, absl::Duration deadline) {
  Mutex mu;
  const std::vector<uint32_t> live = fleet.Live();
  ParallelFor(live.size(), kMaxParallelCalls, [&](size_t k) {
    const uint32_t i = live[k];
    auto response = agents.RunAudits(fleet.nodes[i]->address, v1::RunAuditsRequest(), deadline);
    std::vector<v1::AuditResult> results;
    if (response.ok()) {
      results.assign(response->audits().begin(), response->audits().end());
      // Facts about the node that answered, and findings only about it.
      AcceptAudits(fleet.Name(i), &results);
    } else {
      v1::AuditResult failed;
      failed.set_audit("all");
      failed.set_outcome(v1::AUDIT_FAILED);
      failed.set_reason(PrintableText(std::string(response.status().message())));
      results = {failed};
    }
    MutexLock lock(&mu);
    fleet.audits[i] = std::move(results);
  });
}

void AskLinkWatch(AgentClient& agents, Fleet& fleet, absl::Duration deadline) {
  Mutex mu;
  const std::vector<uint32_t> live = fleet.Live();
  v1::RunAuditsRequest request;
  request.add_audits("link_watch");
  ParallelFor(live.size(), kMaxParallelCalls, [&](size_t k) {
    const uint32_t i = live[k];
    auto response = agents.RunAudits(fleet.nodes[i]->address, request, deadline);
    if (!response.ok() || response->audits_size() != 1 ||
        response->audits(0).audit() != "link_watch") {
      return;
    }
    std::vector<v1::AuditResult> results = {response->audits(0)};
    AcceptAudits(fleet.Name(i), &results);
    MutexLock lock(&mu);
    std::vector<v1::AuditResult>& audits = fleet.audits[i];
    audits.erase(std::remove_if(audits.begin(), audits.end(),
                                [](const v1::AuditResult& a) { return a.audit() == "link_watch"; }),
                 audits.end());
    audits.push_back(std::move(results[0]));
  });
}

std::vector<NodeFacts> Fleet::Facts() const {
  std::vector<NodeFacts> out;
  out.reserve(nodes.size());
  for (const auto& node : nodes)
    out.push_back(NodeFacts{node->name, node->reachable, node->inventory});
  return out;
}

std::vector<v1::Finding> Fleet::WatchFindings() const {
  std::vector<v1::Finding> out;
  for (const auto& [i, results] : audits) {
    for (const auto& audit : results) {
      if (audit.audit() != "link_watch") continue;
      for (const auto& f : audit.findings()) out.push_back(f);
    }
  }
  return out;
}

void RunGpuCopies(AgentClient& agents, Fleet& fleet, const v1::ProbeSpec& spec,
                  absl::Duration deadline) {
  Mutex mu;
  const std::vector<uint32_t> live = fleet.Live();
  ParallelFor(live.size(), kMaxParallelCalls, [&](size_t k) {
    const uint32_t i = live[k];
    v1::RunLocalProbeRequest request;
    *request.mutable_spec() = spec;
    request.set_run_id(absl::StrCat("gpu_copy-", fleet.Name(i)));
    auto response = agents.RunLocalProbe(fleet.nodes[i]->address, request, deadline);
    v1::ProbeResult result;
    if (response.ok()) {
      result = response->result();
      AcceptResult(fleet.Name(i), spec, MaxPlausibleGbps(0), &result);
    } else {
      result.set_outcome(v1::PROBE_FAILED);
      result.set_reason(std::string(response.status().message()));
      if (absl::IsUnavailable(response.status())) fleet.nodes[i]->transport_failures = true;
    }
    v1::AuditResult audit = probes::GpuCopyAudit(result);
    MutexLock lock(&mu);
    fleet.audits[i].push_back(std::move(audit));
  });
}

absl::Status OwnAddress(const Node& node, const std::string& address) {
  if (address.empty()) return absl::OkStatus();  // NCCL's ranks meet by their unique id, not here
  auto endpoint = ParseHostPort(address, "endpoint");
  if (!endpoint.ok())
    return absl::PermissionDeniedError(
        absl::StrCat("its endpoint '", address.substr(0, 64), "' is no HOST:PORT"));
  auto agent = ParseHostPort(node.address, "agent address");
  if (agent.ok() && agent->host == endpoint->host) return absl::OkStatus();
  for (const auto& itf : node.inventory.interfaces()) {
    for (const auto& a : itf.addresses()) {
      if (a == endpoint->host) return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "its endpoint's host ", endpoint->host.substr(0, 64), " is none of its own addresses"));
}

Placement::Placement(const v1::Config& config) : config_(config) {
  for (const auto& entry : config.nodes()) entries_.emplace(entry.node(), &entry);
}

std::map<std::string, std::string> Placement::LabelsOf(const Node& node,
                                                       std::string* placed_by) const {
  // Lowest precedence first, each source overriding the one before: the agent's own --label,
  // then what its lldpd learned, then the administrator's (nodes:, Slurm's topology,
  // ibnetdiscover). A node's agent places it only where nothing else does: one that lies
  // about its place cannot join another node's leaf.
  const auto& own = node.inventory.labels();
  std::map<std::string, std::string> labels(own.begin(), own.end());
  const auto& topology = config_.topology();
  const std::string first = topology.levels().empty() ? "" : topology.levels(0);
  std::string source = !first.empty() && labels.count(first) ? "agent label" : "";
  if (topology.lldp() && !first.empty()) {
    std::string netdev;
    AgentInterfaceMtu(node.inventory, &netdev);
    for (const auto& itf : node.inventory.interfaces()) {
      if (itf.lldp().system_name().empty()) continue;
      if (itf.name() == netdev) {
        labels[first] = itf.lldp().system_name();
        source = "lldp";
      }
      // Each rail's leaf: the switch its interface is cabled to.
      for (const auto& rail : config_.rails()) {
        if (itf.name() == rail.netdev())
          labels[absl::StrCat(first, "@", rail.name())] = itf.lldp().system_name();
      }
    }
  }
  if (auto it = entries_.find(node.name); it != entries_.end()) {
    for (const auto& [key, value] : it->second->labels()) labels[key] = value;
    if (!first.empty() && it->second->labels().count(first)) source = "configuration";
  }
  if (placed_by != nullptr) *placed_by = source;
  return labels;
}

std::string GroupAt(const std::map<std::string, std::string>& labels, const std::string& level,
                    const std::string& rail) {
  if (!rail.empty()) {
    if (auto it = labels.find(absl::StrCat(level, "@", rail)); it != labels.end())
      return it->second;
  }
  auto it = labels.find(level);
  return it == labels.end() ? "" : it->second;
}

uint32_t AgentInterfaceMtu(const v1::NodeInventory& inventory, std::string* interface_name) {
  auto address = ParseHostPort(inventory.agent_address(), "agent_address");
  if (!address.ok()) return 0;
  for (const auto& itf : inventory.interfaces()) {
    for (const auto& a : itf.addresses()) {
      if (a == address->host) {
        if (interface_name) *interface_name = itf.name();
        return itf.mtu();
      }
    }
  }
  return 0;
}

}  // namespace fabricctl::controller::sweep
