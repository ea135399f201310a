#ifndef FABRICCTL_CONTROLLER_VERDICT_ANALYSIS_H_
#define FABRICCTL_CONTROLLER_VERDICT_ANALYSIS_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "controller/verdict/robust_stats.h"
#include "proto/config.pb.h"
#include "proto/finding.pb.h"

namespace fabricctl::controller {

// What the analysis knows of one node of a sweep.
struct NodeInput {
  std::string name;
  bool reachable = true;
  std::string unreachable_reason;
  // MTU of the interface that carries the node's agent address; 0 when unknown.
  uint32_t netdev_mtu = 0;
  std::string netdev;  // that interface's name
  // Set when an RDMA probe was asked for and this node has no usable RDMA device.
  std::string rdma_unavailable_reason;
  // False when the node's profile expects no RDMA of it (a CPU-only or storage node): its
  // missing RDMA device is then a warning, not a drain. `profile` names the matching profile.
  bool rdma_expected = true;
  std::string profile;
  // Set when a probe asked for GPU memory and this node's could not be registered for RDMA.
  std::string gpudirect_unavailable_reason;
  // Where the node sits: its group at each of AnalysisInput::levels ("" where unknown), and
  // the port of its leaf switch it is cabled to, where LLDP or ibnetdiscover said.
  std::vector<std::string> place;
  std::string switch_port;
  // A known-good member of the fleet the others are judged beside (SweepRequest's
  // reference_nodes): the references' figure among themselves is their yardstick (reference.h).
  bool reference = false;
  // A reference's figure where it last passed (its known-good record's median bandwidth, of
  // this sweep's bandwidth probe), NaN where none: the yardstick's fallback (reference.h).
  float stored_gbps = std::numeric_limits<float>::quiet_NaN();
};

// How a pair's measurement ended.
enum class PairStatus : uint8_t {
  kMeasured,
  kRefused,      // an agent refused or could not start the probe: no evidence about the path
  kUnreachable,  // the probe failed or ran out of time between two agents that answer
  kNotMeasured,  // an end was unreachable
};

// One direction of a measured pair: its headline bandwidth (the best attempt's average at the
// largest message size), what its other attempts measured, how much its sender retransmitted,
// and under what load. NaN where not measured.
struct DirectionInput {
  float bw_gbps = std::numeric_limits<float>::quiet_NaN();
  // The worst attempt's figure (the best's after one attempt), and the second worst (NaN after
  // fewer than two attempts).
  float worst_gbps = std::numeric_limits<float>::quiet_NaN();
  float next_worst_gbps = std::numeric_limits<float>::quiet_NaN();
  // The share of segments its sender retransmitted (TCP_INFO), where it rests on
  // kMinLossSegments segments or more; NaN otherwise.
  float loss_rate = std::numeric_limits<float>::quiet_NaN();
  // Whether the receiving host's own drops could account for that loss (the attempt's
  // ProbeResult.receiver_drops): the host's, not the link's.
  bool receiver_dropped = false;
  // How many probes the sweep had running while the kept figure was taken (ProbeResult's
  // concurrency; 0: unknown): the yardstick comes from the figures taken under full load.
  float concurrency = 0;
};

// One measured pair, compact (8.4 M of these for a 4,096-node full sweep): its two directions,
// client to server (forward) and back (reverse, when measured), and its typical latency at the
// smallest size; NaN when the sweep had no such probe or it did not measure.
struct PairInput {
  uint32_t client = 0;  // node indices
  uint32_t server = 0;
  DirectionInput forward, reverse;
  float lat_us = std::numeric_limits<float>::quiet_NaN();
  // The latency's 99th percentile at the smallest size, where it rests on enough samples.
  float lat_p99_us = std::numeric_limits<float>::quiet_NaN();
  float lat_concurrency = 0;  // as DirectionInput::concurrency
  PairStatus status = PairStatus::kMeasured;
  // How many times the pair was measured; above 1, the figures are the best of the attempts.
  uint16_t attempts = 1;
  // An RDMA probe was asked for and the pair could only use TCP.
  bool tcp_fallback = false;
  // Index into AnalysisInput::reasons for failures; -1 when none.
  int32_t reason = -1;

