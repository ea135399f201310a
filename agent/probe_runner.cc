#include "agent/probe_runner.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "probes/client.h"
#include "probes/collective/allreduce.h"
#include "probes/table.h"

namespace fabricctl::agent {
namespace {

constexpr absl::Duration kDefaultServerLifetime = absl::Minutes(10);

}  // namespace

ProbeRunner::ProbeRunner(std::string listen_host, std::string advertise_host,
                         probes::ServeContext context)
    : listen_host_(std::move(listen_host)),
      advertise_host_(std::move(advertise_host)),
      context_(std::move(context)) {}

ProbeRunner::~ProbeRunner() {
  std::map<std::string, Running> servers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    servers.swap(servers_);
  }
  for (auto& [id, run] : servers) {
    run.server->Stop();
    if (run.thread.joinable()) run.thread.join();
  }
}

absl::Status ProbeRunner::Acquire(const std::string& holder) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!holder_.empty()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a probe is already running on this node (", holder_, ")"));
  }
  holder_ = holder;
  return absl::OkStatus();
}

void ProbeRunner::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  holder_.clear();
}

absl::StatusOr<probes::ProbeParams> ProbeRunner::Validate(const v1::ProbeSpec& spec) const {
  if (probes::FindProbe(spec.kind()) == nullptr && spec.kind() != v1::ALLREDUCE) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.kind: no pair probe of kind ", v1::ProbeKind_Name(spec.kind())));
  }
  probes::ProbeParams params = probes::FromSpec(spec);
  if (auto s = probes::ValidateParams(params, context_.limits); !s.ok()) return s;
  return params;
}

absl::StatusOr<v1::Endpoint> ProbeRunner::StartServer(const v1::ProbeSpec& spec,
                                                      const std::string& run_id) {
  if (run_id.empty() || run_id.size() > 128) {
    return absl::InvalidArgumentError("run_id: 1 to 128 characters");
  }
  auto params = Validate(spec);
  if (!params.ok()) return params.status();
  if (auto s = Acquire(absl::StrCat("server of run ", run_id)); !s.ok()) return s;
  if (spec.kind() == v1::ALLREDUCE) {
    // A rank of a ring: the listener its left neighbour connects to; held until RunLocal.
    auto listener = probes::ListenTcp(listen_host_, 0);
    if (!listener.ok()) {
      Release();
      return listener.status();
    }
    v1::Endpoint endpoint;
    endpoint.set_address(HostPort{advertise_host_, listener->port}.ToString());
    std::lock_guard<std::mutex> lock(mu_);
    rings_[run_id] = *std::move(listener);
    return endpoint;
  }
  auto server = probes::ProbeServer::Listen(listen_host_, 0, context_);
  if (!server.ok()) {
    Release();
    return server.status();
  }
  v1::Endpoint endpoint;
  endpoint.set_address(HostPort{advertise_host_, (*server)->port()}.ToString());
  const absl::Time deadline =
      absl::Now() + (params->timeout > absl::ZeroDuration() ? params->timeout
                                                              : kDefaultServerLifetime);
  std::lock_guard<std::mutex> lock(mu_);
  Running& run = servers_[run_id];
  run.server = *std::move(server);
  probes::ProbeServer* raw = run.server.get();
  run.thread = std::thread([this, raw, deadline, run_id] {
    absl::Status served = raw->Serve(/*one_off=*/true, deadline);
    if (!served.ok()) {
      Logger("agent")->warn("probe server of run {}: {}", run_id, std::string(served.message()));
    }
    Release();  // the slot frees when the session ends, whether or not Stop is called
  });
  return endpoint;
}

absl::Status ProbeRunner::StopServer(const std::string& run_id) {
  Running run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto ring = rings_.find(run_id); ring != rings_.end()) {
      rings_.erase(ring);  // RunLocal never came: free the listener and the slot
      holder_.clear();
      return absl::OkStatus();
    }
    auto it = servers_.find(run_id);
    if (it == servers_.end()) return absl::NotFoundError(absl::StrCat("no server run ", run_id));
    run = std::move(it->second);
    servers_.erase(it);
  }
  run.server->Stop();
  if (run.thread.joinable()) run.thread.join();
  return absl::OkStatus();
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunClient(const v1::ProbeSpec& spec,
                                                       const v1::Endpoint& server) {
  auto params = Validate(spec);
  if (!params.ok()) return params.status();
  auto address = ParseHostPort(server.address(), "server.address");
  if (!address.ok()) return address.status();
  if (auto s = Acquire(absl::StrCat("client to ", server.address())); !s.ok()) return s;
  probes::ProbeRun run = probes::RunProbeClient(*params, {address->host, address->port},
                                                context_.limits, /*end_session=*/true);
  Release();
  return probes::ToResult(run, *params);
}

absl::StatusOr<v1::ProbeResult> ProbeRunner::RunLocal(const v1::ProbeSpec& spec,
                                                      const std::string& run_id, uint32_t rank,
                                                      const std::vector<v1::Endpoint>& ranks) {
  // The listener StartServer opened holds the node's slot; whatever happens below, this run
  // ends here and frees both.
  probes::Listener listener;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rings_.find(run_id);
    if (it == rings_.end()) {
      return absl::FailedPreconditionError(absl::StrCat("no ring listener for run ", run_id));
    }
    listener = std::move(it->second);
    rings_.erase(it);
  }
  struct ReleaseAtEnd {
    ProbeRunner* runner;
    ~ReleaseAtEnd() { runner->Release(); }
  } release{this};
  if (spec.kind() != v1::ALLREDUCE) {
    return absl::InvalidArgumentError("spec.kind: only ALLREDUCE runs as a local probe");
  }
  auto params = Validate(spec);
  if (!params.ok()) return params.status();
  if (ranks.size() < 2 || ranks.size() > 4096 || rank >= ranks.size()) {
    return absl::InvalidArgumentError("ranks: 2 to 4096 endpoints, and rank below their count");
  }
  std::vector<probes::RankAddress> addresses;
  for (const auto& e : ranks) {
    auto a = ParseHostPort(e.address(), "ranks.address");
    if (!a.ok()) return a.status();
    addresses.push_back({a->host, a->port});
  }
  probes::ProbeRun run = probes::RunRingAllreduce(*params, rank, addresses, listener);
  return probes::ToResult(run, *params);
}

}  // namespace fabricctl::agent
