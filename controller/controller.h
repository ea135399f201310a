#ifndef FABRICCTL_CONTROLLER_CONTROLLER_H_
#define FABRICCTL_CONTROLLER_CONTROLLER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "base/lock_file.h"
#include "base/mutex.h"
#include "base/tls.h"
#include "controller/metrics.h"
#include "controller/metrics_http.h"
#include "controller/service.h"
#include "controller/store/store.h"
#include "controller/sweep/runner.h"
#include "grpcpp/server.h"
#include "proto/config.pb.h"

namespace fabricctl::controller {

struct ControllerOptions {
  // HOST:PORT to serve gRPC on; port 0 picks a free port (see Controller::address()).
  std::string listen = "127.0.0.1:7400";
  // Database of the registry and history: an SQLite file (DB_PATH.lock beside it is held while
  // the controller runs) or a postgresql:// URL (whose lease main holds: leader.h).
  std::string db_path = "fabric-controller.db";
  // PostgreSQL's password, read from --db-password-file; empty: none, or libpq's own file.
  std::string db_password;
  // Asked before every write to the database; not OK: this controller must not write (it lost
  // its lease). Null: always writable.
  std::function<absl::Status()> writable;
  // HOST:PORT of the Prometheus endpoint (GET /metrics); empty: none.
  std::string metrics_listen;
  RegistryOptions registry;
  TlsOptions tls;
  v1::Config config;
};

// fabric-controller: the registry (and later the sweep engine) behind one gRPC server.
class Controller {
 public:
  // Opens the store, decides transport security and starts serving.
  static absl::StatusOr<std::unique_ptr<Controller>> Start(ControllerOptions options);
  ~Controller();

  // The address actually bound, HOST:PORT.
  const std::string& address() const { return address_; }
  // The metrics endpoint's bound address; empty when there is none.
  const std::string& metrics_address() const { return metrics_address_; }
  // Cancels the running sweep, stops accepting calls and waits (at most `grace`) for the
  // running ones.
  void Shutdown(absl::Duration grace);
  // Sweeps started from now on use `config` (thresholds, probes, sweep defaults, expectations);
  // addresses and TLS material are read at start only.
  void Reload(v1::Config config);
  // Whether the database answers: what the systemd watchdog is pinged on.
  bool Healthy() const;

 private:
  Controller() = default;

  std::unique_ptr<LockFile> lock_;  // declared first: released last
  std::unique_ptr<Store> store_;
  std::unique_ptr<SweepRunner> sweeps_;
  std::unique_ptr<ControllerServiceImpl> registry_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<ControllerMetrics> exposition_;  // outlives metrics_, which calls it
  std::unique_ptr<MetricsServer> metrics_;
  std::string address_;
  std::string metrics_address_;
  // The history's retention on the controller's own schedule (at start, then hourly), never
  // as a side effect of a sweep: no member's sweeps can push history out.
  void PruneHourly();
  Mutex prune_mu_;
  bool stopping_ ABSL_GUARDED_BY(prune_mu_) = false;
  std::thread pruner_;  // declared last: joined first
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_CONTROLLER_H_
