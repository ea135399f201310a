#ifndef FABRICCTL_AGENT_PROBE_RUNNER_H_
#define FABRICCTL_AGENT_PROBE_RUNNER_H_

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "base/net_address.h"
#include "base/socket.h"
#include "probes/collective/rdma_ring.h"
#include "probes/common/params.h"
#include "probes/gpu/nccl.h"
#include "probes/probe.h"
#include "probes/server.h"
#include "probes/tcp/host_drops.h"
#include "proto/agent.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::agent {

// Runs this node's halves of pair probes for the controller, one heavy probe at a time on each
// rail: while a server half is up or a client half runs, another request for the same rail (or,
// without rails, the node) gets ResourceExhausted, so two measurements never share a NIC. Every
// request is validated against the node's own caps.
//
// Thread-safe.
class ProbeRunner {
 public:
  // `listen_host` is where server halves listen; `advertise_host` what peers dial. NCCL ranks
  // write their INFO logs to `nccl_log_dir` (created when needed; logs older than a week are
  // removed).
  // `node_name` is the name findings give this node.
  ProbeRunner(std::string listen_host, std::string advertise_host, probes::ServeContext context,
              std::string node_name = "", std::string nccl_log_dir = "/tmp/fabric-agent-nccl");
  ~ProbeRunner();

  // Starts a one-off server half for `run_id`; returns the address the client half dials and
  // the run's secret (endpoint.token), without which the server takes no hello. The
  // server ends by itself after its session, or after the spec's timeout (default 10 minutes).
  // For an all-reduce it takes the slot for the run: the ring's listener, or for NCCL at
  // `rank` 0 the rendezvous, whose unique id the endpoint carries.
  absl::StatusOr<v1::Endpoint> StartServer(const v1::ProbeSpec& spec, const std::string& run_id,
                                           uint32_t rank = 0);
  // Ends a server half early (or reaps one that has finished) and returns the half's own view:
  // an empty result, or one with outcome FAILED, the cause and SIDE_SERVER when the half itself
  // failed. NotFound for an unknown run.
  absl::StatusOr<v1::ProbeResult> StopServer(const std::string& run_id);
  // Runs the client half against `server` and returns its result (failures are results too).
  // `cancel` stops it from another thread (its requester went away): its sockets close and the
  // slot is free again as soon as it returns.
  absl::StatusOr<v1::ProbeResult> RunClient(const v1::ProbeSpec& spec, const v1::Endpoint& server,
                                            probes::Cancellation* cancel = nullptr);
  // Collectives, after StartServer: the host ring joins the ring of request.ranks as
  // request.rank; NCCL runs request.local_ranks ranks (one per GPU, from request.rank) of
  // request.world_size, each in a child process, and judges their logs. Frees the slot.
  // gpu_copy needs no StartServer: it takes the slot, measures every GPU in a child process
  // under the spec's timeout, and frees it; `cancel` kills the child.
  absl::StatusOr<v1::ProbeResult> RunLocal(const v1::RunLocalProbeRequest& request,
                                           probes::Cancellation* cancel = nullptr);
  // What a single node's NCCL choice of sockets is weighed against (set once, at start).
  void SetNcclExpectation(probes::NcclExpectation expect) { nccl_expect_ = std::move(expect); }
  // This node's GPUs (set once, at start): on a rail, the GPU nearest the rail's NIC.
  void SetGpus(std::vector<v1::Gpu> gpus) { gpus_ = std::move(gpus); }

 private:
  // Takes a probe slot, or says who holds it: a rail's (`slot` its interface), which excludes
  // another probe on that rail, or the node's (""), which excludes every other probe.
  absl::Status Acquire(const std::string& slot, const std::string& holder);
  void Release(const std::string& slot);
  absl::StatusOr<probes::ProbeParams> Validate(const v1::ProbeSpec& spec) const;
  // StartServer's three kinds of run, with the slot taken (the caller frees it on an error):
  // an NCCL rank (rank 0 holds the rendezvous), a host-ring rank (its listener and, over
  // RDMA, its queue pairs), and a pair probe's server half (in a child for GPU memory).
  absl::StatusOr<v1::Endpoint> StartNcclRank(const std::string& run_id, uint32_t rank);
  absl::StatusOr<v1::Endpoint> StartRingRank(const probes::ProbeParams& params,
                                             const std::string& run_id);
  absl::StatusOr<v1::Endpoint> StartPairServer(const v1::ProbeSpec& spec,
                                               const probes::ProbeParams& params,
                                               const std::string& run_id);
  // GPU-memory halves, each in a child process under a watchdog (the CUDA driver stays out of
  // the agent): the client's result, with gpudirect_unavailable for this node when its GPU
  // memory could not be registered; the server's endpoint, its child serving one session.
  absl::StatusOr<v1::ProbeResult> RunGpuClient(const probes::ProbeParams& params,
                                               const HostPort& server,
                                               probes::Cancellation* cancel);
  absl::StatusOr<v1::Endpoint> StartGpuServer(const probes::ProbeParams& params,
                                              const std::string& run_id,
                                              const probes::ServeContext& context);
  absl::StatusOr<v1::ProbeResult> RunGpuCopy(const v1::ProbeSpec& spec,
                                             probes::Cancellation* cancel);
  absl::StatusOr<v1::ProbeResult> RunNccl(const v1::RunLocalProbeRequest& request,
                                          const probes::ProbeParams& params);

  probes::NcclExpectation nccl_expect_;
  std::vector<v1::Gpu> gpus_;
  const std::string listen_host_;
  const std::string advertise_host_;
  const probes::ServeContext context_;

  Mutex mu_;
  std::map<std::string, std::string> holders_ ABSL_GUARDED_BY(mu_);  // slot -> holder
  struct Running {
    std::unique_ptr<probes::ProbeServer> server;  // a host-memory server half, in this process
    std::shared_ptr<std::atomic<bool>> stop;      // a GPU-memory one's, in a child: stop it
    // What the half saw fail, written by `thread` before it ends (read after the join).
    std::shared_ptr<v1::FailureCause> failure;
    std::thread thread;
    // tcp_bw: this host's own drop counters when the half started (the receiving side's).
    std::optional<probes::HostDrops> drops_before;
  };
  std::map<std::string, Running> servers_ ABSL_GUARDED_BY(mu_);
  // A host-ring rank between StartServer and RunLocal: its TCP listener (the control channel,
  // and the data path over TCP) and, over RDMA, its queue pairs.
  // Both expire (a later Acquire reclaims the slot) when RunLocal has not come by `expires`.
  struct RingRank {
    net::Listener listener;
    std::unique_ptr<probes::RdmaRing> rdma;
    absl::Time expires;
    std::string token;  // what the left neighbour must say to join
  };
  std::map<std::string, RingRank> rings_ ABSL_GUARDED_BY(mu_);  // by run
  // NCCL runs holding the slot, with the rendezvous on rank 0's node.
  struct NcclRun {
    std::optional<probes::NcclRendezvous> rendezvous;
    absl::Time expires;
  };
  std::map<std::string, NcclRun> nccl_runs_ ABSL_GUARDED_BY(mu_);
  const std::string node_name_;
  const std::string nccl_log_dir_;
};

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_PROBE_RUNNER_H_
