#ifndef FABRICCTL_AGENT_AGENT_SERVICE_H_
#define FABRICCTL_AGENT_AGENT_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>

#include "agent/probe_runner.h"
#include "probes/audit/audit.h"
#include "proto/agent.grpc.pb.h"

namespace fabricctl::agent {

// fabric-agent's gRPC service. Every call must come from the controller's identity when the
// server runs with mutual TLS (PERMISSION_DENIED otherwise); requests are validated against
// the node's caps before anything runs.
class AgentService : public v1::AgentService::Service {
 public:
  // `inventory` is called per request so that the answer is current; `probes` runs the
  // node's probe halves (not owned).
  AgentService(std::string controller_identity, std::function<v1::NodeInventory()> inventory,
               ProbeRunner* probes, probes::AuditContext audits);

  grpc::Status GetInventory(grpc::ServerContext* context, const v1::GetInventoryRequest* request,
                            v1::NodeInventory* response) override;
  grpc::Status RunAudits(grpc::ServerContext* context, const v1::RunAuditsRequest* request,
                         v1::RunAuditsResponse* response) override;
  grpc::Status StartProbeServer(grpc::ServerContext* context,
                                const v1::StartProbeServerRequest* request,
                                v1::StartProbeServerResponse* response) override;
  grpc::Status RunProbeClient(grpc::ServerContext* context,
                              const v1::RunProbeClientRequest* request,
                              v1::RunProbeClientResponse* response) override;
  grpc::Status RunLocalProbe(grpc::ServerContext* context, const v1::RunLocalProbeRequest* request,
                             v1::RunLocalProbeResponse* response) override;
  grpc::Status StopProbeServer(grpc::ServerContext* context,
                               const v1::StopProbeServerRequest* request,
                               v1::StopProbeServerResponse* response) override;

  // The agent is stopping: probe client halves in flight are cancelled now (their sockets
  // close, their peers see it), not when the server's grace period ends.
  void Shutdown() { stopping_ = true; }

 private:
  std::atomic<bool> stopping_{false};
  std::string controller_identity_;
  std::function<v1::NodeInventory()> inventory_;
  ProbeRunner* probes_;
  probes::AuditContext audits_;
};

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_AGENT_SERVICE_H_
