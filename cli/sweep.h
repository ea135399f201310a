#ifndef FABRICCTL_CLI_SWEEP_H_
#define FABRICCTL_CLI_SWEEP_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/controller_client.h"
#include "proto/controller.grpc.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::cli {

struct SweepCommandOptions {
  ControllerTarget controller;
  // A Slurm hostlist ("node-[1-4,7],gpu01"); unset: every registered node. Empty or bad:
  // an error, never "every node".
  std::optional<std::string> nodes;
  std::string nodes_from = "--nodes";  // where `nodes` came from, for errors
  std::string pairing;  // full, quick, sample, file:PATH; empty: the controller's default
  uint32_t sample_rounds = 0;
  std::string probes;  // comma-separated probe names; empty: the controller's default
  std::string sizes;   // size sweep for every probe; empty: defaults
  uint64_t iterations = 0;
  std::string duration;
  int64_t baseline = 0;
  bool audits = false;  // run the node audits too
  uint32_t flows = 0;
  bool node_bandwidth = false;  // --node-bandwidth (false: the controller's default)   // flows per
                                // pair probe (SweepRequest.flows); 0: the controller's default
  std::string allreduce_group_by;  // node label: one all-reduce ring per value
  std::string rails;               // comma-separated rail names; empty: every configured rail
  std::string allreduce_backend = "auto";  // auto, nccl, rdma or tcp
  std::string format = "text";
  std::string output;
  // RDMA probes' buffers: "host", "gpu" (both halves) or "CLIENT,SERVER" ("host,gpu"); empty:
  // host. `gpu` is the CUDA ordinal on every node.
  std::string memory;
  uint32_t gpu = 0;
  // How long to queue behind a sweep already running on the controller; empty: refused at once.
  std::string wait;
  // Deadline of the whole sweep RPC.
  absl::Duration sweep_timeout = absl::Hours(2);
  // --max-age: the controller measures again only the nodes not known-good within this age, for
  // what this sweep measures (controller/verdict/stale.h); "0": every node; "configured": the
  // configuration's sweep.max_age (main.cc resolves it); empty: every node, plainly.
  std::string max_age;
  // When the sweep gives no verdict (exit 3), why, as one word for a script (the Slurm
  // prolog) written here: see SweepFailure. Empty: not written.
  std::string status_file;
};

// Why a sweep gave no verdict, as `--status-file` names it:
//   unreachable  no controller took a connection (down, or its host gone before the sweep)
//   refused      the controller refused it (its queue, a wait that ran out)
//   permission   the certificate's identity may not sweep
//   incomplete   the sweep started but its report did not arrive whole (the stream was cut)
//   timeout      it ran past --sweep-timeout
//   cancelled    stopped (a signal)
//   invalid      a bad flag, node list, format or output
//   error        anything else
std::string SweepFailure(const absl::Status& status, bool started);

// The sweep request the options ask for (nodes, pairing, probes, sizes, ...): INVALID_ARGUMENT
// naming the flag that is wrong.
absl::StatusOr<v1::SweepRequest> BuildSweepRequest(const SweepCommandOptions& o);

// The registry's nodes named (all when `names` is empty), under the controller's RPC deadline.
absl::StatusOr<v1::ListNodesResponse> ListRegistry(v1::ControllerService::Stub& stub,
                                                   const ControllerTarget& controller,
                                                   const std::vector<std::string>& names);

// The sweep RPC under `options`' controller and deadline, its progress on `err` and its report
// (whole, from its chunks). `started`: an event came, the controller took the sweep
// (SweepFailure's classes).
absl::StatusOr<v1::Report> StreamSweep(v1::ControllerService::Stub& stub,
                                       const v1::SweepRequest& request,
                                       const SweepCommandOptions& options, std::ostream& err,
                                       bool& started);

// What `fabricctl sweep`'s flags hold before they become options (ResolveSweepFlags).
struct SweepFlags {
  std::string nodes;
  CLI::Option* nodes_flag = nullptr;
  std::string timeout = "2h";
};

// `fabricctl sweep`: its flags, into `options` and `flags`.
CLI::App* AddSweepCommand(CLI::App& app, SweepCommandOptions* options, SweepFlags* flags);
// The nodes (--nodes, else $SLURM_JOB_NODELIST, else $SLURM_NODELIST, else every registered
// node) and the sweep's deadline, into `options`.
absl::Status ResolveSweepFlags(const SweepFlags& flags, SweepCommandOptions* options);

struct MapOptions {
  int64_t sweep_id = 0;
  std::string format = "text";
  std::string output;
};
CLI::App* AddMapCommand(CLI::App& app, MapOptions* options);

// `fabricctl sweep`: runs a sweep on the controller, shows progress (one line per round on
// stderr when it is a terminal), and renders the report. Exit code 0/1/2 by the worst
// finding, 3 when it could not complete.
// --max-age configured: the configuration's sweep.max_age, or none (every node) when unset.
void ResolveMaxAge(const v1::Config& config, SweepCommandOptions* options);

int RunSweepCommand(const SweepCommandOptions& options, std::ostream& err);

// `fabricctl map [SWEEP_ID]`: renders a stored sweep's report (0: the latest).
int RunMapCommand(const ControllerTarget& controller, int64_t sweep_id, const std::string& format,
                  const std::string& output, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_SWEEP_H_
