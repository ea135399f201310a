#ifndef FABRICCTL_CLI_HISTORY_H_
#define FABRICCTL_CLI_HISTORY_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/controller_client.h"

namespace fabricctl::cli {

struct HistoryOptions {
  uint32_t limit = 20;
  std::string format = "text";
  // `history prune`: the policy's values to use instead of the configuration's.
  std::string keep;                     // a duration ("30d"), "" for the configuration's
  std::optional<uint32_t> keep_sweeps;  // unset: the configuration's
  CLI::App* prune = nullptr;            // the subcommand, to tell whether it was given
};
CLI::App* AddHistoryCommand(CLI::App& app, HistoryOptions* options);

// `fabricctl history`: lists recent sweeps.
int RunHistoryCommand(const ControllerTarget& controller, uint32_t limit, const std::string& format,
                      std::ostream& out, std::ostream& err);

// `fabricctl history prune`: deletes old sweeps on the controller now (an administrator's
// certificate) and says how many.
int RunPruneHistory(const ControllerTarget& controller, const HistoryOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_HISTORY_H_
