#ifndef FABRICCTL_CLI_CHECK_H_
#define FABRICCTL_CLI_CHECK_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "proto/config.pb.h"

namespace fabricctl::cli {

struct CheckOptions {
  std::string sysfs_root = "/";
  std::string audits;           // comma-separated; empty: all
  std::string format = "text";  // text, json, junit or prom
  std::string output;
  std::string node;        // empty: the hostname
  std::string window;      // counters audit window, e.g. "10s"; empty: skipped
  std::string watch_file;  // the agent's link watch verdict; empty: watch.file
  // NCCL_DEBUG=INFO logs of a job to analyse instead of this node's audits.
  std::vector<std::string> nccl_logs;
  v1::Config config;
  std::map<std::string, std::string> environment;  // NCCL_* of this process
};

// `fabricctl check`: this node's audits, no controller. For cron, systemd timers, Slurm's
// HealthCheckProgram and node_exporter's textfile collector. Exit code 0/1/2 by the worst
// finding, 3 when the check could not run.
// `fabricctl check`: its flags, into `options`.
CLI::App* AddCheckCommand(CLI::App& app, CheckOptions* options);

int RunCheckCommand(const CheckOptions& options, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_CHECK_H_
