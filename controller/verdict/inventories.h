#ifndef FABRICCTL_CONTROLLER_VERDICT_INVENTORIES_H_
#define FABRICCTL_CONTROLLER_VERDICT_INVENTORIES_H_

// A node as the rules on inventories see it (config_drift, miscabled): its name, whether its
// agent answered this sweep, and the inventory it registered. A view: the inventory is the
// caller's, and outlives the call.
#include <string>
#include <vector>

#include "proto/inventory.pb.h"

namespace fabricctl::controller {

struct NodeFacts {
  std::string name;
  bool reachable = true;
  const v1::NodeInventory& inventory;
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_INVENTORIES_H_
