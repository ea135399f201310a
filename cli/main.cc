// fabricctl: the command line for people, cron, Slurm and CI. Flags only; each subcommand's
// work is in its own library under //cli.
#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "cli/check.h"
#include "cli/lab.h"
#include "probes/audit/audit.h"
#include "cli/nodes.h"
#include "cli/probe.h"
#include "cli/sweep.h"
#include "probes/table.h"

int main(int argc, char** argv) {
  using namespace fabricctl;
  CLI::App app("fabricctl: validate a GPU cluster's network fabric", "fabricctl");
  app.require_subcommand(1);
  app.fallthrough();  // global flags may follow the subcommand
  CommonFlags common;
  AddCommonFlags(app, "fabricctl", &common);
  std::string controller;  // flag, else $FABRICCTL_CONTROLLER, else the configuration's
  constexpr char kDefaultController[] = "127.0.0.1:7400";
  std::string timeout = "5s";
  app.add_option("--controller", controller,
                 absl::StrCat("controller HOST:PORT (default: $FABRICCTL_CONTROLLER, else the "
                              "configuration's `controller`, else ", kDefaultController, ")"))
      ->envname("FABRICCTL_CONTROLLER");
  app.add_option("--timeout", timeout, "deadline of every RPC to the controller")
      ->capture_default_str();

  cli::NodesOptions nodes;
  CLI::App* nodes_cmd = app.add_subcommand("nodes", "list registered nodes and their state");
  nodes_cmd->add_option("--format", nodes.format, "text or json")->capture_default_str();
  CLI::App* nodes_remove_cmd = nodes_cmd->add_subcommand(
      "remove", "forget nodes (decommissioned or renamed); an agent still running registers again");
  nodes_remove_cmd->add_option("names", nodes.remove, "node names")->required();

  cli::ProbeCommandOptions probe;
  CLI::App* probe_cmd = app.add_subcommand(
      "probe", "measure one pair of hosts, like ib_write_bw or iperf3 (standalone, no controller)");
  probe_cmd->add_option("kind", probe.kind, probes::ProbeNames())->required();
  probe_cmd->add_option("host", probe.target, "server HOST[:PORT] (client mode)");
  probe_cmd->add_flag("--server", probe.server, "serve the other half");
  probe_cmd->add_option("--listen", probe.listen_host, "server: address to listen on")
      ->capture_default_str();
  probe_cmd->add_option("--port", probe.port, "server port")->capture_default_str();
  probe_cmd->add_flag("--one-off", probe.one_off, "server: exit after one client session");
  probe_cmd->add_option("--sizes", probe.sizes,
                        "message sizes: MIN:MAX doubling (2:8M) or a list (4K,64K,1M)");
  probe_cmd->add_option("--iters", probe.iterations,
                        "iterations per size (default 5000 bandwidth, 1000 latency)");
  probe_cmd->add_option("--duration", probe.duration,
                        "time per size instead of --iters (4 = 4s, 500ms); the default for bandwidth probes");
  probe_cmd->add_option("--warmup", probe.warmup, "unmeasured iterations before each size");
  probe_cmd->add_option("--streams", probe.params.tcp_streams, "tcp_bw: parallel streams")
      ->capture_default_str();
  probe_cmd->add_option("--device", probe.params.rdma.device,
                        "RDMA device (default: the first with an active port)");
  probe_cmd->add_option("--ib-port", probe.params.rdma.port, "RDMA port (default: first active)");
  probe_cmd->add_option("--gid-index", probe.params.rdma.gid_index,
                        "GID index (default -1: chosen as perftest does)")
      ->capture_default_str();
  probe_cmd->add_option("--tx-depth", probe.params.rdma.tx_depth,
                        "outstanding sends (default 128 for bandwidth)");
  probe_cmd->add_option("--cq-mod", probe.params.rdma.cq_moderation,
                        "one completion every N sends (default 100; 1 above 8 KiB)");
  probe_cmd->add_flag("--bidirectional", probe.params.rdma.bidirectional,
                      "rdma_write_bw, rdma_read_bw: both directions at once, summed (perftest -b)");
  probe_cmd->add_option("--inline", probe.params.rdma.inline_bytes,
                        "largest inline message (default: the device's)");
  probe_cmd->add_option("--memory", probe.memory,
                        "RDMA buffers in host or gpu memory (GPUDirect RDMA through dma-buf or "
                        "peer memory; each side chooses its own, as perftest's --use_cuda)")
      ->capture_default_str();
  probe_cmd->add_option("--gpu", probe.params.rdma.gpu, "--memory gpu: the GPU's CUDA ordinal")
      ->capture_default_str();
  probe_cmd->add_option("--format", probe.format, "text or json")->capture_default_str();
  probe_cmd->add_option("--units", probe.units, "bandwidth in Gb (Gb/s) or MiB (MiB/s)")
      ->capture_default_str();

  cli::SweepCommandOptions sweep;
  std::string sweep_timeout = "2h";
  CLI::App* sweep_cmd = app.add_subcommand(
      "sweep", "measure every pair of nodes and report the fabric's health (exit code gates a job)");
  std::string sweep_nodes;
  CLI::Option* nodes_flag = sweep_cmd->add_option(
      "--nodes", sweep_nodes,
      "the nodes, a Slurm hostlist (node-[1-4,7],gpu01; default: $SLURM_JOB_NODELIST, else "
      "$SLURM_NODELIST, else every registered node)");
  sweep_cmd->add_option("--pairing", sweep.pairing, "full, quick, sample or file:PATH");
  sweep_cmd->add_option("--sample-rounds", sweep.sample_rounds, "rounds of --pairing sample");
  sweep_cmd->add_option("--probes", sweep.probes,
                        "comma-separated probes (default tcp_bw,tcp_lat); allreduce runs a ring over "
                        "every node; gpu_copy measures every node's GPUs' host-device copies");
  sweep_cmd->add_option("--sizes", sweep.sizes, "message sizes for every probe");
  sweep_cmd->add_option("--iters", sweep.iterations, "iterations per size");
  sweep_cmd->add_option("--duration", sweep.duration,
                        "time per size of the bandwidth probes and tcp_lat (4 = 4s, 500ms)");
  sweep_cmd->add_option("--baseline", sweep.baseline, "compare with this earlier sweep");
  sweep_cmd->add_flag("--audits", sweep.audits, "also run every node's audits (as fabricctl check)");
  sweep_cmd->add_option("--allreduce-group", sweep.allreduce_group_by,
                        "allreduce: one ring per value of this node label (rack, rail)");
  sweep_cmd->add_option("--allreduce-backend", sweep.allreduce_backend,
                        "allreduce: nccl (one rank per GPU), rdma or tcp (the ring from host "
                        "memory over RDMA or TCP), or auto (nccl where every node of a group has "
                        "GPUs and NCCL, else rdma where every node has an active RDMA port, else tcp)")
      ->check(CLI::IsMember({"auto", "nccl", "rdma", "tcp"}))
      ->capture_default_str();
  sweep_cmd->add_option("--format", sweep.format, "text, json, junit, html, prom, or drain (NODE<tab>KINDS per node to drain)")
      ->capture_default_str();
  sweep_cmd->add_option("--output", sweep.output, "write the report here (default stdout)");
  sweep_cmd->add_option("--memory", sweep.memory,
                         "rdma_* probes' buffers: host, gpu (GPUDirect RDMA on both halves) or "
                         "CLIENT,SERVER such as host,gpu");
  sweep_cmd->add_option("--gpu", sweep.gpu, "--memory gpu: the CUDA ordinal on every node")
      ->capture_default_str();
  sweep_cmd->add_option("--wait", sweep.wait,
                         "queue behind a sweep already running for up to this long (30s, 10m; "
                         "at most 1h; default: refused at once)");
  sweep_cmd->add_option("--sweep-timeout", sweep_timeout, "deadline of the whole sweep")
      ->capture_default_str();

  int64_t map_id = 0;
  std::string map_format = "text", map_output;
  CLI::App* map_cmd = app.add_subcommand("map", "show a stored sweep's health map (default: latest)");
  map_cmd->add_option("sweep_id", map_id, "sweep id");
  map_cmd->add_option("--format", map_format, "text, json, junit, html, prom, or drain (NODE<tab>KINDS per node to drain)")->capture_default_str();
  map_cmd->add_option("--output", map_output, "write the report here (default stdout)");

  uint32_t history_limit = 20;
  std::string history_format = "text";
  CLI::App* history_cmd = app.add_subcommand("history", "list recent sweeps");
  history_cmd->add_option("--limit", history_limit, "how many")->capture_default_str();
  history_cmd->add_option("--format", history_format, "text or json")->capture_default_str();

  cli::CheckOptions check;
  CLI::App* check_cmd = app.add_subcommand(
      "check", "audit this node with no controller (cron, Slurm HealthCheckProgram, node_exporter)");
  check_cmd->add_option("--sysfs-root", check.sysfs_root,
                        "read sysfs and procfs below this directory (fixtures)")
      ->capture_default_str();
  check_cmd->add_option("--probes,--audits", check.audits,
                        std::string("comma-separated audits (default all: ") +
                            probes::AuditNames() +
                            ") and probes to run on loopback (default: rdma_write_bw where an "
                            "RDMA device is); gpu_copy; allreduce (NCCL over this node's GPUs)");
  check_cmd->add_option("--node-name", check.node, "name in the report (default: hostname)");
  check_cmd->add_option("--nccl-log", check.nccl_logs,
                        "analyse these NCCL_DEBUG=INFO logs of a job instead (transport, GPUDirect, "
                        "fallback to sockets)");
  check_cmd->add_option("--window", check.window,
                        "read error counters twice this far apart (e.g. 10s); default: skip");
  check_cmd->add_option("--format", check.format, "text, json, junit, prom, or drain (NODE<tab>KINDS when to drain)")->capture_default_str();
  check_cmd->add_option("--output", check.output, "write the report here (default stdout)");

  CLI::App* lab_cmd = app.add_subcommand(
      "lab", "a practice cluster on this machine: lab up N [--throttle H=RATE] [--mtu H=MTU] | "
             "sweep | nodes | map | history | kill H | restart-controller | metrics | down");
  lab_cmd->allow_extras();  // everything after `lab` goes to scripts/lab.sh
  lab_cmd->prefix_command();
  lab_cmd->fallthrough(false);

  if (auto exit_code = ParseFlags(app, argc, argv)) return *exit_code;
  if (lab_cmd->parsed()) return cli::RunLabCommand(lab_cmd->remaining(), std::cerr);
  auto fail = [](const absl::Status& s) {
    std::cerr << "fabricctl: " << s.message() << "\n";
    return kExitUnknown;
  };
  // Diagnostics only; results go to stdout in the chosen format.
  if (common.logging.level == "info") common.logging.level = "warn";
  auto config = ApplyCommonFlags(&common);
  if (!config.ok()) return fail(config.status());
  cli::ControllerTarget target;
  if (controller.empty()) controller = config->controller();
  if (controller.empty()) controller = kDefaultController;
  target.address = controller;
  target.tls = common.tls;
  auto deadline = ParsePositiveDuration(timeout, "--timeout");
  if (!deadline.ok()) return fail(deadline.status());
  target.timeout = *deadline;

  if (probe_cmd->parsed()) return cli::RunProbeCommand(probe, std::cout, std::cerr);
  if (check_cmd->parsed()) {
    check.config = *config;
    check.environment = probes::NcclEnvironment();
    return cli::RunCheckCommand(check, std::cerr);
  }
  if (sweep_cmd->parsed()) {
    sweep.controller = target;
    if (nodes_flag->count() > 0) {
      sweep.nodes = sweep_nodes;
    } else {
      // Inside a Slurm job (a prolog, an sbatch script) the job's nodes, as Slurm names them.
      for (const char* var : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
        if (const char* list = std::getenv(var); list != nullptr) {
          sweep.nodes = list;
          sweep.nodes_from = std::string("$") + var;
          break;
        }
      }
    }
    auto d = ParsePositiveDuration(sweep_timeout, "--sweep-timeout");
    if (!d.ok()) return fail(d.status());
    sweep.sweep_timeout = *d;
    return cli::RunSweepCommand(sweep, std::cerr);
  }
  if (map_cmd->parsed()) return cli::RunMapCommand(target, map_id, map_format, map_output, std::cerr);
  if (history_cmd->parsed()) {
    return cli::RunHistoryCommand(target, history_limit, history_format, std::cout, std::cerr);
  }
  if (nodes_cmd->parsed()) {
    nodes.controller = target;
    if (nodes_remove_cmd->parsed()) return cli::RunRemoveNodes(nodes, std::cout, std::cerr);
    return cli::RunNodes(nodes, std::cout, std::cerr);
  }
  return kExitUnknown;
}
