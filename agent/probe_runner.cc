#include "agent/probe_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/rail.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "base/status_macros.h"
#include "probes/client.h"
#include "probes/collective/allreduce.h"
#include "probes/common/cause.h"
#include "probes/common/child.h"
#include "probes/common/secret.h"
#include "probes/gpu/cuda.h"
#include "probes/sysfs/sysfs_root.h"
#include "probes/table.h"

namespace fabricctl::agent {
namespace {

constexpr absl::Duration kDefaultServerLifetime = absl::Minutes(10);
// A GPU-memory server half's child exits with this plus the FailureCause of its half's failure.
constexpr int kGpuServerFailedBase = 64;
constexpr absl::Duration kLogLifetime = absl::Hours(24 * 7);
// How long a collective rank waits for its RunLocal after StartServer (the controller sends
// it within seconds) before a later request may take the slot back.
constexpr absl::Duration kCollectiveStartWindow = absl::Minutes(2);

// Creates the NCCL log directory if needed and removes the logs older than kLogLifetime.
// The directory must be this user's own and closed to others (0700): NCCL opens the files in it
// for writing, and a directory others can write would let them plant links.
absl::Status PrepareLogDir(const std::string& dir) {
  auto refuse = [&dir](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat("NCCL log directory ", dir, ": ", why));
  };
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    // The parents, if missing, are made as usual; the directory itself is 0700.
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), error);
    if (error || (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)) {
      return refuse(std::strerror(errno));
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return refuse(std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return refuse("not a directory (a link?)");
  if (st.st_uid != ::geteuid())
    return refuse(absl::StrCat("owned by uid ", st.st_uid, ", not this user"));
  if ((st.st_mode & 077) != 0) return refuse("others may write or read it (want mode 0700)");
  std::error_code error;
  const auto cutoff = std::filesystem::file_time_type::clock::now() -
                      std::chrono::seconds(absl::ToInt64Seconds(kLogLifetime));
  std::filesystem::directory_iterator it(dir, error), end;
  for (; !error && it != end; it.increment(error)) {
    std::error_code entry_error;
    if (it->path().extension() != ".log" || !it->is_regular_file(entry_error)) continue;
    const auto written = it->last_write_time(entry_error);
    if (!entry_error && written < cutoff) std::filesystem::remove(it->path(), entry_error);
  }
  return absl::OkStatus();
}

}  // namespace

ProbeRunner::ProbeRunner(std::string listen_host, std::string advertise_host,
                         probes::ServeContext context, std::string node_name,
                         std::string nccl_log_dir)
    : listen_host_(std::move(listen_host)),
      advertise_host_(std::move(advertise_host)),
      context_(std::move(context)),
      node_name_(std::move(node_name)),
      nccl_log_dir_(std::move(nccl_log_dir)) {}

ProbeRunner::~ProbeRunner() {
  std::map<std::string, Running> servers;
  {
    MutexLock lock(&mu_);
    servers.swap(servers_);
  }
  for (auto& [id, run] : servers) {
    if (run.server) run.server->Stop();
    if (run.stop) *run.stop = true;  // a GPU server's watcher kills its child
    if (run.thread.joinable()) run.thread.join();
  }
}

absl::Status ProbeRunner::Acquire(const std::string& slot, const std::string& holder) {
  MutexLock lock(&mu_);
  // A collective whose RunLocal never came (its controller gave up) gives the slot back.
  // (Only a waiting collective can hold the node's slot while it sits in these maps.)
  const absl::Time now = absl::Now();
  bool reclaimed = false;
  for (auto it = rings_.begin(); it != rings_.end();) {
    reclaimed |= it->second.expires < now;
    it = it->second.expires < now ? rings_.erase(it) : std::next(it);
  }
  for (auto it = nccl_runs_.begin(); it != nccl_runs_.end();) {
    reclaimed |= it->second.expires < now;
    it = it->second.expires < now ? nccl_runs_.erase(it) : std::next(it);
  }
  if (reclaimed && holders_.count("") > 0) {
    Logger("agent")->warn("{}: its all-reduce never ran; the slot is free again", holders_[""]);
    holders_.erase("");
  }
  // The node's slot ("") excludes every probe; a rail's excludes the node's and the rail's.
  auto busy = holders_.find("");
  if (busy == holders_.end()) busy = slot.empty() ? holders_.begin() : holders_.find(slot);
  if (busy != holders_.end()) {
    return absl::ResourceExhaustedError(absl::StrCat("a probe is already running on this node",
                                                     busy->first.empty() ? "" : " on ", busy->first,
                                                     " (", busy->second, ")"));
  }
  holders_[slot] = holder;
  return absl::OkStatus();
}

