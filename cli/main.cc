// fabricctl: the command line for people, cron, Slurm and CI. The global flags; each
// subcommand declares its own flags beside its work (cli/<command>.cc).
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "cli/accept.h"
#include "cli/check.h"
#include "cli/history.h"
#include "cli/lab.h"
#include "cli/nodes.h"
#include "cli/probe.h"
#include "cli/sweep.h"
#include "probes/audit/audit.h"

namespace {

constexpr char kDefaultController[] = "127.0.0.1:7400";

// The controller to ask: --controller (or $FABRICCTL_CONTROLLER), else the configuration's,
// else the default; with the common TLS flags and the --timeout of every RPC.
absl::StatusOr<fabricctl::cli::ControllerTarget> Target(const std::string& controller,
                                                        const fabricctl::v1::Config& config,
                                                        const fabricctl::CommonFlags& common,
                                                        const std::string& timeout) {
  fabricctl::cli::ControllerTarget target;
  target.address = !controller.empty()            ? controller
                   : !config.controller().empty() ? config.controller()
                                                  : kDefaultController;
  target.tls = common.tls;
  auto deadline = fabricctl::ParsePositiveDuration(timeout, "--timeout");
  if (!deadline.ok()) return deadline.status();
  target.timeout = *deadline;
  return target;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fabricctl;
  CLI::App app("fabricctl: validate a GPU cluster's network fabric", "fabricctl");
  app.require_subcommand(1);
  app.fallthrough();  // global flags may follow the subcommand
  CommonFlags common;
  AddCommonFlags(app, "fabricctl", &common);
  std::string controller;  // flag, else $FABRICCTL_CONTROLLER, else the configuration's
  std::string timeout = "5s";
  app.add_option("--controller", controller,
                 absl::StrCat("controller HOST:PORT (default: $FABRICCTL_CONTROLLER, else the "
                              "configuration's `controller`, else ",
                              kDefaultController, ")"))
      ->envname("FABRICCTL_CONTROLLER");
  app.add_option("--timeout", timeout, "deadline of every RPC to the controller")
      ->capture_default_str();
  cli::NodesOptions nodes;
  cli::ProbeCommandOptions probe;
  cli::SweepCommandOptions sweep;
  cli::SweepFlags sweep_flags;
  cli::MapOptions map;
  cli::AcceptOptions accept;
  cli::AcceptFlags accept_flags;
  cli::HistoryOptions history;
  cli::CheckOptions check;
  CLI::App* nodes_cmd = cli::AddNodesCommand(app, &nodes);
  CLI::App* probe_cmd = cli::AddProbeCommand(app, &probe);
  CLI::App* sweep_cmd = cli::AddSweepCommand(app, &sweep, &sweep_flags);
  CLI::App* map_cmd = cli::AddMapCommand(app, &map);
  CLI::App* accept_cmd = cli::AddAcceptCommand(app, &accept, &accept_flags);
  CLI::App* history_cmd = cli::AddHistoryCommand(app, &history);
  CLI::App* check_cmd = cli::AddCheckCommand(app, &check);
  CLI::App* lab_cmd = cli::AddLabCommand(app);

  if (auto exit_code = ParseFlags(app, argc, argv)) return *exit_code;
  if (lab_cmd->parsed()) return cli::RunLabCommand(lab_cmd->remaining(), std::cerr);
  auto fail = [](const absl::Status& s) {
    std::cerr << "fabricctl: " << s.message() << "\n";
    return kExitUnknown;
  };
  // Diagnostics only; results go to stdout in the chosen format.
  if (common.logging.level == "info") common.logging.level = "warn";
  auto config = ApplyCommonFlags(&common);
  if (!config.ok()) return fail(config.status());
  auto targeted = Target(controller, *config, common, timeout);
  if (!targeted.ok()) return fail(targeted.status());
  const cli::ControllerTarget& target = *targeted;

  if (probe_cmd->parsed()) return cli::RunProbeCommand(probe, std::cout, std::cerr);
  if (check_cmd->parsed()) {
    check.config = *config;
    check.environment = probes::NcclEnvironment();
    return cli::RunCheckCommand(check, std::cerr);
  }
  if (sweep_cmd->parsed()) {
    sweep.controller = target;
    cli::ResolveMaxAge(*config, &sweep);
    if (auto s = cli::ResolveSweepFlags(sweep_flags, &sweep); !s.ok()) return fail(s);
    return cli::RunSweepCommand(sweep, std::cerr);
  }
  if (accept_cmd->parsed()) {
    accept.sweep.controller = target;
    accept.placed = config->nodes();
    return cli::RunAcceptCommand(accept, accept_flags, std::cerr);
  }
  if (map_cmd->parsed()) {
    return cli::RunMapCommand(target, map.sweep_id, map.format, map.output, std::cerr);
  }
  if (history.prune->parsed()) return cli::RunPruneHistory(target, history, std::cout, std::cerr);
  if (history_cmd->parsed() && history.acceptances) {
    return cli::RunAcceptanceHistory(target, history.limit, history.format, std::cout, std::cerr);
  }
  if (history_cmd->parsed()) {
    return cli::RunHistoryCommand(target, history.limit, history.format, std::cout, std::cerr);
  }
  if (nodes_cmd->parsed()) {
    nodes.controller = target;
    if (!nodes.remove.empty()) return cli::RunRemoveNodes(nodes, std::cout, std::cerr);
    return cli::RunNodes(nodes, std::cout, std::cerr);
  }
  return kExitUnknown;
}
