#include "cli/lab.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/exit_code.h"

namespace fabricctl::cli {
namespace {

bool IsFile(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

int RunLabCommand(const std::vector<std::string>& args, std::ostream& err) {
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
    err << "fabricctl lab: cannot read the current directory: " << std::strerror(errno) << "\n";
    return kExitUnknown;
  }
  std::string dir = cwd, script;
  for (;;) {
    if (IsFile(dir + "/scripts/lab.sh") && IsFile(dir + "/proto/controller.proto")) {
      script = dir + "/scripts/lab.sh";
      break;
    }
    if (dir == "/") break;
    dir = Parent(dir);
  }
  if (script.empty()) {
    err << "fabricctl lab: run it inside a fabricctl checkout (no scripts/lab.sh above " << cwd
        << ")\n";
    return kExitUnknown;
  }
  // This binary is BIN/cli/fabricctl; the daemons are BIN/controller and BIN/agent.
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0 && std::getenv("FABRIC_BIN") == nullptr) {
    const std::string bin = Parent(Parent(std::string(self, static_cast<size_t>(n))));
    if (IsFile(bin + "/controller/fabric-controller")) ::setenv("FABRIC_BIN", bin.c_str(), 1);
  }
  std::vector<char*> argv = {const_cast<char*>("bash"), script.data()};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv("/bin/bash", argv.data());
  err << "fabricctl lab: cannot run " << script << ": " << std::strerror(errno) << "\n";
  return kExitUnknown;
}

CLI::App* AddLabCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "lab",
      "a practice cluster on this machine: lab up N [--throttle H=RATE] [--mtu H=MTU] | "
      "sweep | nodes | map | history | kill H | restart H | throttle H RATE | flap H [N] | "
      "check H | restart-controller | "
      "metrics | down");
  cmd->allow_extras();  // everything after `lab` goes to scripts/lab.sh
  cmd->prefix_command();
  cmd->fallthrough(false);
  return cmd;
}

}  // namespace fabricctl::cli