  // A direction as evidence: who sends, who receives, its figures.
  struct Direction {
    uint32_t from, to;
    const DirectionInput& figures;
    bool reverse;  // server to client
  };
  std::array<Direction, 2> Directions() const {
    return {{{client, server, forward, false}, {server, client, reverse, true}}};
  }
  // The worse of the two directions' bandwidths, of those measured (NaN: neither).
  float WorseBw() const {
    if (std::isnan(reverse.bw_gbps)) return forward.bw_gbps;
    if (std::isnan(forward.bw_gbps)) return reverse.bw_gbps;
    return std::min(forward.bw_gbps, reverse.bw_gbps);
  }
};

// One flow of a pair's bandwidth probe (tcp_bw's streams under `sweep --flows`): its pair and
// direction, its own figure, and the routers its trace named by TTL (indices into
// AnalysisInput::routers, -1 where a hop did not answer); empty hops: not traced.
struct FlowInput {
  uint32_t pair = 0;
  bool reverse = false;  // server to client
  float bw_gbps = std::numeric_limits<float>::quiet_NaN();
  std::vector<int32_t> hops;
  // Its trace reached the destination with every hop answering: it shows every link it crossed.
  bool complete = false;
};

struct AnalysisInput {
  std::vector<NodeInput> nodes;
  std::vector<PairInput> pairs;
  std::vector<std::string> reasons;
  v1::Expectations expect;
  v1::Thresholds thresholds;
  // The bandwidth probe is an RDMA probe, so expect.link_rate_gbps applies to it (a TCP
  // probe is judged only against its peers).
  bool bandwidth_is_rdma = false;
  std::string bandwidth_probe;  // "rdma_write_bw", "tcp_bw"; for finding details
  std::string latency_probe;
  // Flagged pairs were re-tested: a node is blamed only when its re-tested pairs agree, and a
  // pair is unstable only after kUnstableAttempts attempts.
  bool require_retest = false;
  // The topology's levels, lowest first (label keys such as "leaf", "spine"); empty: none.
  std::vector<std::string> levels;
  // The flows of the kept bandwidth attempts (at most kMaxFlowInputs), and the routers their
  // traces named (a name where the tracing host's resolver had one, else the address).
  std::vector<FlowInput> flows;
  std::vector<std::string> routers;
};

// The flows one analysis keeps (a 1,000-node full sweep with 8 flows a pair has 8 million).
inline constexpr size_t kMaxFlowInputs = 2'000'000;

// Segments a direction must have sent before its retransmitted share is judged.
inline constexpr uint64_t kMinLossSegments = 1000;

// Attempts a pair needs, with re-tests on, before it can be called unstable: the first and two
// re-tests, so that one chance low beside a good figure is not enough on its own.
inline constexpr uint16_t kUnstableAttempts = 3;

enum class Verdict : uint8_t { kOk, kWarning, kCritical, kUnknown };

// Which of a node's directions a fault is in: what it sends, what it receives, or both.
enum class Side : uint8_t { kNone = 0, kSend = 1, kReceive = 2, kBoth = 3 };

struct NodeResult {
  Verdict verdict = Verdict::kOk;
  float median_bw_gbps = std::numeric_limits<float>::quiet_NaN();
  float robust_z = std::numeric_limits<float>::quiet_NaN();
  uint32_t pairs = 0;  // peers it was measured with
  bool straggler = false;
  Side side = Side::kNone;  // of a bandwidth straggler
  bool path_down = false;   // its probes fail with most of its peers
  // In a split fleet's slow group (fleet_split.h): its pairs' figures are the split's evidence,
  // not their links'.
  bool split_slow = false;
};

// One direction's verdict: slow against the typical figure or the floor; retransmitting far
// more than the fabric does.
struct DirectionResult {
  bool slow = false;
  bool lossy = false;
};

struct PairResult {
  Verdict verdict = Verdict::kOk;
  bool slow = false;                 // either direction
  DirectionResult forward, reverse;  // client -> server, server -> client
  bool high_latency = false;
  bool high_tail = false;  // its latency's p99 stands out (high_latency then too)
  // Its attempts disagree: a direction fine at its best and far below typical at its worst
  // (the sweep measures it again), and `unstable` when two of its attempts were far below (a
  // flapping link or NIC; one low attempt that its re-tests cleared was a passing event).
  bool disagrees = false;
  bool unstable = false;
  bool unreachable = false;
  // The worse direction's bandwidth over the typical one.
  float relative_bw = std::numeric_limits<float>::quiet_NaN();
  // Index into AnalysisResult::paths of the switch-level fault that explains it; -1: none.
  int32_t path = -1;
};

// A fault of what groups of nodes share rather than of a node: the path between two groups
// (two leaves), one group's uplink (a leaf to the rest of the fabric), a group's switch itself
// (its members slow even to each other), or the switches above a set of groups (every two
// leaves of a spine slow to each other, each fine within: the spine).
struct PathFault {
  // kEcmpLink: one member of an equal-cost group (ecmp.h): the links in `links`, which the
  // flows measured cannot tell apart, or without traces the paths between groups a and b.
  enum class Kind : uint8_t { kPath, kUplink, kSwitch, kAbove, kEcmpLink };
  Kind kind = Kind::kPath;
  // The topology level's label key ("leaf"), or "" for groups found from the figures alone.
  std::string level;
  // Group names: a and b for a path; a for an uplink or a switch; for the switches above, a is
  // their parent group's name ("" at the top level) and b lists the groups below them.
  std::string a, b;
  std::vector<uint32_t> members_a, members_b;  // node indices
  // The slow pairs it explains (indices into AnalysisInput::pairs), and how many of its pairs
  // were measured at all (the slow ones included).
  std::vector<uint32_t> pairs;
  uint32_t measured = 0;
  // The pairs it is judged against (within groups of its level): their typical figure.
  double reference_gbps = std::nan("");
  // The median of its slow pairs' worse direction.
  double slow_median_gbps = std::nan("");
  // Of its pairs that were re-tested, how many stayed slow and how many recovered.
  uint32_t stayed = 0, recovered = 0;
  // kEcmpLink: the links ("leaf-1 - spine-2"), its flows slow and all its flows judged, and
  // their median figure as a share of the same pairs' other flows'.
  std::vector<std::string> links;
  uint32_t slow_flows = 0, flows = 0;
  double flow_share = std::nan("");
};

struct AnalysisResult {
  std::vector<NodeResult> nodes;
  std::vector<PairResult> pairs;
  std::vector<v1::Finding> findings;
  // Faults of the fabric between nodes (paths, uplinks, switches) that explain slow pairs.
  std::vector<PathFault> paths;
  float best_bw_gbps = std::numeric_limits<float>::quiet_NaN();
  // The fabric's typical bandwidth: the median over nodes of each node's median figure.
  float median_bw_gbps = std::numeric_limits<float>::quiet_NaN();
  float best_lat_us = std::numeric_limits<float>::quiet_NaN();
  // The pairs' bandwidth noise on a log scale (the directions no blamed node explains): what
  // one figure, or the rail's typical one, is judged beside.
  float bw_log_spread = std::numeric_limits<float>::quiet_NaN();
};

// Turns one rail's measurements into verdicts and findings: the contract.
// - Pure: the same input gives the same result; nothing is read but `input`, nothing written.
// - Every figure is judged against the fabric's own typical figure under like conditions and
//   the healthy figures' spread (robust_stats.h), never against the best pair; thresholds come
//   from input.thresholds and expectations from input.expect, nothing else.
// - With input.require_retest, nothing is blamed on figures that did not survive a re-test
//   (retests.h says what agreeing re-tests are).
// - Every node and pair of the input has its result (same indices); findings name nodes by
//   AnalysisInput::nodes' names, pairs by their two ends, switch elements by their groups
//   (AnalysisResult::paths), and carry their kind's catalogue severity and action
//   (report/findings.h).
// The rules themselves, for users and for code, are docs/verdicts.md; the passes that apply
// them, in order, are passes.h.
AnalysisResult Analyze(const AnalysisInput& input);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_ANALYSIS_H_
