#ifndef FABRICCTL_CONTROLLER_SERVICE_H_
#define FABRICCTL_CONTROLLER_SERVICE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "controller/roles.h"
#include "controller/store/store.h"
#include "controller/sweep/incremental.h"
#include "controller/sweep/inventory_check.h"
#include "controller/sweep/runner.h"
#include "proto/controller.grpc.pb.h"

namespace fabricctl::controller {

struct RegistryOptions {
  // How often agents heartbeat; sent to each agent at registration.
  absl::Duration heartbeat_interval = absl::Seconds(10);
  // A node with no heartbeat for this long is listed as stale.
  absl::Duration stale_after = absl::Seconds(30);
  // A node silent this long is removed from the registry (0: never); it registers again when
  // its agent comes back.
  absl::Duration forget_after = absl::ZeroDuration();
  // The clock; tests inject their own.
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Under mutual TLS, who may call what (roles.h): the configuration's tls section.
  Roles roles = Roles::Of(v1::TlsConfig());
  // The controller speaks plain text because everything is on loopback (no TLS, no
  // --insecure): an agent that registers at another address is refused, as the controller
  // would dial it in plain text off loopback.
  bool loopback_only = false;
  // tls.node_names: any: a node may register under any name its certificate carries (CN or
  // SAN); otherwise under its CN only.
  bool node_name_any = false;
};

// A node's state by the staleness rule.
v1::NodeState NodeStateAt(const StoredNode& node, absl::Time now, absl::Duration stale_after);

// ControllerService: the node registry (Register, Heartbeat, ListNodes) for agents, and
// sweeps, reports and history for fabricctl.
class ControllerServiceImpl : public v1::ControllerService::Service {
 public:
  // `sweeps` may be null (registry only: Sweep answers UNAVAILABLE). Neither is owned.
  ControllerServiceImpl(Store* store, RegistryOptions options, SweepRunner* sweeps = nullptr);

  grpc::Status Register(grpc::ServerContext* context, const v1::RegisterRequest* request,
                        v1::RegisterResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override;
  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest* request,
                         v1::ListNodesResponse* response) override;
  grpc::Status RemoveNodes(grpc::ServerContext* context, const v1::RemoveNodesRequest* request,
                           v1::RemoveNodesResponse* response) override;
  // Streams a SweepStarted event, one event per round, and the report last, in chunks.
  grpc::Status Sweep(grpc::ServerContext* context, const v1::SweepRequest* request,
                     grpc::ServerWriter<v1::SweepEvent>* writer) override;
  grpc::Status StreamReport(grpc::ServerContext* context, const v1::GetReportRequest* request,
                            grpc::ServerWriter<v1::ReportChunk>* writer) override;
  // The roles from now on (a reloaded configuration's tls section).
  void SetRoles(Roles roles);
  grpc::Status GetReport(grpc::ServerContext* context, const v1::GetReportRequest* request,
                         v1::Report* response) override;
  grpc::Status ListSweeps(grpc::ServerContext* context, const v1::ListSweepsRequest* request,
                          v1::ListSweepsResponse* response) override;
  // The configuration's history policy (history.keep, keep_sweeps) with the request's values
  // in place of those it gives; an administrator's certificate, as RemoveNodes.
  grpc::Status PruneHistory(grpc::ServerContext* context, const v1::PruneHistoryRequest* request,
                            v1::PruneHistoryResponse* response) override;
  // Keeps a `fabricctl accept`'s verdict in history, stamped with the caller's identity and the
  // time; an operator's certificate, as Sweep (a node's may not vouch for itself). Every sweep
  // it names must be in history.
  grpc::Status RecordAcceptance(grpc::ServerContext* context,
                                const v1::RecordAcceptanceRequest* request,
                                v1::RecordAcceptanceResponse* response) override;
  grpc::Status ListAcceptances(grpc::ServerContext* context,
                               const v1::ListAcceptancesRequest* request,
                               v1::ListAcceptancesResponse* response) override;

 private:
  // OK when the caller holds `role` (roles.h); PERMISSION_DENIED saying `what` otherwise,
  // logged.
  grpc::Status Require(const grpc::ServerContext& context, Role role, const std::string& what);
  Store* store_;  // not owned
  RegistryOptions options_;
  SweepRunner* sweeps_;  // not owned
  mutable Mutex roles_mu_;
  Roles roles_ ABSL_GUARDED_BY(roles_mu_);

  // Removes the nodes silent for longer than options_.forget_after, when set.
  void ForgetExpired();
  // Ends the node's known-good state when what its past verdict rests on changed since its last
  // registration (InventoryChanges: its agent restarted, a NIC, port or GPU changed).
  void LoseKnownGoodOnChange(const v1::NodeInventory& inventory);
  // A heartbeat whose link watch finds a flap or errors ends the node's known-good state.
  void LoseKnownGoodOnWatch(const v1::HeartbeatRequest& request);
  // SweepRequest.max_age: the request narrowed to the stale nodes and their references.
  absl::StatusOr<sweep::Incremental> NarrowToStale(const v1::SweepRequest& request,
                                                   const std::vector<StoredNode>& registry);
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_SERVICE_H_
