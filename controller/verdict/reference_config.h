#ifndef FABRICCTL_CONTROLLER_VERDICT_REFERENCE_CONFIG_H_
#define FABRICCTL_CONTROLLER_VERDICT_REFERENCE_CONFIG_H_

#include <set>
#include <string>
#include <vector>

#include "controller/verdict/inventories.h"
#include "proto/finding.pb.h"

namespace fabricctl::controller {

// Each reachable node that is not a reference, against the reachable references' inventories
// (DifferencesFrom): a node that differs from every reference is config_drift, naming what
// differs from the reference it is closest to (the fewest differences: a fleet of two kinds of
// node, each with a reference, judges each node against its own kind). Nothing without a
// reachable reference.
std::vector<v1::Finding> ConfigAgainstReferences(const std::vector<NodeFacts>& nodes,
                                                 const std::set<std::string>& references);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_REFERENCE_CONFIG_H_
