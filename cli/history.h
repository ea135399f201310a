#ifndef FABRICCTL_CLI_HISTORY_H_
#define FABRICCTL_CLI_HISTORY_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/controller_client.h"
#include "proto/controller.pb.h"

namespace fabricctl::cli {

struct HistoryOptions {
  uint32_t limit = 20;
  std::string format = "text";
  bool acceptances = false;  // --acceptances: the recorded acceptances instead of the sweeps
  // `history prune`: the policy's values to use instead of the configuration's.
  std::string keep;                     // a duration ("30d"), "" for the configuration's
  std::optional<uint32_t> keep_sweeps;  // unset: the configuration's
  CLI::App* prune = nullptr;            // the subcommand, to tell whether it was given
};
CLI::App* AddHistoryCommand(CLI::App& app, HistoryOptions* options);

// `fabricctl history`: lists recent sweeps.
int RunHistoryCommand(const ControllerTarget& controller, uint32_t limit, const std::string& format,
                      std::ostream& out, std::ostream& err);

// `fabricctl history --acceptances`: lists recent acceptances (`fabricctl accept`'s records),
// in JSON with their verdicts whole.
int RunAcceptanceHistory(const ControllerTarget& controller, uint32_t limit,
                         const std::string& format, std::ostream& out, std::ostream& err);

// The text listing: a header, then a line an acceptance as listed (newest first): its id, when
// and by whom it was recorded, the nodes accepted and rejected (the first few by name), its
// sweeps and, when cut short, why.
std::string FormatAcceptances(const v1::ListAcceptancesResponse& listed);

// `fabricctl history prune`: deletes old sweeps on the controller now (an administrator's
// certificate) and says how many.
int RunPruneHistory(const ControllerTarget& controller, const HistoryOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_HISTORY_H_
