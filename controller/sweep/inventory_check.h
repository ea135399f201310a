#ifndef FABRICCTL_CONTROLLER_SWEEP_INVENTORY_CHECK_H_
#define FABRICCTL_CONTROLLER_SWEEP_INVENTORY_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "proto/inventory.pb.h"

// What the controller accepts as a node's inventory, whether the agent registers it or
// answers it to a sweep's reachability check.
namespace fabricctl::controller {

// A node name as the registry keeps it: 1 to 253 of letters, digits, '-', '.' and '_'.
// InvalidArgument naming `field` otherwise.
absl::Status ValidateNodeName(const std::string& name, const std::string& field);

// The most node names one request may list (a sweep's nodes, a listing's, an acceptance's).
inline constexpr int kMaxListNames = 100000;

// Checks an inventory before anything is stored or used: names and addresses present and well
// formed, every list and string within its bound. Returns InvalidArgument naming the field.
absl::Status ValidateInventory(const v1::NodeInventory& inventory);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_SWEEP_INVENTORY_CHECK_H_
