// fabric-controller: the cluster daemon. Flags only; the work is in //controller:controller.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/config.h"
#include "base/daemon.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "base/status_macros.h"
#include "base/logging.h"
#include "controller/controller.h"
#include "controller/database.h"
#include "controller/leader.h"

namespace fabricctl {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "fabric-controller: " << s.message() << "\n";
  return kExitUnknown;
}

// The flags' durations and the database's default place into `options`.
absl::Status ResolveOptions(const std::string& heartbeat, const std::string& stale_after,
                            const std::string& forget_after, controller::ControllerOptions& options) {
  ASSIGN_OR_RETURN(const absl::Duration hb, ParsePositiveDuration(heartbeat, "--heartbeat-interval"));
  ASSIGN_OR_RETURN(const absl::Duration stale, ParsePositiveDuration(stale_after, "--stale-after"));
  if (options.db_path.empty()) {
    // systemd's StateDirectory=fabricctl sets $STATE_DIRECTORY (the first of a list).
    const char* state = std::getenv("STATE_DIRECTORY");
    std::string dir = state != nullptr && *state != '\0' ? state : "/var/lib/fabricctl";
    dir = dir.substr(0, dir.find(':'));
    options.db_path = dir + "/controller.db";
  }
  if (!forget_after.empty()) {
    ASSIGN_OR_RETURN(const absl::Duration forget, ParsePositiveDuration(forget_after, "--forget-after"));
    if (forget <= stale) return absl::InvalidArgumentError("--forget-after must be longer than --stale-after");
    options.registry.forget_after = forget;
  }
  options.registry.heartbeat_interval = hb;
  options.registry.stale_after = stale;
  return absl::OkStatus();
}

// Serves until SIGTERM or SIGINT (SIGHUP reloads `config_path`); on PostgreSQL, once this
// controller is the active one of those sharing the database, and only while it stays so.
int Serve(controller::ControllerOptions options, const std::string& config_path) {
  std::unique_ptr<controller::Leadership> leadership;
  if (controller::Database::IsPostgres(options.db_path)) {
    auto held = controller::WaitToLead(options.db_path);
    if (!held.ok()) return Fail(held.status());
    if (*held == nullptr) return kExitOk;  // stopped while standby
    leadership = *std::move(held);
    // A standby may have waited for days: the configuration as it is now.
    if (!config_path.empty()) {
      auto config = LoadConfig(config_path);
      const absl::Status loaded = config.ok() ? LoadTopologyFiles(&*config, config_path) : config.status();
      if (loaded.ok()) {
        options.config = *std::move(config);
      } else {
        Logger("controller")->warn("taking over with the configuration read at start: {}", std::string(loaded.message()));
      }
    }
  }
  auto controller = controller::Controller::Start(std::move(options));
  if (!controller.ok()) return Fail(controller.status());
  controller::LeadershipWatch watch(leadership.get());
  // The one line on stdout: scripts and tests read the bound address from it.
  std::printf("fabric-controller listening on %s\n", (*controller)->address().c_str());
  if (!(*controller)->metrics_address().empty()) {
    std::printf("fabric-controller metrics on http://%s/metrics\n", (*controller)->metrics_address().c_str());
  }
  std::fflush(stdout);
  NotifyReady("serving on " + (*controller)->address());
  DaemonHooks hooks;
  controller::Controller* running = controller->get();
  hooks.reload = [config_path, running]() -> absl::Status {
    auto config = config_path.empty() ? absl::StatusOr<v1::Config>(DefaultConfig()) : LoadConfig(config_path);
    if (!config.ok()) return config.status();
    if (auto s = LoadTopologyFiles(&*config, config_path); !s.ok()) return s;
    running->Reload(*std::move(config));
    return absl::OkStatus();
  };
  hooks.healthy = [running] { return running->Healthy(); };
  std::string signal = RunDaemon("controller", hooks);
  Logger("controller")->info("{}: shutting down", signal);
  NotifyStopping("cancelling the running sweep");
  (*controller)->Shutdown(absl::Seconds(3));
  return watch.Lost() ? kExitUnknown : kExitOk;
}

}  // namespace
}  // namespace fabricctl

int main(int argc, char** argv) {
  using namespace fabricctl;
  BlockDaemonSignals();
  CLI::App app("fabric-controller: node registry, sweeps, health map and history",
               "fabric-controller");
  CommonFlags common;
  AddCommonFlags(app, "fabric-controller", &common);
  controller::ControllerOptions options;
  std::string heartbeat = "10s", stale_after = "30s", forget_after;
  app.add_option("--listen", options.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  options.db_path.clear();
  app.add_option("--db", options.db_path,
                 "database of the registry and history: an SQLite file (default: controller.db in "
                 "$STATE_DIRECTORY, else /var/lib/fabricctl/controller.db) or a postgresql:// URL, "
                 "which a standby controller may share");
  app.add_option("--metrics-listen", options.metrics_listen,
                 "HOST:PORT for Prometheus scrapes of GET /metrics (default: none)");
  app.add_option("--heartbeat-interval", heartbeat, "how often agents heartbeat")
      ->capture_default_str();
  app.add_option("--stale-after", stale_after, "a node silent this long is stale")
      ->capture_default_str();
  app.add_option("--forget-after", forget_after,
                 "remove a node silent this long from the registry (e.g. 7d; default: never)");
  if (auto exit_code = ParseFlags(app, argc, argv)) return *exit_code;
  auto config = ApplyCommonFlags(&common);
  if (!config.ok()) return Fail(config.status());
  if (auto s = LoadTopologyFiles(&*config, common.config_path); !s.ok()) return Fail(s);
  options.config = *std::move(config);
  options.tls = common.tls;
  if (auto s = ResolveOptions(heartbeat, stale_after, forget_after, options); !s.ok()) return Fail(s);
  return Serve(std::move(options), common.config_path);
}
