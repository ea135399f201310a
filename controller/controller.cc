#include "controller/controller.h"

#include "absl/strings/str_cat.h"
#include "base/lock_file.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "controller/store/database.h"
#include "grpcpp/server_builder.h"
#include "report/render.h"

namespace fabricctl::controller {
namespace {

// The registry's options with the configuration's roles (tls.operator_identities,
// tls.admin_identities).
RegistryOptions WithRoles(RegistryOptions options, const v1::TlsConfig& tls) {
  options.roles = Roles::Of(tls);
  options.node_name_any = tls.node_names() == "any";
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> Controller::Start(ControllerOptions options) {
  auto listen = ParseHostPort(options.listen, "--listen");
  if (!listen.ok()) return listen.status();
  auto security = TransportSecurity::Create(options.tls, {listen->host});
  if (!security.ok()) return security.status();
  auto log = Logger("controller");
  if (security->insecure_override()) {
    log->warn("--insecure: serving plain text on {}; agents and clients are not authenticated",
              options.listen);
  }
  if (options.registry.stale_after <= options.registry.heartbeat_interval) {
    return absl::InvalidArgumentError("--stale-after must be longer than --heartbeat-interval");
  }

  std::unique_ptr<Controller> controller(new Controller());
  // One controller per database, taken before the database is touched: a second one must not
  // mark the first one's running sweep interrupted.
  // (On PostgreSQL, main holds the database's lease instead: controller/store/leader.h.)
  if (!Database::IsPostgres(options.db_path)) {
    auto lock = LockFile::Acquire(options.db_path + ".lock", "database " + options.db_path);
    if (!lock.ok()) return lock.status();
    controller->lock_ = *std::move(lock);
  }
  auto store = Store::Open(options.db_path, options.db_password);
  if (!store.ok()) return store.status();
  controller->store_ = *std::move(store);
  if (options.writable) controller->store_->SetWriteGate(options.writable);
  if (auto interrupted = controller->store_->MarkRunningInterrupted(absl::Now());
      interrupted.ok() && *interrupted > 0) {
    log->warn("{} sweep(s) were running when the controller last stopped: marked interrupted",
              *interrupted);
  }
  SweepOptions sweep_options;
  sweep_options.config = options.config;
  controller->sweeps_ = std::make_unique<SweepRunner>(
      controller->store_.get(), security->ChannelCredentials(), sweep_options);

  RegistryOptions registry = WithRoles(options.registry, options.config.tls());
  registry.loopback_only = !security->tls() && !security->insecure_override();
  controller->registry_ = std::make_unique<ControllerServiceImpl>(
      controller->store_.get(), std::move(registry), controller->sweeps_.get());

  grpc::ServerBuilder builder;
  int port = 0;
  // One daemon per address: without SO_REUSEPORT a second one on a busy port fails to start
  // instead of taking half the connections at random.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Clients ping a quiet call to tell a vanished controller from a slow sweep
  // (cli/controller_client.cc): pings every few seconds are allowed, not a misbehaving peer's.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 4000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddListeningPort(listen->ToString(), security->ServerCredentials(), &port);
  builder.RegisterService(controller->registry_.get());
  controller->server_ = builder.BuildAndStart();
  if (!controller->server_ || port == 0) {
    return absl::UnavailableError(absl::StrCat("--listen: cannot listen on ", options.listen,
                                               " (is the address in use, or not this host's?)"));
  }
  controller->address_ = HostPort{listen->host, static_cast<uint16_t>(port)}.ToString();
  if (!options.metrics_listen.empty()) {
    auto where = ParseHostPort(options.metrics_listen, "--metrics-listen");
    if (!where.ok()) return where.status();
    controller->exposition_ = std::make_unique<ControllerMetrics>(
        controller->store_.get(), options.registry.stale_after, options.registry.now);
    ControllerMetrics* exposition = controller->exposition_.get();
    auto metrics = MetricsServer::Start(where->host, where->port,
                                        [exposition] { return exposition->Render(); });
    if (!metrics.ok()) return metrics.status();
    controller->metrics_ = *std::move(metrics);
    controller->metrics_address_ = HostPort{where->host, controller->metrics_->port()}.ToString();
    log->info("serving Prometheus metrics on http://{}/metrics", controller->metrics_address_);
  }
  log->info("serving on {} ({}), database {}", controller->address_,
            security->tls() ? "mutual TLS" : "plain text", Database::Describe(options.db_path));
  controller->pruner_ = std::thread([c = controller.get()] { c->PruneHourly(); });
  return controller;
}

void Controller::PruneHourly() {
  MutexLock lock(&prune_mu_);
  while (!stopping_) {
    prune_mu_.Unlock();
    if (auto pruned = sweeps_->PruneHistory(sweeps_->HistoryPolicy()); !pruned.ok()) {
      Logger("controller")
          ->error("history: cannot prune: {}", std::string(pruned.status().message()));
    }
    prune_mu_.Lock();
    prune_mu_.AwaitWithTimeout(&stopping_, absl::Hours(1));
  }
}

void Controller::Shutdown(absl::Duration grace) {
  {
    MutexLock lock(&prune_mu_);
    stopping_ = true;
  }
  if (pruner_.joinable()) pruner_.join();
  // The running sweep is cancelled first (its agents stop their probes within a second and it
  // is recorded interrupted), so that the server's grace period is not spent waiting for it.
  if (sweeps_) sweeps_->Shutdown();
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMicroseconds(grace));
  }
}

void Controller::Reload(v1::Config config) {
  registry_->SetRoles(Roles::Of(config.tls()));
  sweeps_->SetConfig(std::move(config));
}

bool Controller::Healthy() const { return store_->ListNodes({}).ok(); }

Controller::~Controller() { Shutdown(absl::Seconds(1)); }

}  // namespace fabricctl::controller
