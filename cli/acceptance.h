#ifndef FABRICCTL_CLI_ACCEPTANCE_H_
#define FABRICCTL_CLI_ACCEPTANCE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::cli {

// `fabricctl accept`'s judgement, apart from the RPCs: which nodes to judge new nodes against,
// and the verdict on each new node over the passes' reports.

// The most reference nodes chosen from the registry: enough that one bad reference is outvoted,
// few enough that each pass stays a small sweep.
inline constexpr size_t kAutoReferences = 4;
// The fewest references a judgement against them needs (the verdict's reference rule asks for
// two: one reference alone cannot be told from a bad one).
inline constexpr size_t kMinReferences = 2;

// Up to kAutoReferences registered nodes that are online, known-good (not lost) and not among
// `new_nodes`: first those that share a label (key and value: a spine, a pod) with a new node
// in the site's own placement (`placed`: the configuration's `nodes:`, with Slurm's topology
// and ibnetdiscover merged in), never by the labels an agent reports about itself (any node
// could label itself into a new rack); then the most recently passed. Fewer when the registry
// has fewer.
std::vector<std::string> AutoReferences(
    const std::vector<std::string>& new_nodes, const v1::ListNodesResponse& registry,
    const google::protobuf::RepeatedPtrField<v1::NodeLabels>& placed);

// --reference NODES: each registered and none of them a new node (INVALID_ARGUMENT naming the
// node otherwise). A reference that is not known-good is allowed (the operator's choice) and
// named in `warnings`.
absl::Status CheckReferences(const std::vector<std::string>& references,
                             const std::vector<std::string>& new_nodes,
                             const v1::ListNodesResponse& registry,
                             std::vector<std::string>* warnings);

// The check a finding's kind belongs to: "cabling", "configuration", "reachable" or "fabric".
std::string CheckOf(const std::string& kind);

// The verdict on each new node over the passes' reports: a node is accepted when no warning or
// critical finding of any pass names it (as its node, or as the peer of a pair with a
// reference). Each finding is kept once, with evidence `passes` ("2 of 3"). A configuration
// finding whose kind every reference shows too is the fleet's state, not the node's difference:
// kept as shared, failing nothing. Findings that name only reference nodes, or no node at all,
// are kept apart. Each new node carries its figures beside the references' on each rail, the
// medians over every pass (Acceptance.Figures).
v1::Acceptance Judge(const std::vector<std::string>& new_nodes,
                     const std::vector<std::string>& references,
                     const std::vector<v1::Report>& passes);

// 2 (critical) when a node is rejected; else 3 when a pass gave no verdict (or none ran): an
// acceptance cut short accepts nobody; else by the worst fabric finding about a reference (the
// figures the new nodes were judged against) or finding about no single node; else 0.
int AcceptanceExitCode(const v1::Acceptance& acceptance);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_ACCEPTANCE_H_
