#ifndef FABRICCTL_CLI_NODES_H_
#define FABRICCTL_CLI_NODES_H_

#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/time/time.h"
#include "cli/controller_client.h"
#include "proto/controller.pb.h"

namespace fabricctl::cli {

struct NodesOptions {
  ControllerTarget controller;
  std::string format = "text";      // text or json
  std::vector<std::string> remove;  // `nodes remove NAME...`
};

// `fabricctl nodes`: lists the registered nodes. Exit code 0 when every node is online (or
// none is registered), 1 when some are stale, 3 when the controller cannot be asked; the
// one-line reason for 1 and 3 goes to `err`.
// `fabricctl nodes [remove NAME...]`: its flags, into `options`.
CLI::App* AddNodesCommand(CLI::App& app, NodesOptions* options);

int RunNodes(const NodesOptions& options, std::ostream& out, std::ostream& err);

// `fabricctl nodes remove NAME...`: forgets nodes (decommissioned or renamed). Prints each
// name removed; a name not registered is reported and the exit code is 1; 3 when the
// controller cannot be asked.
int RunRemoveNodes(const NodesOptions& options, std::ostream& out, std::ostream& err);

// The renderers, separate for tests.
void RenderNodesText(const v1::ListNodesResponse& nodes, absl::Time now, std::ostream& out);
std::string RenderNodesJson(const v1::ListNodesResponse& nodes);

// "3s ago", "5m ago", "2h ago", "3d ago".
std::string FormatAge(absl::Duration age);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_NODES_H_