void ProbeRunner::Release(const std::string& slot) {
  MutexLock lock(&mu_);
  holders_.erase(slot);
}

absl::StatusOr<probes::ProbeParams> ProbeRunner::Validate(const v1::ProbeSpec& spec) const {
  if (probes::FindProbe(spec.kind()) == nullptr && spec.kind() != v1::ALLREDUCE) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.kind: no pair probe of kind ", v1::ProbeKind_Name(spec.kind())));
  }
  probes::ProbeParams params = probes::FromSpec(spec);
  RETURN_IF_ERROR(probes::ValidateParams(params, context_.limits));
  RETURN_IF_ERROR(ResolveRail(probes::SysfsRoot(), gpus_, &params));
  // GPU memory is allowed: the half that uses it runs in a child process (RunGpuClient,
  // StartGpuServer), so the CUDA driver never loads into the agent.
  return params;
}

namespace {

// The host's own procfs and sysfs (this network namespace's), for its drop counters.
const probes::SysfsRoot& HostRoot() {
  static const probes::SysfsRoot root("/");
  return root;
}

}  // namespace

absl::StatusOr<v1::Endpoint> ProbeRunner::StartServer(const v1::ProbeSpec& spec,
                                                      const std::string& run_id, uint32_t rank) {
  RETURN_IF_ERROR(probes::ValidateRunId(run_id));
  auto params = Validate(spec);
  if (!params.ok()) return params.status();
  // A pair probe holds its rail's slot (rails share no link); a collective the node's.
  const std::string slot = spec.kind() != v1::ALLREDUCE ? params->netdev : "";
  RETURN_IF_ERROR(Acquire(slot, absl::StrCat("server of run ", run_id)));
  absl::StatusOr<v1::Endpoint> endpoint =
      spec.kind() != v1::ALLREDUCE          ? StartPairServer(spec, *params, run_id)
      : params->allreduce_backend == "nccl" ? StartNcclRank(run_id, rank)
                                            : StartRingRank(*params, run_id);
  if (!endpoint.ok()) Release(slot);  // nothing holds the slot
  return endpoint;
}

absl::StatusOr<v1::Endpoint> ProbeRunner::StartNcclRank(const std::string& run_id, uint32_t rank) {
  // The slot is held until RunLocal; rank 0's node also holds the rendezvous.
  std::optional<probes::NcclRendezvous> rendezvous;
  v1::Endpoint endpoint;
  if (rank == 0) {
    // Within the controller's 10 s for StartProbeServer: a late answer would hold the slot.
    ASSIGN_OR_RETURN(probes::NcclRendezvous made, probes::NcclRendezvous::Create(absl::Seconds(8)));
    endpoint.set_nccl_unique_id(made.unique_id());
    rendezvous = std::move(made);
  }
  MutexLock lock(&mu_);
  nccl_runs_[run_id] = NcclRun{std::move(rendezvous), absl::Now() + kCollectiveStartWindow};
  return endpoint;
}

absl::StatusOr<v1::Endpoint> ProbeRunner::StartRingRank(const probes::ProbeParams& params,
                                                        const std::string& run_id) {
  // A rank of a ring: the listener its left neighbour connects to and, over RDMA, the queue
  // pairs; held until RunLocal.
  RingRank rank_state;
  ASSIGN_OR_RETURN(rank_state.listener, net::ListenTcp(listen_host_, 0));
  v1::Endpoint endpoint;
  endpoint.set_address(HostPort{advertise_host_, rank_state.listener.port}.ToString());
  // The left neighbour, and only it, learns this secret from the controller with the ranks.
  ASSIGN_OR_RETURN(rank_state.token, probes::NewSecret());
  endpoint.set_token(rank_state.token);
  if (params.ring_transport == "rdma") {
    const uint64_t largest =
        *std::max_element(params.sizes_bytes.begin(), params.sizes_bytes.end());
    ASSIGN_OR_RETURN(rank_state.rdma,
                     probes::RdmaRing::Open(params.rdma, probes::RdmaRingSlotBytes(largest, 2)));
    rank_state.rdma->Describe(&endpoint);
  }
  rank_state.expires = absl::Now() + kCollectiveStartWindow;
  MutexLock lock(&mu_);
  rings_[run_id] = std::move(rank_state);
  return endpoint;
}

