#ifndef FABRICCTL_CLI_ACCEPTANCE_H_
#define FABRICCTL_CLI_ACCEPTANCE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/controller.pb.h"

namespace fabricctl::cli {

// `fabricctl accept`'s choice of the nodes to judge new nodes against (the verdict over the
// passes is the controller's: controller/verdict/acceptance.h).

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

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_ACCEPTANCE_H_
