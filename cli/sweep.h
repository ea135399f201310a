#ifndef FABRICCTL_CLI_SWEEP_H_
#define FABRICCTL_CLI_SWEEP_H_

#include <ostream>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "cli/controller_client.h"

namespace fabricctl::cli {

struct SweepCommandOptions {
  ControllerTarget controller;
  // A Slurm hostlist ("node-[1-4,7],gpu01"); unset: every registered node. Empty or bad:
  // an error, never "every node".
  std::optional<std::string> nodes;
  std::string nodes_from = "--nodes";  // where `nodes` came from, for errors
  std::string pairing;      // full, quick, sample, file:PATH; empty: the controller's default
  uint32_t sample_rounds = 0;
  std::string probes;       // comma-separated probe names; empty: the controller's default
  std::string sizes;        // size sweep for every probe; empty: defaults
  uint64_t iterations = 0;
  std::string duration;
  int64_t baseline = 0;
  bool audits = false;  // run the node audits too
  std::string allreduce_group_by;  // node label: one all-reduce ring per value
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
};

// `fabricctl sweep`: runs a sweep on the controller, shows progress (one line per round on
// stderr when it is a terminal), and renders the report. Exit code 0/1/2 by the worst
// finding, 3 when it could not complete.
int RunSweepCommand(const SweepCommandOptions& options, std::ostream& err);

// `fabricctl map [SWEEP_ID]`: renders a stored sweep's report (0: the latest).
int RunMapCommand(const ControllerTarget& controller, int64_t sweep_id, const std::string& format,
                  const std::string& output, std::ostream& err);

// `fabricctl history`: lists recent sweeps.
int RunHistoryCommand(const ControllerTarget& controller, uint32_t limit,
                      const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_SWEEP_H_
