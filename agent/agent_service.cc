#include "agent/agent_service.h"

#include "base/tls.h"

namespace fabricctl::agent {

AgentService::AgentService(std::string controller_identity,
                           std::function<v1::NodeInventory()> inventory)
    : controller_identity_(std::move(controller_identity)), inventory_(std::move(inventory)) {}

grpc::Status AgentService::GetInventory(grpc::ServerContext* context,
                                        const v1::GetInventoryRequest* request,
                                        v1::NodeInventory* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  *response = inventory_();
  return grpc::Status::OK;
}

}  // namespace fabricctl::agent