absl::StatusOr<v1::Endpoint> ProbeRunner::StartPairServer(const v1::ProbeSpec& spec,
                                                          const probes::ProbeParams& params,
                                                          const std::string& run_id) {
  // Only the client the controller hands the endpoint to knows the run's secret: a stranger's
  // hello is refused, and the server goes on waiting for that client.
  probes::ServeContext run_context = context_;
  ASSIGN_OR_RETURN(run_context.token, probes::NewSecret());
  run_context.expected_spec = spec;
  if (!params.netdev.empty()) {  // on a rail: the rail's device, as this node resolved it
    run_context.local_rdma.device = params.rdma.device;
    run_context.local_rdma.port = params.rdma.port;
  }
  if (params.rdma.server_gpu_memory) return StartGpuServer(params, run_id, run_context);
  // On a rail, the half listens on (and its peer dials) the rail interface's address.
  const bool on_rail = !params.source_host.empty();
  ASSIGN_OR_RETURN(
      std::unique_ptr<probes::ProbeServer> server,
      probes::ProbeServer::Listen(on_rail ? params.source_host : listen_host_, 0, run_context));
  v1::Endpoint endpoint;
  endpoint.set_address(
      HostPort{on_rail ? params.source_host : advertise_host_, server->port()}.ToString());
  endpoint.set_token(run_context.token);
  const absl::Time deadline =
      absl::Now() +
      (params.timeout > absl::ZeroDuration() ? params.timeout : kDefaultServerLifetime);
  // This host receives what tcp_bw sends: what it drops itself is read around the half.
  std::optional<probes::HostDrops> drops_before;
  if (spec.kind() == v1::TCP_BW) drops_before = probes::ReadHostDrops(HostRoot());
  MutexLock lock(&mu_);
  // One run per id, whichever rail: a second would replace a server still running.
  if (servers_.count(run_id) > 0)
    return absl::AlreadyExistsError(absl::StrCat("run ", run_id, " is already started"));
  Running& run = servers_[run_id];
  run.server = std::move(server);
  run.failure = std::make_shared<v1::FailureCause>(v1::FAILURE_CAUSE_UNSPECIFIED);
  run.drops_before = std::move(drops_before);
  probes::ProbeServer* raw = run.server.get();
  run.thread = std::thread([this, raw, deadline, run_id, failure = run.failure,
                            slot = params.netdev] {
    absl::Status served = raw->Serve(/*one_off=*/true, deadline);
    if (!served.ok()) {
      Logger("agent")->warn("probe server of run {}: {}", run_id, std::string(served.message()));
      // What the half itself typed (its GPU memory); read after the join, in StopServer.
      *failure = probes::AttachedCause(served);
    }
    Release(slot);  // the slot frees when the session ends, whether or not Stop is called
  });
  return endpoint;
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::StopServer(const std::string& run_id) {
  Running run;
  {
    MutexLock lock(&mu_);
    if (auto ring = rings_.find(run_id); ring != rings_.end()) {
      rings_.erase(ring);  // RunLocal never came: free the listener and the slot
      holders_.erase("");
      return v1::ProbeResult();
    }
    if (auto nccl = nccl_runs_.find(run_id); nccl != nccl_runs_.end()) {
      nccl_runs_.erase(nccl);  // likewise: the rendezvous ends with it
      holders_.erase("");
      return v1::ProbeResult();
    }
    auto it = servers_.find(run_id);
    if (it == servers_.end()) return absl::NotFoundError(absl::StrCat("no server run ", run_id));
    run = std::move(it->second);
    servers_.erase(it);
  }
  if (run.server) run.server->Stop();
  if (run.stop) *run.stop = true;  // a GPU server's watcher kills its child
  if (run.thread.joinable()) run.thread.join();
  // The server half's own view: what it saw fail (its GPU memory that could not be
  // registered), which the controller believes over the client's relay of it.
  v1::ProbeResult own;
  if (run.failure && *run.failure != v1::FAILURE_CAUSE_UNSPECIFIED) {
    own.set_outcome(v1::PROBE_FAILED);
    own.set_cause(*run.failure);
    own.set_failed_side(v1::SIDE_SERVER);
    own.set_node(node_name_);
  }
  if (run.drops_before) {
    if (auto after = probes::ReadHostDrops(HostRoot())) {
      const probes::HostDrops rose = probes::DropsSince(*run.drops_before, *after);
      own.set_receiver_drops(rose.Total());
      own.set_receiver_drop_counters(rose.Describe());
    }
  }
  return own;
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunClient(const v1::ProbeSpec& spec,
                                                       const v1::Endpoint& server,
                                                       probes::Cancellation* cancel) {
  auto params = Validate(spec);
  if (!params.ok()) return params.status();
  params->cancel = cancel;
  if (server.token().size() > 64)
    return absl::InvalidArgumentError("server.token: at most 64 bytes");
  params->token = server.token();
  auto address = ParseHostPort(server.address(), "server.address");
  if (!address.ok()) return address.status();
  RETURN_IF_ERROR(Acquire(params->netdev, absl::StrCat("client to ", server.address())));
  if (params->rdma.gpu_memory) {
    auto result = RunGpuClient(*params, {address->host, address->port}, cancel);
    Release(params->netdev);
    return result;
  }
  probes::ProbeRun run = probes::RunProbeClient(*params, {address->host, address->port},
                                                context_.limits, /*end_session=*/true);
  Release(params->netdev);
  return probes::ToResult(run, *params);
}

namespace {

// How long a GPU half's child may run: the probe's own deadline, or the node's cap on any
// probe, and a margin for the CUDA context and the GPU memory registration.
absl::Duration ChildTimeout(const probes::ProbeParams& params, const probes::ProbeLimits& limits) {
  return (params.timeout > absl::ZeroDuration() ? params.timeout : limits.max_duration) +
         absl::Seconds(30);
}

}  // namespace

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunGpuClient(const probes::ProbeParams& params,
                                                          const HostPort& server,
                                                          probes::Cancellation* cancel) {
  probes::ProbeParams in_child = params;
  in_child.cancel = nullptr;  // the parent's flag does not reach the child: it is killed instead
  const probes::ProbeLimits limits = context_.limits;
  auto bytes = probes::RunInChild(
      [&]() -> absl::StatusOr<std::string> {
        probes::ProbeRun run = probes::RunProbeClient(in_child, {server.host, server.port}, limits,
                                                      /*end_session=*/true);
        return probes::ToResult(run, in_child).SerializeAsString();
      },
      ChildTimeout(params, limits), cancel);
  v1::ProbeResult result;
  if (!bytes.ok()) {
    probes::ProbeRun failed;
    failed.outcome = absl::IsDeadlineExceeded(bytes.status()) ? probes::Outcome::kTimeout
                                                              : probes::Outcome::kFailed;
    failed.reason =
        absl::StrCat("the GPU-memory client half's process: ", bytes.status().message());
    return probes::ToResult(failed, params);
  }
  if (!result.ParseFromString(*bytes)) {
    return absl::InternalError("the GPU-memory client half's process answered garbage");
  }
  // GPU memory that could not be registered fails the probe with cause
  // CAUSE_GPUDIRECT_UNAVAILABLE and the half that saw it; the controller names the node.
  return result;
}

absl::StatusOr<v1::Endpoint> ProbeRunner::StartGpuServer(const probes::ProbeParams& params,
                                                         const std::string& run_id,
                                                         const probes::ServeContext& context) {
  // The server half runs in a child that listens, answers its port, serves one session from
  // GPU memory and exits; the agent keeps the slot until then (or until StopServer or the
  // deadline kill it).
  probes::ServeContext gpu_context = context;
  gpu_context.local_rdma.gpu_memory = true;
  gpu_context.local_rdma.gpu = params.rdma.gpu;
  const absl::Duration lifetime =
      params.timeout > absl::ZeroDuration() ? params.timeout : kDefaultServerLifetime;
  const std::string host = params.source_host.empty() ? listen_host_ : params.source_host;
  auto child = probes::HeldChild::Start(
      [gpu_context, host, lifetime]() -> absl::StatusOr<std::string> {
        auto server = probes::ProbeServer::Listen(host, 0, gpu_context);
        if (!server.ok()) return server.status();
        const uint16_t port = (*server)->port();
        std::thread([s = server->release(), lifetime] {
          const absl::Status served = s->Serve(/*one_off=*/true, absl::Now() + lifetime);
          // The session is over: the parent sees the child gone, and what failed in its exit
          // status (kGpuServerFailedBase + the cause).
          const v1::FailureCause cause = probes::AttachedCause(served);
          ::_exit(cause == v1::FAILURE_CAUSE_UNSPECIFIED ? 0 : kGpuServerFailedBase + cause);
        }).detach();
        return absl::StrCat(port);
      },
      absl::Seconds(10));
  if (!child.ok()) return child.status();
  uint32_t port = 0;
  if (!absl::SimpleAtoi(child->answer(), &port) || port == 0 || port > 65535) {
    return absl::InternalError("the GPU-memory server half's process answered no port");
  }
  v1::Endpoint endpoint;
  endpoint.set_address(HostPort{params.source_host.empty() ? advertise_host_ : params.source_host,
                                static_cast<uint16_t>(port)}
                           .ToString());
  endpoint.set_token(context.token);
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto held = std::make_shared<probes::HeldChild>(*std::move(child));
  const absl::Time deadline = absl::Now() + lifetime + absl::Seconds(5);
  MutexLock lock(&mu_);
  if (servers_.count(run_id) > 0)
    return absl::AlreadyExistsError(absl::StrCat("run ", run_id, " is already started"));
  Running& run = servers_[run_id];
  run.stop = stop;
  run.failure = std::make_shared<v1::FailureCause>(v1::FAILURE_CAUSE_UNSPECIFIED);
  run.thread =
      std::thread([this, held, stop, deadline, failure = run.failure, slot = params.netdev] {
        bool exited = false;
        while (!*stop && !(exited = held->Exited()) && absl::Now() < deadline) {
          absl::SleepFor(absl::Milliseconds(50));
        }
        // Asked to stop: a child whose client has said goodbye is about to exit with its verdict;
        // it gets a moment before it is killed.
        for (int i = 0; !exited && *stop && i < 40; ++i) {
          if (!(exited = held->Exited())) absl::SleepFor(absl::Milliseconds(50));
        }
        const int code = exited ? held->exit_code() : -1;
        if (code > kGpuServerFailedBase && v1::FailureCause_IsValid(code - kGpuServerFailedBase)) {
          *failure = static_cast<v1::FailureCause>(code - kGpuServerFailedBase);
        }
        *held = probes::HeldChild();  // kills and reaps a child still serving
        Release(slot);
      });
  return endpoint;
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunGpuCopy(const v1::ProbeSpec& spec,
                                                        probes::Cancellation* cancel) {
  probes::ProbeParams params = probes::FromSpec(spec);
  RETURN_IF_ERROR(probes::ValidateParams(params, context_.limits));
  RETURN_IF_ERROR(Acquire("", "gpu_copy"));
  // The CUDA work runs in a child (probes::RunGpuCopy), killed at the deadline or on cancel.
  const absl::Duration timeout = ChildTimeout(params, context_.limits);
  probes::ProbeRun run = probes::RunGpuCopy(params, timeout, cancel);
  Release("");
  return probes::ToResult(run, params);
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunLocal(const v1::RunLocalProbeRequest& request,
                                                      probes::Cancellation* cancel) {
  const v1::ProbeSpec& spec = request.spec();
  if (spec.kind() == v1::GPU_COPY) return RunGpuCopy(spec, cancel);
  const std::string& run_id = request.run_id();
  // What StartServer left (the ring's listener, or the NCCL run's rendezvous) holds the node's
  // slot; whatever happens below, this run ends here and frees both.
  RingRank ring;
  std::optional<probes::NcclRendezvous> rendezvous;
  bool nccl = false;
  {
    MutexLock lock(&mu_);
    if (auto it = rings_.find(run_id); it != rings_.end()) {
      ring = std::move(it->second);
      rings_.erase(it);
    } else if (auto n = nccl_runs_.find(run_id); n != nccl_runs_.end()) {
      rendezvous = std::move(n->second.rendezvous);
      nccl_runs_.erase(n);
      nccl = true;
    } else {
      return absl::FailedPreconditionError(absl::StrCat("no collective started for run ", run_id));
    }
  }
  // The slot frees last, after the rendezvous child and the queue pairs are gone.
  struct ReleaseAtEnd {
    ProbeRunner* runner;
    RingRank* ring;
    std::optional<probes::NcclRendezvous>* rendezvous;
    ~ReleaseAtEnd() {
      rendezvous->reset();
      ring->rdma.reset();
      ring->listener = net::Listener();
      runner->Release("");
    }
  } release{this, &ring, &rendezvous};
  if (spec.kind() != v1::ALLREDUCE) {
    return absl::InvalidArgumentError("spec.kind: only ALLREDUCE runs as a local probe");
  }
  auto params = Validate(spec);
  if (!params.ok()) return params.status();
  if ((params->allreduce_backend == "nccl") != nccl ||
      (!nccl && (params->ring_transport == "rdma") != (ring.rdma != nullptr))) {
    return absl::InvalidArgumentError("spec.allreduce.backend differs from the started run's");
  }
  if (nccl) return RunNccl(request, *params);
  const auto& ranks = request.ranks();
  const uint32_t rank = request.rank();
  if (ranks.size() < 2 || ranks.size() > 4096 || rank >= static_cast<uint32_t>(ranks.size())) {
    return absl::InvalidArgumentError("ranks: 2 to 4096 endpoints, and rank below their count");
  }
  // This rank's listener takes only the secret it made at StartServer, whatever the request says.
  if (ranks[rank].token() != ring.token) {
    return absl::InvalidArgumentError("ranks: this rank's endpoint is not the one it started");
  }
  std::vector<probes::RankAddress> addresses;
  for (const auto& e : ranks) {
    auto a = ParseHostPort(e.address(), "ranks.address");
    if (!a.ok()) return a.status();
    addresses.push_back({a->host, a->port, e.token().substr(0, 64)});
  }
  std::vector<v1::Endpoint> endpoints(ranks.begin(), ranks.end());
  probes::ProbeRun run =
      probes::RunRingAllreduce(*params, rank, addresses, ring.listener, ring.rdma.get(), endpoints);
  return probes::ToResult(run, *params);
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunNccl(const v1::RunLocalProbeRequest& request,
                                                     const probes::ProbeParams& params) {
  const uint32_t world = request.world_size(), local = request.local_ranks(),
                 first = request.rank();
  if (world < 1 || world > 65536 || local < 1 || local > 64 || uint64_t{first} + local > world) {
    return absl::InvalidArgumentError(
        "world_size 1 to 65536, local_ranks 1 to 64, and rank + local_ranks within world_size");
  }
  if (request.ranks_size() < 1 || request.ranks(0).nccl_unique_id().size() != 128) {
    return absl::InvalidArgumentError("ranks[0].nccl_unique_id: 128 bytes expected");
  }
  RETURN_IF_ERROR(PrepareLogDir(nccl_log_dir_));
  probes::NcclNodeRun node =
      probes::RunNcclNode(params, request.ranks(0).nccl_unique_id(), first, world, local,
                          absl::StrCat(nccl_log_dir_, "/", request.run_id()));
  v1::ProbeResult result = probes::ToResult(node.run, params);
  probes::NcclVerdict verdict = probes::JudgeNcclLogs(node_name_, node.logs, nccl_expect_);
  *result.mutable_nccl() = verdict.transport;
  for (auto& f : verdict.findings) *result.add_findings() = std::move(f);
  return result;
}

}  // namespace fabricctl::agent
