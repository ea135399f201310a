#include "agent/agent_service.h"

#include <chrono>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "base/grpc_status.h"
#include "base/mutex.h"
#include "base/tls.h"
#include "base/utf8.h"

namespace fabricctl::agent {
namespace {

// Cancels `cancel` when the RPC of `context` is cancelled: its client went away, or its deadline
// passed (gRPC cancels the call then). Checks every 50 ms until destroyed.
class CancelWithRpc {
 public:
  CancelWithRpc(grpc::ServerContext* context, probes::Cancellation* cancel,
                const std::atomic<bool>* stopping)
      : thread_([this, context, cancel, stopping] {
          MutexLock lock(&mu_);
          while (!done_) {
            if (context->IsCancelled() || *stopping) {
              cancel->Cancel();
              return;
            }
            mu_.AwaitWithTimeout(&done_, absl::Milliseconds(50));
          }
        }) {}
  ~CancelWithRpc() {
    {
      MutexLock lock(&mu_);
      done_ = true;
    }
    thread_.join();
  }

 private:
  Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

AgentService::AgentService(std::string controller_identity,
                           std::function<v1::NodeInventory()> inventory, ProbeRunner* probes,
                           probes::AuditContext audits)
    : controller_identity_(std::move(controller_identity)),
      inventory_(std::move(inventory)),
      probes_(probes),
      audits_(std::move(audits)) {}

grpc::Status AgentService::RunAudits(grpc::ServerContext* context,
                                     const v1::RunAuditsRequest* request,
                                     v1::RunAuditsResponse* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  if (request->audits_size() > 64) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "audits: at most 64 names");
  }
  if (request->window_seconds() < 0 || request->window_seconds() > 600) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "window_seconds: 0 to 600");
  }
  std::vector<std::string> names(request->audits().begin(), request->audits().end());
  probes::AuditContext context_for_request = audits_;
  context_for_request.counter_window = absl::Seconds(request->window_seconds());
  auto results = probes::RunAudits(context_for_request, names);
  if (!results.ok()) return ToGrpcStatus(results.status());
  for (auto& r : *results) *response->add_audits() = std::move(r);
  SanitizeUtf8(response);  // sysfs names and NCCL lines may hold any bytes; protobuf wants UTF-8
  return grpc::Status::OK;
}

grpc::Status AgentService::GetInventory(grpc::ServerContext* context,
                                        const v1::GetInventoryRequest* request,
                                        v1::NodeInventory* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  *response = inventory_();
  SanitizeUtf8(response);
  return grpc::Status::OK;
}

grpc::Status AgentService::StartProbeServer(grpc::ServerContext* context,
                                            const v1::StartProbeServerRequest* request,
                                            v1::StartProbeServerResponse* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  auto endpoint = probes_->StartServer(request->spec(), request->run_id(), request->rank());
  if (!endpoint.ok()) return ToGrpcStatus(endpoint.status());
  *response->mutable_endpoint() = *std::move(endpoint);
  return grpc::Status::OK;
}

grpc::Status AgentService::RunProbeClient(grpc::ServerContext* context,
                                          const v1::RunProbeClientRequest* request,
                                          v1::RunProbeClientResponse* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  probes::Cancellation cancel;
  absl::StatusOr<v1::ProbeResult> result;
  {
    const CancelWithRpc watch(context, &cancel, &stopping_);
    result = probes_->RunClient(request->spec(), request->server(), &cancel);
  }
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response->mutable_result() = *std::move(result);
  SanitizeUtf8(response);
  return grpc::Status::OK;
}

grpc::Status AgentService::RunLocalProbe(grpc::ServerContext* context,
                                         const v1::RunLocalProbeRequest* request,
                                         v1::RunLocalProbeResponse* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  probes::Cancellation cancel;
  absl::StatusOr<v1::ProbeResult> result;
  {
    const CancelWithRpc watch(context, &cancel, &stopping_);
    result = probes_->RunLocal(*request, &cancel);
  }
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response->mutable_result() = *std::move(result);
  SanitizeUtf8(response);
  return grpc::Status::OK;
}

grpc::Status AgentService::StopProbeServer(grpc::ServerContext* context,
                                           const v1::StopProbeServerRequest* request,
                                           v1::StopProbeServerResponse* response) {
  if (auto s = RequirePeerIdentity(*context, controller_identity_); !s.ok()) return s;
  auto own = probes_->StopServer(request->run_id());
  if (!own.ok()) return ToGrpcStatus(own.status());
  *response->mutable_result() = *std::move(own);
  return grpc::Status::OK;
}

}  // namespace fabricctl::agent
