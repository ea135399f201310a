#ifndef FABRICCTL_REPORT_FINDINGS_H_
#define FABRICCTL_REPORT_FINDINGS_H_

#include <string>
#include <vector>

#include "proto/finding.pb.h"

// The catalogue of finding kinds: every kind fabricctl can report, with its severity and
// action decided here once. A rule (an audit, the sweep's analysis, a log parser) decides
// *whether* a finding applies and writes its detail; it does not choose how bad it is.
//
// A new finding kind is one entry in kCatalogue (findings.cc), one constant below, a row in
// docs/findings.md's table and the name in proto/finding.proto's comment; findings_test
// checks that the three lists agree.
namespace fabricctl::report {

// The kinds, as constants so that a typo is a build error.
namespace kind {
inline constexpr char kStragglerNode[] = "straggler_node";
inline constexpr char kSlowLink[] = "slow_link";
inline constexpr char kHighLatencyLink[] = "high_latency_link";
inline constexpr char kTcpFallback[] = "tcp_fallback";
inline constexpr char kRdmaUnavailable[] = "rdma_unavailable";
inline constexpr char kGpudirectUnavailable[] = "gpudirect_unavailable";
inline constexpr char kLinkDown[] = "link_down";
inline constexpr char kLinkRateDegraded[] = "link_rate_degraded";
inline constexpr char kPcieDegraded[] = "pcie_degraded";
inline constexpr char kMtuMismatch[] = "mtu_mismatch";
inline constexpr char kRoceMtuLow[] = "roce_mtu_low";
inline constexpr char kPfcMisconfigured[] = "pfc_misconfigured";
inline constexpr char kEcnDisabled[] = "ecn_disabled";
inline constexpr char kDscpTrustMissing[] = "dscp_trust_missing";
inline constexpr char kNumaMisaffinity[] = "numa_misaffinity";
inline constexpr char kAcsEnabled[] = "acs_enabled";
inline constexpr char kCounterErrors[] = "counter_errors";
inline constexpr char kOpticsAlarm[] = "optics_alarm";
inline constexpr char kOpticsWarning[] = "optics_warning";
inline constexpr char kNcclEnvMisconfigured[] = "nccl_env_misconfigured";
inline constexpr char kMemlockTooLow[] = "memlock_too_low";
inline constexpr char kAllreduceBelowThreshold[] = "allreduce_below_threshold";
inline constexpr char kNodeUnreachable[] = "node_unreachable";
inline constexpr char kProbeFailed[] = "probe_failed";
inline constexpr char kProbeTimeout[] = "probe_timeout";
inline constexpr char kRegression[] = "regression";
inline constexpr char kLinkUnreachable[] = "link_unreachable";
inline constexpr char kInsufficientData[] = "insufficient_data";
inline constexpr char kAuditFailed[] = "audit_failed";
inline constexpr char kFabricDegraded[] = "fabric_degraded";
inline constexpr char kSlowPath[] = "slow_path";
inline constexpr char kSlowUplink[] = "slow_uplink";
inline constexpr char kSlowSwitch[] = "slow_switch";
inline constexpr char kSlowEcmpLink[] = "slow_ecmp_link";
inline constexpr char kNodeBandwidthLimited[] = "node_bandwidth_limited";
inline constexpr char kSlowNic[] = "slow_nic";
inline constexpr char kRailMissing[] = "rail_missing";
inline constexpr char kSlowRail[] = "slow_rail";
inline constexpr char kKnownGood[] = "known_good";
inline constexpr char kBelowReference[] = "below_reference";
inline constexpr char kConfigDrift[] = "config_drift";
inline constexpr char kMiscabled[] = "miscabled";
inline constexpr char kDrainBreakerOpen[] = "drain_breaker_open";
inline constexpr char kFleetSplit[] = "fleet_split";
inline constexpr char kUnstable[] = "unstable";
inline constexpr char kLossyLink[] = "lossy_link";
inline constexpr char kLinkFlapping[] = "link_flapping";
inline constexpr char kLinkErrors[] = "link_errors";
inline constexpr char kHostDropping[] = "host_dropping";
inline constexpr char kDrainGivenBack[] = "drain_given_back";
}  // namespace kind

// What a finding is about.
enum class Subject { kNode, kPair, kPort, kDevice, kFabric, kSwitch };

// Whom a warning or critical finding of a kind concerns: the nodes whose pass (known-good) a
// sweep that raises it does not grant, and ends (controller/verdict/earned.h).
enum class Concerns {
  kNamed,        // the node it names, and the peer where it names a pair
  kMembers,      // the nodes behind the switch or path: its evidence's members and peer_members
  kEveryJudged,  // every node the sweep judged: a fabric, a rail on every node, the verdict
  kNobody,       // an ok kind: says nothing against anyone
};

// Who may raise a kind: the node's agent (its audits, its probes' own logs, its link watch),
// the controller (from every node's figures, inventories and the verdict), or both. The trust
// boundary (controller/sweep/trust.cc) drops a kind an agent may not raise.
enum class RaisedBy { kAgent, kController, kBoth };

// One kind: its default severity and action, and where the kind has one, a second level for
// a documented circumstance (`alternate_when`), e.g. rdma_unavailable on a node from which no
// RDMA is expected is a warning rather than a reason to drain.
struct FindingKind {
  const char* name;
  v1::Severity severity;
  v1::Action action;
  Subject subject;
  Concerns concerns;
  RaisedBy raised_by;
  const char* summary;  // one line: what it means
  v1::Severity alternate_severity = v1::SEVERITY_UNSPECIFIED;
  v1::Action alternate_action = v1::ACTION_UNSPECIFIED;
  const char* alternate_when = "";
};

// Every kind, in the order of docs/findings.md.
const std::vector<FindingKind>& Catalogue();

// nullptr when `name` is not a kind.
const FindingKind* FindKind(const std::string& name);

// Whether a node's agent may raise `kind` about its own node (RaisedBy kAgent or kBoth).
bool AgentMayRaise(const std::string& kind);

// Whether a kind is about how a node is configured (its audits, its inventory against the
// references': MTU, PFC, RDMA and GPUDirect availability, NCCL's environment, a missing rail)
// rather than what its links measured or how its hardware is (a link down, errors counted, a
// link or PCIe slot trained low). A configuration warning is the node's standing state,
// raised by every sweep with audits alike (a fleet without RDMA warns of it on every node).
bool IsConfigurationKind(const std::string& kind);

// Whom `f` concerns among `judged` (the sweep's judged nodes): the catalogue's Concerns of its
// kind applied to it; nobody for a finding below warning. A kMembers finding that lists no
// member, and a kind not in the catalogue, concern every judged node.
std::vector<std::string> ConcernedNodes(const v1::Finding& f,
                                        const std::vector<std::string>& judged);

// Which of a kind's two levels a rule asks for.
enum class Level { kDefault, kAlternate };

// A finding of `kind` about `node` with the catalogue's severity and action (or its alternate
// level; asking for one a kind does not have is a programming error and aborts). The caller
// fills in the peer, device, port and evidence that apply.
v1::Finding Make(const std::string& kind, std::string node, std::string detail,
                 Level level = Level::kDefault);
// The same about the pair node -> peer.
v1::Finding MakePair(const std::string& kind, std::string node, std::string peer,
                     std::string detail, Level level = Level::kDefault);

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_FINDINGS_H_
