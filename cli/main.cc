// fabricctl: the command line for people, cron, Slurm and CI. Flags only; each subcommand's
// work is in its own library under //cli.
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/exit_code.h"
#include "base/process.h"
#include "cli/nodes.h"

int main(int argc, char** argv) {
  using namespace fabricctl;
  CLI::App app("fabricctl: validate a GPU cluster's network fabric", "fabricctl");
  app.require_subcommand(1);
  app.fallthrough();  // global flags may follow the subcommand
  CommonFlags common;
  AddCommonFlags(app, "fabricctl", &common);
  std::string controller = "127.0.0.1:7400";
  std::string timeout = "5s";
  app.add_option("--controller", controller, "controller HOST:PORT")
      ->envname("FABRICCTL_CONTROLLER")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "deadline of every RPC to the controller")
      ->capture_default_str();

  cli::NodesOptions nodes;
  CLI::App* nodes_cmd = app.add_subcommand("nodes", "list registered nodes and their state");
  nodes_cmd->add_option("--format", nodes.format, "text or json")->capture_default_str();

  if (auto exit_code = ParseFlags(app, argc, argv)) return *exit_code;
  auto fail = [](const absl::Status& s) {
    std::cerr << "fabricctl: " << s.message() << "\n";
    return kExitUnknown;
  };
  // Diagnostics only; results go to stdout in the chosen format.
  if (common.logging.level == "info") common.logging.level = "warn";
  auto config = ApplyCommonFlags(&common);
  if (!config.ok()) return fail(config.status());
  cli::ControllerTarget target;
  target.address = controller;
  target.tls = common.tls;
  auto deadline = ParsePositiveDuration(timeout, "--timeout");
  if (!deadline.ok()) return fail(deadline.status());
  target.timeout = *deadline;

  if (nodes_cmd->parsed()) {
    nodes.controller = target;
    return cli::RunNodes(nodes, std::cout, std::cerr);
  }
  return kExitUnknown;
}
