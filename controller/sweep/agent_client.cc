#include "controller/sweep/agent_client.h"

#include <chrono>
#include <map>
#include <set>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "proto/agent.grpc.pb.h"

namespace fabricctl::controller::sweep {
namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

class GrpcAgentClient : public AgentClient {
 public:
  explicit GrpcAgentClient(std::shared_ptr<grpc::ChannelCredentials> credentials)
      : credentials_(std::move(credentials)) {}

  // Whether the agent answers. A new channel's first connect can fail once where the agent is
  // up (the sweep's first call to an agent that registered a moment ago), and a channel that
  // failed answers at once until its reconnect backoff ends: an UNAVAILABLE first answer is
  // asked again, waiting for the channel to be ready for what is left of the deadline. When
  // that fails too, the first answer's reason stands (a dead agent's "connection refused" says
  // more than a deadline).
  absl::StatusOr<v1::NodeInventory> GetInventory(const std::string& address,
                                                 absl::Duration deadline) override {
    const absl::Time until = absl::Now() + deadline;
    auto first =
        Call(address, deadline, v1::GetInventoryRequest(), &v1::AgentService::Stub::GetInventory);
    const absl::Duration left = until - absl::Now();
    if (first.ok() || !absl::IsUnavailable(first.status()) || left <= absl::ZeroDuration()) {
      return first;
    }
    auto again = Call(address, left, v1::GetInventoryRequest(),
                      &v1::AgentService::Stub::GetInventory, /*even_cancelled=*/false,
                      /*wait_for_ready=*/true);
    if (again.ok() || absl::IsCancelled(again.status())) return again;
    return first;
  }
  absl::StatusOr<v1::RunAuditsResponse> RunAudits(const std::string& address,
                                                  const v1::RunAuditsRequest& request,
                                                  absl::Duration deadline) override {
    return Call(address, deadline, request, &v1::AgentService::Stub::RunAudits);
  }
  absl::StatusOr<v1::StartProbeServerResponse> StartProbeServer(
      const std::string& address, const v1::StartProbeServerRequest& request,
      absl::Duration deadline) override {
    return Call(address, deadline, request, &v1::AgentService::Stub::StartProbeServer);
  }
  absl::StatusOr<v1::RunProbeClientResponse> RunProbeClient(
      const std::string& address, const v1::RunProbeClientRequest& request,
      absl::Duration deadline) override {
    return Call(address, deadline, request, &v1::AgentService::Stub::RunProbeClient);
  }
  absl::StatusOr<v1::StopProbeServerResponse> StopProbeServer(
      const std::string& address, const v1::StopProbeServerRequest& request,
      absl::Duration deadline) override {
    // Even after CancelAll: a stop frees the agent's node at once instead of at its deadline.
    return Call(address, deadline, request, &v1::AgentService::Stub::StopProbeServer,
                /*even_cancelled=*/true);
  }
  absl::StatusOr<v1::RunLocalProbeResponse> RunLocalProbe(const std::string& address,
                                                          const v1::RunLocalProbeRequest& request,
                                                          absl::Duration deadline) override {
    return Call(address, deadline, request, &v1::AgentService::Stub::RunLocalProbe);
  }

  void CancelAll() override {
    MutexLock lock(&mu_);
    cancelled_ = true;
    for (grpc::ClientContext* context : in_flight_) context->TryCancel();
  }

  void Resume() override {
    MutexLock lock(&mu_);
    cancelled_ = false;
  }

 private:
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(const std::string& address, absl::Duration deadline,
                                const Request& request,
                                grpc::Status (v1::AgentService::Stub::*method)(grpc::ClientContext*,
                                                                               const Request&,
                                                                               Response*),
                                bool even_cancelled = false, bool wait_for_ready = false) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMicroseconds(deadline));
    context.set_wait_for_ready(wait_for_ready);
    v1::AgentService::Stub* stub;
    {
      MutexLock lock(&mu_);
      if (cancelled_ && !even_cancelled) return absl::CancelledError("the sweep was cancelled");
      if (!even_cancelled) in_flight_.insert(&context);
      stub = StubLocked(address);
    }
    Response response;
    grpc::Status s = (stub->*method)(&context, request, &response);
    {
      MutexLock lock(&mu_);
      in_flight_.erase(&context);
    }
    if (!s.ok()) return FromGrpc(s);
    return response;
  }

  v1::AgentService::Stub* StubLocked(const std::string& address)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto& stub = stubs_[address];
    if (!stub) stub = v1::AgentService::NewStub(grpc::CreateChannel(address, credentials_));
    return stub.get();
  }

  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  Mutex mu_;
  std::map<std::string, std::unique_ptr<v1::AgentService::Stub>> stubs_
      ABSL_GUARDED_BY(mu_);  // by address
  std::set<grpc::ClientContext*> in_flight_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

std::unique_ptr<AgentClient> NewGrpcAgentClient(
    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  return std::make_unique<GrpcAgentClient>(std::move(credentials));
}

bool IsTransportFailure(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

}  // namespace fabricctl::controller::sweep
