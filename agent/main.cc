// fabric-agent: the per-node daemon. Flags only; the work is in //agent:agent.
#include <cstdio>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_split.h"
#include "agent/agent.h"
#include "base/daemon.h"
#include "base/exit_code.h"
#include "base/process.h"

int main(int argc, char** argv) {
  using namespace fabricctl;
  BlockDaemonSignals();
  CLI::App app("fabric-agent: runs fabric probes and audits on this node for the controller",
               "fabric-agent");
  CommonFlags common;
  AddCommonFlags(app, "fabric-agent", &common);
  agent::AgentOptions options;
  std::vector<std::string> labels;
  std::string rpc_timeout = "5s";
  app.add_option(
      "--controller", options.controller,
      "controller HOST:PORT to register with (default: the configuration's `controller`; "
      "none: serve only)");
  app.add_option("--listen", options.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--advertise", options.advertise,
                 "HOST:PORT the controller dials (default: the listen address)");
  app.add_option("--node-name", options.node_name, "name to register under (default: hostname)");
  app.add_option("--label", labels, "KEY=VALUE node label (rack, leaf, ...); repeatable");
  app.add_option(
      "--lldp-socket", options.lldp_socket,
      "lldpd's control socket, for each interface's LLDP neighbour (default: lldpd's own)");
  options.controller_identity.clear();  // default from the configuration's tls section
  app.add_option("--controller-identity", options.controller_identity,
                 "certificate name of the only caller allowed to run probes "
                 "(default: tls.controller_identity, fabric-controller)");
  app.add_option("--sysfs-root", options.sysfs_root, "root of sysfs/procfs reads")
      ->capture_default_str();
  app.add_option("--nccl-log-dir", options.nccl_log_dir,
                 "where NCCL all-reduce ranks write their NCCL_DEBUG=INFO logs (kept a week)")
      ->capture_default_str();
  app.add_option("--watch-file", options.watch_file,
                 "where the link watch writes its verdict (default: watch.file)");
  app.add_option("--rpc-timeout", rpc_timeout, "deadline of every RPC to the controller")
      ->capture_default_str();
  if (auto exit_code = ParseFlags(app, argc, argv)) return *exit_code;

  auto fail = [](const absl::Status& s) {
    std::cerr << "fabric-agent: " << s.message() << "\n";
    return kExitUnknown;
  };
  auto config = ApplyCommonFlags(&common);
  if (!config.ok()) return fail(config.status());
  options.config = *std::move(config);
  if (options.controller.empty()) options.controller = options.config.controller();
  options.limits = probes::LimitsFromConfig(options.config.probes().limits());
  options.tls = common.tls;
  if (options.controller_identity.empty()) {
    options.controller_identity = options.config.tls().controller_identity();
  }
  for (const auto& label : labels) {
    std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
    if (kv.first.empty() || label.find('=') == std::string::npos) {
      return fail(absl::InvalidArgumentError("--label: '" + label + "' is not KEY=VALUE"));
    }
    options.labels[kv.first] = kv.second;
  }
  auto timeout = ParsePositiveDuration(rpc_timeout, "--rpc-timeout");
  if (!timeout.ok()) return fail(timeout.status());
  options.rpc_timeout = *timeout;
  options.on_registered = [controller = options.controller] {
    std::printf("fabric-agent registered with %s\n", controller.c_str());
    std::fflush(stdout);
  };

  // Scripts and tests read the bound address from this line; it comes before "registered".
  options.on_listening = [](const std::string& address) {
    std::printf("fabric-agent listening on %s\n", address.c_str());
    std::fflush(stdout);
  };
  auto agent = agent::Agent::Start(std::move(options));
  if (!agent.ok()) return fail(agent.status());
  NotifyReady("serving on " + (*agent)->address());
  // SIGHUP: the agent's configuration (expectations, limits, TLS) is read at start only; it is
  // logged and ignored, and a restart applies a new file.
  std::string signal = RunDaemon("agent", DaemonHooks{});
  Logger("agent")->info("{}: shutting down", signal);
  NotifyStopping("stopping probes");
  (*agent)->Shutdown();
  return kExitOk;
}
