// fabric-controller: the cluster daemon. Flags only; the work is in //controller:controller.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "base/daemon.h"
#include "base/exit_code.h"
#include "base/logging.h"
#include "base/process.h"
#include "base/status_macros.h"
#include "base/tls.h"
#include "controller/controller.h"
#include "controller/store/database.h"
#include "controller/store/leader.h"

namespace fabricctl {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "fabric-controller: " << s.message() << "\n";
  return kExitUnknown;
}

// The flags' durations and the database's default place into `options`.
absl::Status ResolveOptions(const std::string& heartbeat, const std::string& stale_after,
                            const std::string& forget_after,
                            controller::ControllerOptions& options) {
  ASSIGN_OR_RETURN(const absl::Duration hb,
                   ParsePositiveDuration(heartbeat, "--heartbeat-interval"));
  ASSIGN_OR_RETURN(const absl::Duration stale, ParsePositiveDuration(stale_after, "--stale-after"));
  if (options.db_path.empty()) {
    // systemd's StateDirectory=fabricctl sets $STATE_DIRECTORY (the first of a list).
    const char* state = std::getenv("STATE_DIRECTORY");
    std::string dir = state != nullptr && *state != '\0' ? state : "/var/lib/fabricctl";
    dir = dir.substr(0, dir.find(':'));
    options.db_path = dir + "/controller.db";
  }
  if (!forget_after.empty()) {
    ASSIGN_OR_RETURN(const absl::Duration forget,
                     ParsePositiveDuration(forget_after, "--forget-after"));
    if (forget <= stale)
      return absl::InvalidArgumentError("--forget-after must be longer than --stale-after");
    options.registry.forget_after = forget;
  }
  options.registry.heartbeat_interval = hb;
  options.registry.stale_after = stale;
  return absl::OkStatus();
}

// The configuration as it is now, for a controller that takes over (a standby may have waited
// for days); the one read at start when it cannot be read.
v1::Config CurrentConfig(const v1::Config& at_start, const std::string& config_path) {
  if (config_path.empty()) return at_start;
  auto config = LoadConfig(config_path);
  const absl::Status loaded =
      config.ok() ? LoadTopologyFiles(&*config, config_path) : config.status();
  if (loaded.ok()) return *std::move(config);
  Logger("controller")
      ->warn("taking over with the configuration read at start: {}", std::string(loaded.message()));
  return at_start;
}

// Serves until SIGTERM or SIGINT (SIGHUP reloads `config_path`), as the active controller.
// Returns whether it stopped because `watch` lost the lease.
absl::StatusOr<bool> ServeActive(controller::ControllerOptions options,
                                 const std::string& config_path,
                                 controller::Leadership* leadership) {
  if (leadership != nullptr) {
    options.writable = [leadership]() -> absl::Status {
      if (leadership->Acting()) return absl::OkStatus();
      return absl::UnavailableError(
          "this controller lost its lease on the database: a standby may be active");
    };
  }
  auto controller = controller::Controller::Start(std::move(options));
  if (!controller.ok()) return controller.status();
  controller::LeadershipWatch watch(leadership);
  // The one line on stdout: scripts and tests read the bound address from it.
  std::printf("fabric-controller listening on %s\n", (*controller)->address().c_str());
  if (!(*controller)->metrics_address().empty()) {
    std::printf("fabric-controller metrics on http://%s/metrics\n",
                (*controller)->metrics_address().c_str());
  }
  std::fflush(stdout);
  NotifyReady("serving on " + (*controller)->address());
  DaemonHooks hooks;
  controller::Controller* running = controller->get();
  hooks.reload = [config_path, running]() -> absl::Status {
    auto config =
        config_path.empty() ? absl::StatusOr<v1::Config>(DefaultConfig()) : LoadConfig(config_path);
    if (!config.ok()) return config.status();
    if (auto s = LoadTopologyFiles(&*config, config_path); !s.ok()) return s;
    running->Reload(*std::move(config));
    return absl::OkStatus();
  };
  hooks.healthy = [running] { return running->Healthy(); };
  std::string signal = RunDaemon("controller", hooks);
  const bool lost = watch.Lost();
  Logger("controller")
      ->info("{}: {}", signal, lost ? "stopping: the lease is lost" : "shutting down");
  NotifyStopping("cancelling the running sweep");
  (*controller)->Shutdown(absl::Seconds(3));
  return lost;
}

// Serves until SIGTERM or SIGINT; on PostgreSQL, whenever this controller holds the lease of
// those sharing the database: it waits as a standby until then, and goes back to waiting when
// it loses the lease (a cut network), never acting without it.
int Serve(controller::ControllerOptions options, const std::string& config_path) {
  if (!controller::Database::IsPostgres(options.db_path)) {
    auto served = ServeActive(std::move(options), config_path, nullptr);
    return served.ok() ? kExitOk : Fail(served.status());
  }
  for (;;) {
    auto held = controller::WaitToLead(options.db_path, options.db_password,
                                       controller::Leadership::Options());
    if (!held.ok()) return Fail(held.status());
    if (*held == nullptr) return kExitOk;  // stopped while standby
    controller::ControllerOptions active = options;
    active.config = CurrentConfig(options.config, config_path);
    auto lost = ServeActive(std::move(active), config_path, held->get());
    if (!lost.ok()) return Fail(lost.status());
    if (!*lost) return kExitOk;
    Logger("controller")->warn("standby again: waiting for the lease");
  }
}

// --db-password-file: the password on the file's first line (never on the command line).
absl::Status ReadPassword(const std::string& path, std::string* password) {
  if (path.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, "--db-password-file"));
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.empty())
    return absl::InvalidArgumentError(absl::StrCat("--db-password-file: ", path, " is empty"));
  *password = std::move(text);
  return absl::OkStatus();
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
  std::string password_file;
  app.add_option("--db-password-file", password_file,
                 "file whose first line is PostgreSQL's password (mode 0600); a --db URL may not "
                 "carry one, since any local user can read the command line");
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
  if (auto s = ResolveOptions(heartbeat, stale_after, forget_after, options); !s.ok())
    return Fail(s);
  if (auto s = controller::Database::RefuseInlinePassword(options.db_path, "--db"); !s.ok())
    return Fail(s);
  if (auto s = ReadPassword(password_file, &options.db_password); !s.ok()) return Fail(s);
  return Serve(std::move(options), common.config_path);
}
