#ifndef FABRICCTL_CLI_ACCEPT_H_
#define FABRICCTL_CLI_ACCEPT_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/sweep.h"

namespace fabricctl::cli {

// `fabricctl accept --nodes NEW`: new nodes (a rack) judged against reference nodes of the
// fleet they join. Each pass is one sweep of the new nodes and the references, with the audits
// and the references named to the controller, which judges the new nodes' figures against the
// references' among themselves (below_reference), their inventories against the references'
// (config_drift) and their rails' cabling against the references' (miscabled). A burn-in
// (--repeat N, --soak DURATION) runs passes back to back; the verdict is over all of them.
struct AcceptOptions {
  SweepCommandOptions sweep;    // --nodes, --probes, --pairing, --duration, --wait, ...
  std::string reference;        // a hostlist, "none", or empty: chosen from the registry
  uint32_t repeat = 0;          // passes; 0: one, or as many as --soak allows
  std::string soak;             // passes start until this much time has gone
  std::string format = "text";  // text, json or junit
  std::string output;
  // The site's placement of nodes (the configuration's `nodes:`): what automatic references
  // are chosen by.
  google::protobuf::RepeatedPtrField<v1::NodeLabels> placed;
};

struct AcceptFlags {
  std::string nodes;
  std::string timeout = "2h";
};

CLI::App* AddAcceptCommand(CLI::App& app, AcceptOptions* options, AcceptFlags* flags);
// Exit code: AcceptanceExitCode (0 every node accepted, 2 one rejected, 3 no verdict); 3 too
// for an acceptance that could not be recorded in the controller's history.
int RunAcceptCommand(AcceptOptions options, const AcceptFlags& flags, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_ACCEPT_H_
