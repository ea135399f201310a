// fabric-controller: the cluster daemon. Flags only; the work is in //controller:controller.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/config.h"
#include "base/daemon.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "controller/controller.h"
#include "controller/database.h"
#include "controller/leader.h"

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
  auto fail = [](const absl::Status& s) {
    std::cerr << "fabric-controller: " << s.message() << "\n";
    return kExitUnknown;
  };
  auto config = ApplyCommonFlags(&common);
  if (!config.ok()) return fail(config.status());
  if (auto s = LoadTopologyFiles(&*config, common.config_path); !s.ok()) return fail(s);
  options.config = *std::move(config);
  options.tls = common.tls;
  auto hb = ParsePositiveDuration(heartbeat, "--heartbeat-interval");
  if (!hb.ok()) return fail(hb.status());
  auto stale = ParsePositiveDuration(stale_after, "--stale-after");
  if (!stale.ok()) return fail(stale.status());
  if (options.db_path.empty()) {
    // systemd's StateDirectory=fabricctl sets $STATE_DIRECTORY (the first of a list).
    const char* state = std::getenv("STATE_DIRECTORY");
    std::string dir = state != nullptr && *state != '\0' ? state : "/var/lib/fabricctl";
    dir = dir.substr(0, dir.find(':'));
    options.db_path = dir + "/controller.db";
  }
  if (!forget_after.empty()) {
    auto forget = ParsePositiveDuration(forget_after, "--forget-after");
    if (!forget.ok()) return fail(forget.status());
    if (*forget <= *stale) return fail(absl::InvalidArgumentError("--forget-after must be longer than --stale-after"));
    options.registry.forget_after = *forget;
  }
  options.registry.heartbeat_interval = *hb;
  options.registry.stale_after = *stale;

  // On PostgreSQL, one of the controllers sharing the database is active: this one waits as a
  // standby until it holds the database's lock, and stops serving if it ever loses it.
  std::unique_ptr<controller::Leadership> leadership;
  if (controller::Database::IsPostgres(options.db_path)) {
    auto held = controller::WaitToLead(options.db_path);
    if (!held.ok()) return fail(held.status());
    if (*held == nullptr) return kExitOk;  // stopped while standby
    leadership = *std::move(held);
  }
  auto controller = controller::Controller::Start(std::move(options));
  if (!controller.ok()) return fail(controller.status());
  controller::LeadershipWatch watch(leadership.get());
  // The one line on stdout: scripts and tests read the bound address from it.
  std::printf("fabric-controller listening on %s\n", (*controller)->address().c_str());
  if (!(*controller)->metrics_address().empty()) {
    std::printf("fabric-controller metrics on http://%s/metrics\n",
                (*controller)->metrics_address().c_str());
  }
  std::fflush(stdout);
  NotifyReady("serving on " + (*controller)->address());
  DaemonHooks hooks;
  const std::string config_path = common.config_path;
  controller::Controller* running = controller->get();
  hooks.reload = [config_path, running]() -> absl::Status {
    auto config = config_path.empty() ? absl::StatusOr<v1::Config>(DefaultConfig())
                                       : LoadConfig(config_path);
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
