#ifndef FABRICCTL_CLI_LAB_H_
#define FABRICCTL_CLI_LAB_H_

#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace fabricctl::cli {

// `fabricctl lab ARGS...`: the practice cluster. The lab is scripts/lab.sh of a fabricctl
// checkout (network namespaces and tc are shell work); this finds the checkout from the
// current directory upwards, points the script at the binaries beside this one, and runs it
// in place of this process. Returns only on failure (exit code 3, reason on `err`).
// `fabricctl lab ...`: every argument after it goes to scripts/lab.sh.
CLI::App* AddLabCommand(CLI::App& app);

int RunLabCommand(const std::vector<std::string>& args, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_LAB_H_
