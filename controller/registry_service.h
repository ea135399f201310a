#ifndef FABRICCTL_CONTROLLER_REGISTRY_SERVICE_H_
#define FABRICCTL_CONTROLLER_REGISTRY_SERVICE_H_

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "controller/store.h"
#include "proto/controller.grpc.pb.h"

namespace fabricctl::controller {

struct RegistryOptions {
  // How often agents heartbeat; sent to each agent at registration.
  absl::Duration heartbeat_interval = absl::Seconds(10);
  // A node with no heartbeat for this long is listed as stale.
  absl::Duration stale_after = absl::Seconds(30);
  // The clock; tests inject their own.
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// Checks a registration before anything is stored: names and addresses present and well
// formed, every list within its bound. Returns InvalidArgument naming the field.
absl::Status ValidateInventory(const v1::NodeInventory& inventory);

// A node's state by the staleness rule.
v1::NodeState NodeStateAt(const StoredNode& node, absl::Time now, absl::Duration stale_after);

// The node registry half of ControllerService: Register, Heartbeat and ListNodes. The sweep
// half is served by the same object once sweeps are implemented; until then those methods
// answer UNIMPLEMENTED (the generated default).
class RegistryService : public v1::ControllerService::Service {
 public:
  RegistryService(Store* store, RegistryOptions options);

  grpc::Status Register(grpc::ServerContext* context, const v1::RegisterRequest* request,
                        v1::RegisterResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override;
  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest* request,
                         v1::ListNodesResponse* response) override;

 private:
  Store* store_;  // not owned
  RegistryOptions options_;
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_REGISTRY_SERVICE_H_
