#ifndef FABRICCTL_CONTROLLER_SWEEP_AGENT_CLIENT_H_
#define FABRICCTL_CONTROLLER_SWEEP_AGENT_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"
#include "proto/agent.pb.h"
#include "proto/inventory.pb.h"

namespace fabricctl::controller::sweep {

// The agent's methods as the sweep's stages call them: the seam between the stages and gRPC,
// so that each stage is tested against a fake agent. Every call has a deadline; a call that
// does not answer in time is DEADLINE_EXCEEDED, one that cannot reach the agent UNAVAILABLE
// (gRPC's codes, carried by absl::Status). Implementations are thread-safe.
class AgentClient {
 public:
  virtual ~AgentClient() = default;

  virtual absl::StatusOr<v1::NodeInventory> GetInventory(const std::string& address,
                                                         absl::Duration deadline) = 0;
  virtual absl::StatusOr<v1::RunAuditsResponse> RunAudits(const std::string& address,
                                                          const v1::RunAuditsRequest& request,
                                                          absl::Duration deadline) = 0;
  virtual absl::StatusOr<v1::StartProbeServerResponse> StartProbeServer(
      const std::string& address, const v1::StartProbeServerRequest& request,
      absl::Duration deadline) = 0;
  virtual absl::StatusOr<v1::RunProbeClientResponse> RunProbeClient(
      const std::string& address, const v1::RunProbeClientRequest& request,
      absl::Duration deadline) = 0;
  // The server half's own view of the run (its failure, if it saw one).
  virtual absl::StatusOr<v1::StopProbeServerResponse> StopProbeServer(
      const std::string& address, const v1::StopProbeServerRequest& request,
      absl::Duration deadline) = 0;
  virtual absl::StatusOr<v1::RunLocalProbeResponse> RunLocalProbe(
      const std::string& address, const v1::RunLocalProbeRequest& request,
      absl::Duration deadline) = 0;

  // Cancels every call in flight (the agents see their RPCs cancelled and stop the probes), and
  // every later call at once, until Resume(): a sweep that is called off. StopProbeServer still
  // goes through, so that the server halves free their nodes at once.
  virtual void CancelAll() = 0;
  virtual void Resume() = 0;
};

// The real one: one gRPC channel per agent address, with `credentials`.
std::unique_ptr<AgentClient> NewGrpcAgentClient(
    std::shared_ptr<grpc::ChannelCredentials> credentials);

// The agent did not answer in time, or could not be reached: worth asking again whether it
// is there at all.
bool IsTransportFailure(const absl::Status& status);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_AGENT_CLIENT_H_
