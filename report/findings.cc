#include "report/findings.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "absl/strings/str_split.h"

namespace fabricctl::report {
namespace {

using v1::ACTION_DRAIN;
using v1::ACTION_INVESTIGATE;
using v1::SEVERITY_CRITICAL;
using v1::SEVERITY_WARNING;

// Drain only where the node itself is at fault and a job on it would run slow or fail: a
// straggler, a port down or trained slow, a PCIe link below its width or speed, a node that
// cannot do RDMA at all. Everything else is for a person to look at.
const std::vector<FindingKind>* const kCatalogue = new std::vector<FindingKind>{
    {kind::kStragglerNode, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kNode, Concerns::kNamed,
     RaisedBy::kController,
     "a node slow with most of its peers and a robust outlier among the nodes"},
    {kind::kSlowLink, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController, "a slow pair whose ends are both fine with everyone else"},
    {kind::kHighLatencyLink, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController,
     "a slow-to-answer pair (its median latency, or its p99 tail against the pairs' tails) whose "
     "ends are both fine with everyone else"},
    {kind::kTcpFallback, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode, Concerns::kNamed,
     RaisedBy::kBoth, "traffic that should use RDMA uses (or would use) TCP sockets",
     SEVERITY_WARNING, ACTION_INVESTIGATE,
     "a single node's NCCL chose sockets, no RDMA is expected there and nothing went between "
     "nodes"},
    {kind::kRdmaUnavailable, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kNode, Concerns::kNamed,
     RaisedBy::kBoth, "no usable RDMA device or port on a node", SEVERITY_WARNING,
     ACTION_INVESTIGATE, "no RDMA is expected of the node (expect.link_rate_gbps unset)"},
    {kind::kGpudirectUnavailable, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode,
     Concerns::kNamed, RaisedBy::kBoth, "GPUs that cannot exchange data with the NIC directly",
     SEVERITY_WARNING, ACTION_INVESTIGATE,
     "NCCL's log shows RDMA connections staged through host memory"},
    {kind::kLinkDown, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent, "an RDMA port not ACTIVE / LinkUp"},
    {kind::kLinkRateDegraded, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent, "an RDMA port active below the expected rate"},
    {kind::kPcieDegraded, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kDevice, Concerns::kNamed,
     RaisedBy::kAgent, "a NIC or GPU trained below its PCIe speed or width"},
    {kind::kMtuMismatch, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode, Concerns::kNamed,
     RaisedBy::kBoth, "a netdev MTU that differs from the expected or the fabric's common one"},
    {kind::kRoceMtuLow, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent, "a RoCE MTU below the expected one"},
    {kind::kPfcMisconfigured, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kPort,
     Concerns::kNamed, RaisedBy::kAgent, "PFC off on the expected priority"},
    {kind::kEcnDisabled, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent, "ECN off on the expected priority"},
    {kind::kDscpTrustMissing, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kPort,
     Concerns::kNamed, RaisedBy::kAgent, "a RoCE port that does not trust DSCP"},
    {kind::kNumaMisaffinity, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kDevice,
     Concerns::kNamed, RaisedBy::kAgent,
     "a GPU whose nearest NIC is across the CPU interconnect or on another NUMA node"},
    {kind::kAcsEnabled, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kDevice, Concerns::kNamed,
     RaisedBy::kAgent, "PCIe ACS redirects GPUDirect traffic through the CPU"},
    {kind::kCounterErrors, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent, "error counters rising during the audit window", SEVERITY_CRITICAL,
     ACTION_INVESTIGATE, "the counter is link_downed"},
    {kind::kOpticsAlarm, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent,
     "a pluggable module (transceiver) beyond its own alarm threshold: its temperature or supply "
     "voltage, or a lane's optical power or laser bias; the optic, its fibre or the far end is "
     "failing"},
    {kind::kOpticsWarning, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent,
     "a pluggable module (transceiver) beyond its own warning threshold, not yet its alarm "
     "threshold: a lane or the module drifting out of its operating range"},
    {kind::kNcclEnvMisconfigured, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kNode,
     Concerns::kNamed, RaisedBy::kAgent,
     "NCCL_* variables naming devices or interfaces the node does not have"},
    {kind::kMemlockTooLow, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode, Concerns::kNamed,
     RaisedBy::kAgent, "a locked-memory limit too low to register RDMA buffers"},
    {kind::kAllreduceBelowThreshold, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode,
     Concerns::kNamed, RaisedBy::kController,
     "an all-reduce below its floor or its group's pairwise bandwidth"},
    {kind::kNodeUnreachable, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode,
     Concerns::kNamed, RaisedBy::kController, "an agent that did not answer"},
    {kind::kProbeFailed, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController, "a probe that failed after its re-tests", SEVERITY_CRITICAL,
     ACTION_INVESTIGATE,
     "a collective's data check found wrong elements, or a node's own probe failed"},
    {kind::kProbeTimeout, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController, "a probe that ran past its deadline after its re-tests"},
    {kind::kRegression, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController, "a pair below its figure in the baseline sweep"},
    {kind::kLinkUnreachable, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kPair,
     Concerns::kNamed, RaisedBy::kController,
     "two nodes whose agents answer but whose probes between them fail, both fine with others",
     SEVERITY_CRITICAL, ACTION_DRAIN, "the node's probes fail with most of its peers"},
    {kind::kInsufficientData, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kNode,
     Concerns::kNamed, RaisedBy::kController,
     "a bad pair whose end was measured with too few peers to tell the node from the link; or a "
     "node measured with too few of the sweep's reference nodes to judge it against them"},
    {kind::kAuditFailed, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kNode, Concerns::kNamed,
     RaisedBy::kController,
     "an audit that could not read or run what it checks (unreadable or garbage input); its reason "
     "names what"},
    {kind::kFabricDegraded, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kFabric,
     Concerns::kEveryJudged, RaisedBy::kController,
     "the fabric's typical figure misses an absolute expectation: every pair alike, no node or "
     "link to blame"},
    {kind::kLossyLink, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController,
     "a direction whose sender retransmitted far more of its TCP segments than the fabric does: "
     "the link loses packets",
     SEVERITY_CRITICAL, ACTION_DRAIN,
     "a node lossy to most of its peers, in what it sends or receives: its NIC, optic or cable"},
    {kind::kUnstable, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPair, Concerns::kNamed,
     RaisedBy::kController,
     "a pair whose attempts disagree, fine at best and far below typical at worst: a flapping link",
     SEVERITY_CRITICAL, ACTION_DRAIN,
     "a node unstable with most of the peers it was re-tested with: its NIC flaps"},
    {kind::kFleetSplit, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kFabric,
     Concerns::kEveryJudged, RaisedBy::kController,
     "the fleet falls in two groups by what its nodes reach, with no expected rate to say which is "
     "right: the slow group is named (as the finding's device) and nobody drained; an expectation "
     "or profiles decide"},
    {kind::kSlowPath, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kSwitch, Concerns::kMembers,
     RaisedBy::kController,
     "every pair between two groups of nodes (two leaves) slow, the pairs within each fine: what "
     "joins them, not the hosts"},
    {kind::kSlowUplink, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kSwitch, Concerns::kMembers,
     RaisedBy::kController,
     "every pair from one group (a leaf) to other groups slow, mostly to each of them, while "
     "within it is fine: its uplink; drains nobody"},
    {kind::kSlowSwitch, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kSwitch, Concerns::kMembers,
     RaisedBy::kController,
     "every pair of a group's nodes slow, to each other as well as to the rest: the switch they "
     "share; or every two groups under one parent slow to each other while each is fine within: "
     "the switches above them (the spine); drains nobody"},
    {kind::kSlowEcmpLink, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kSwitch,
     Concerns::kMembers, RaisedBy::kController,
     "the flows of several pairs that crossed one member of an equal-cost group (a leaf-spine "
     "link, named from the flows' traces; without traces, the paths between two leaves) slow, "
     "the same pairs' other flows fine: that member, not the hosts; drains nobody"},
    {kind::kNodeBandwidthLimited, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kNode, Concerns::kNamed,
     RaisedBy::kController,
     "a node whose rails at once reach less than their sum alone with every peer, beyond the "
     "fleet's spread: it cannot feed its NICs together (PCIe root complex, CPU or memory)"},
    {kind::kSlowNic, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kDevice, Concerns::kNamed,
     RaisedBy::kController,
     "a node slow on some of its rails and fine on the others: that rail's NIC (the finding names "
     "the node and the rail); drained, since a job spanning nodes runs every rail at the slowest "
     "NIC's pace"},
    {kind::kRailMissing, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kDevice, Concerns::kNamed,
     RaisedBy::kController,
     "a node lacks a configured rail (no such interface up with an IPv4 address, or no such RDMA "
     "device): measured on its other rails only; drained, as a job would lose that rail's GPU"},
    {kind::kSlowRail, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kFabric,
     Concerns::kEveryJudged, RaisedBy::kController,
     "a rail whose typical figure is well below the fastest rail's while its NICs report the same "
     "link rate, every NIC of it alike: the rail's switch, cabling or optics; drains nobody"},
    {kind::kBelowReference, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kNode, Concerns::kNamed,
     RaisedBy::kController,
     "a node whose figure with the sweep's reference nodes (known-good members of the fleet it "
     "joins) is well below theirs among themselves, though it may be no outlier in the sweep (a "
     "new rack slow as a whole); drained"},
    {kind::kConfigDrift, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kNode, Concerns::kNamed,
     RaisedBy::kController,
     "a node whose inventory differs from most reference nodes of the sweep, part by part: a NIC, "
     "RDMA port or "
     "GPU missing or extra, a link's rate or MTU, the agent's or NCCL's version"},
    {kind::kMiscabled, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kDevice, Concerns::kNamed,
     RaisedBy::kController,
     "a node's NIC of a rail cabled to a switch that is none of that rail's leaves as the "
     "sweep's reference nodes are cabled (LLDP, else ibnetdiscover), or with no neighbour where "
     "every reference "
     "has one; the finding names the node, the rail and what was seen and expected"},
    {kind::kDrainBreakerOpen, SEVERITY_CRITICAL, ACTION_INVESTIGATE, Subject::kFabric,
     Concerns::kEveryJudged, RaisedBy::kController,
     "one verdict would have drained more of the nodes it judged than breaker.max_share allows "
     "(and more than breaker.min_nodes): nobody is drained, the nodes it would have drained are "
     "named; many nodes failing at once is the fabric's or the configuration's fault"},
    {kind::kKnownGood, v1::SEVERITY_OK, v1::ACTION_NONE, Subject::kNode, Concerns::kNobody,
     RaisedBy::kController,
     "a node `fabricctl sweep --max-age` did not measure again: a completed sweep passed it "
     "within that age, its pass covering this sweep's probes and rails, and nothing has changed "
     "on it since"},
    {kind::kLinkFlapping, SEVERITY_CRITICAL, ACTION_DRAIN, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent,
     "a link of the node that went down and came back twice or more within watch.recovery, seen "
     "by the agent's watch between sweeps; drained, as a job on it stalls at each fall",
     SEVERITY_WARNING, ACTION_INVESTIGATE,
     "it went down once within watch.recovery (a re-seated cable, a switch's reboot)"},
    {kind::kLinkErrors, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kPort, Concerns::kNamed,
     RaisedBy::kAgent,
     "a link whose error counters (symbol, CRC, receive, integrity) rose by more than "
     "watch.max_errors within watch.recovery, seen by the agent's watch between sweeps"},
    {kind::kHostDropping, SEVERITY_WARNING, ACTION_INVESTIGATE, Subject::kNode, Concerns::kNamed,
     RaisedBy::kController,
     "a host whose own drop counters (TCP backlog and receive queues, input backlog, NIC ring) "
     "account for what its senders retransmitted to it: its CPU or interrupt affinity, not the "
     "links; no lossy_link for those directions"},
    {kind::kDrainGivenBack, v1::SEVERITY_OK, v1::ACTION_NONE, Subject::kNode, Concerns::kNobody,
     RaisedBy::kController,
     "a node an earlier verdict drained that this sweep re-measured and passed, its link watch "
     "quiet, at least "
     "undrain.after after the drain (undrain.enabled): listed to give back (--format resume)"},
};

v1::Finding MakeAt(const std::string& name, Level level) {
  const FindingKind* k = FindKind(name);
  if (k == nullptr ||
      (level == Level::kAlternate && k->alternate_severity == v1::SEVERITY_UNSPECIFIED)) {
    // A finding kind not in the catalogue is a bug in the caller, not an input error.
    std::fprintf(stderr, "report::Make: '%s' %s\n", name.c_str(),
                 k == nullptr ? "is not a finding kind" : "has no alternate level");
    std::abort();
  }
  v1::Finding f;
  f.set_kind(std::string(k->name));
  f.set_severity(level == Level::kAlternate ? k->alternate_severity : k->severity);
  f.set_action(level == Level::kAlternate ? k->alternate_action : k->action);
  return f;
}

}  // namespace

const std::vector<FindingKind>& Catalogue() { return *kCatalogue; }

bool IsConfigurationKind(const std::string& name) {
  namespace k = kind;
  static const std::set<std::string> kinds = {
      k::kConfigDrift,     k::kRdmaUnavailable,  k::kGpudirectUnavailable, k::kMtuMismatch,
      k::kRoceMtuLow,      k::kPfcMisconfigured, k::kEcnDisabled,          k::kDscpTrustMissing,
      k::kNumaMisaffinity, k::kAcsEnabled,       k::kNcclEnvMisconfigured, k::kMemlockTooLow,
      k::kAuditFailed,     k::kRailMissing,      k::kTcpFallback,
  };

  return kinds.count(name) > 0;
}

bool AgentMayRaise(const std::string& name) {
  const FindingKind* k = FindKind(name);
  return k != nullptr && k->raised_by != RaisedBy::kController;
}

const FindingKind* FindKind(const std::string& name) {
  for (const FindingKind& k : *kCatalogue) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

std::vector<std::string> ConcernedNodes(const v1::Finding& f,
                                        const std::vector<std::string>& judged) {
  if (f.severity() < v1::SEVERITY_WARNING) return {};
  const FindingKind* k = FindKind(f.kind());
  const Concerns concerns = k == nullptr ? Concerns::kEveryJudged : k->concerns;
  std::vector<std::string> out;
  switch (concerns) {
    case Concerns::kNobody:
      return out;
    case Concerns::kNamed:
      for (const std::string* end : {&f.node(), &f.peer()}) {
        if (!end->empty()) out.push_back(*end);
      }
      // A finding about no node at all is about what the sweep judged as a whole.
      return out.empty() ? judged : out;
    case Concerns::kMembers:
      for (const char* key : {"members", "peer_members"}) {
        auto it = f.evidence().find(key);
        if (it == f.evidence().end()) continue;
        for (absl::string_view name : absl::StrSplit(it->second, ',', absl::SkipEmpty()))
          out.emplace_back(name);
      }
      return out.empty() ? judged : out;
    case Concerns::kEveryJudged:
      return judged;
  }
  return judged;
}

v1::Finding Make(const std::string& kind, std::string node, std::string detail, Level level) {
  v1::Finding f = MakeAt(kind, level);
  f.set_node(std::move(node));
  f.set_detail(std::move(detail));
  return f;
}

v1::Finding MakePair(const std::string& kind, std::string node, std::string peer,
                     std::string detail, Level level) {
  v1::Finding f = Make(kind, std::move(node), std::move(detail), level);
  f.set_peer(std::move(peer));
  return f;
}

}  // namespace fabricctl::report
