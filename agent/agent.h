#ifndef FABRICCTL_AGENT_AGENT_H_
#define FABRICCTL_AGENT_AGENT_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/agent_service.h"
#include "agent/inventory.h"
#include "agent/link_state.h"
#include "agent/link_watch.h"
#include "agent/probe_runner.h"
#include "base/mutex.h"
#include "base/tls.h"
#include "grpcpp/server.h"
#include "probes/sysfs/sysfs_root.h"
#include "proto/config.pb.h"
#include "proto/controller.grpc.pb.h"

namespace fabricctl::agent {

struct AgentOptions {
  // HOST:PORT to serve on; port 0 picks a free port.
  std::string listen = "0.0.0.0:7401";
  // HOST:PORT the controller dials; empty: the listen address (with the hostname in place of
  // a wildcard host) and the bound port.
  std::string advertise;
  // Controller to register with; empty: serve only (fabricctl check works without one). A
  // list separated by commas (a controller and its standby): the agent keeps to one until it
  // fails, then registers with the next.
  std::string controller;
  // Name to register under; empty: the hostname.
  std::string node_name;
  std::map<std::string, std::string> labels;
  // lldpd's control socket ("" its default), for the inventory's LLDP neighbours.
  std::string lldp_socket;
  // Deadline of every RPC to the controller.
  absl::Duration rpc_timeout = absl::Seconds(5);
  // Longest wait between registration attempts while the controller is unreachable.
  absl::Duration max_retry_backoff = absl::Seconds(10);
  // Certificate identity (CN or SAN) of the only caller allowed to run probes here.
  std::string controller_identity = "fabric-controller";
  TlsOptions tls;
  std::string sysfs_root = "/";
  // Where NCCL all-reduce ranks write their NCCL_DEBUG=INFO logs (kept a week).
  std::string nccl_log_dir = "/tmp/fabric-agent-nccl";
  v1::Config config;
  // Caps on every probe request (from config.probes.limits).
  probes::ProbeLimits limits;
  // Where the link watch writes its verdict for `fabricctl check`; empty: watch.file.
  std::string watch_file;
  // Called once with the bound address, before registration starts.
  std::function<void(const std::string&)> on_listening;
  // Called once, from the registration thread, after the first successful registration.
  std::function<void()> on_registered;
};

// fabric-agent: serves AgentService and keeps itself registered with the controller —
// registering, heartbeating at the interval the controller asks for, and registering again
// whenever the controller has forgotten it or was unreachable.
class Agent {
 public:
  static absl::StatusOr<std::unique_ptr<Agent>> Start(AgentOptions options);
  ~Agent();

  const std::string& address() const { return address_; }
  const std::string& node_name() const { return node_name_; }
  // Stops the registration loop and the server.
  void Shutdown();

 private:
  Agent() = default;
  // Starts the gRPC server on `listen` and learns the address it is reached at.
  absl::Status Serve(const AgentOptions& options, const HostPort& listen,
                     const std::string& advertise_host, const TransportSecurity& security);
  void RegistrationLoop();
  // One registration; returns the heartbeat interval the controller asks for.
  absl::StatusOr<absl::Duration> Register();
  // One heartbeat; returns whether the controller knows this node.
  absl::StatusOr<bool> Heartbeat();
  // Waits up to `d`; returns false when shutting down.
  bool WaitFor(absl::Duration d);
  // Samples the links every `interval` and writes the verdict, until shutdown.
  void WatchLoop(absl::Duration interval);

  AgentOptions options_;
  std::unique_ptr<probes::SysfsRoot> sysfs_;
  GpuInventory gpus_;            // listed once, at start
  int64_t started_unix_ms_ = 0;  // when this process started: a restart ends known-good
  // The links the last registration reported, watched by each heartbeat; the registration
  // thread's alone.
  WatchedLinks watched_;
  std::unique_ptr<ProbeRunner> probes_;
  // The links' watch between sweeps (none when watch.interval is 0s), and its thread.
  std::unique_ptr<LinkWatch> watch_;
  std::thread watching_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  // The controllers (one, or an active one and standbys) and the one in use; only the
  // registration thread changes `current_`.
  std::vector<std::unique_ptr<v1::ControllerService::Stub>> controllers_;
  std::vector<std::string> controller_addresses_;
  size_t current_ = 0;
  std::string address_;
  std::string node_name_;

  Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The node's known-good state as the controller's last heartbeat answer gave it (none: no
  // pass on record), noted in the link watch's verdict; unset while no controller answers.
  std::optional<std::optional<v1::KnownGood>> known_good_ ABSL_GUARDED_BY(mu_);
  std::thread registration_;
};

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_AGENT_H_
