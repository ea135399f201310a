#include "controller/sweep/fake_agent.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "probes/catalogue.h"
#include "probes/common/params.h"
#include "probes/common/result.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {
namespace {

std::pair<std::string, std::string> Sorted(const std::string& a, const std::string& b) {
  return {std::min(a, b), std::max(a, b)};
}

std::string NameOf(const std::string& address) { return address.substr(0, address.rfind(':')); }

}  // namespace

void FakeAgents::AddNic(const std::string& name, const std::string& netdev, double gbps) {
  MutexLock lock(&mu_);
  agents_[name].nics[netdev] = gbps;
}

int FakeAgents::PeakRunning() const {
  MutexLock lock(&mu_);
  return peak_running_;
}

void FakeAgents::Add(const std::string& name, double speed_gbps) {
  MutexLock lock(&mu_);
  agents_[name].speed_gbps = speed_gbps;
}

void FakeAgents::FlapLink(const std::string& a, const std::string& b, double factor) {
  MutexLock lock(&mu_);
  flaps_[Sorted(a, b)] = Flap{factor, 0};
}

void FakeAgents::LoseOnLink(const std::string& a, const std::string& b, double rate,
                            int measurements) {
  MutexLock lock(&mu_);
  losses_[Sorted(a, b)] = Loss{rate, measurements};
}

void FakeAgents::SetLink(const std::string& a, const std::string& b, double factor,
                         const std::string& netdev) {
  MutexLock lock(&mu_);
  if (netdev.empty()) {
    links_[Sorted(a, b)] = factor;
  } else {
    rail_links_[{netdev, Sorted(a, b)}] = factor;
  }
}

void FakeAgents::Kill(const std::string& name) {
  MutexLock lock(&mu_);
  agents_[name].dead = true;
}

void FakeAgents::FailNext(const std::string& client, const std::string& server, absl::Status status,
                          int times) {
  MutexLock lock(&mu_);
  for (int i = 0; i < times; ++i) failures_[{client, server}].push_back(status);
}

void FakeAgents::KillAfter(const std::string& name, int client_calls) {
  MutexLock lock(&mu_);
  kill_after_[name] = client_calls;
}

void FakeAgents::SetEgress(const std::string& name, double gbps) {
  MutexLock lock(&mu_);
  agents_[name].egress_gbps = gbps;
}

void FakeAgents::SlowFirst(const std::string& name, double gbps, int calls) {
  MutexLock lock(&mu_);
  agents_[name].slow_gbps = gbps;
  agents_[name].slow_calls = calls;
}

void FakeAgents::DropLink(const std::string& a, const std::string& b) {
  MutexLock lock(&mu_);
  dropped_[Sorted(a, b)] = true;
}

void FakeAgents::Busy(const std::string& name, int times) {
  MutexLock lock(&mu_);
  agents_[name].busy = times;
}

void FakeAgents::SetDelay(const std::string& name, absl::Duration delay) {
  MutexLock lock(&mu_);
  agents_[name].delay = delay;
}

int FakeAgents::CallsToDead() const {
  MutexLock lock(&mu_);
  return calls_to_dead_;
}

int FakeAgents::Running() const {
  MutexLock lock(&mu_);
  return running_;
}

void FakeAgents::CancelAll() {
  MutexLock lock(&mu_);
  cancelled_ = true;
}

void FakeAgents::Resume() {
  MutexLock lock(&mu_);
  cancelled_ = false;
}

int FakeAgents::Measurements(const std::string& a, const std::string& b) const {
  MutexLock lock(&mu_);
  auto it = measured_.find(Sorted(a, b));
  return it == measured_.end() ? 0 : it->second;
}

int FakeAgents::OpenServers() const {
  MutexLock lock(&mu_);
  return static_cast<int>(servers_.size());
}

absl::StatusOr<std::string> FakeAgents::Alive(const std::string& address) const {
  if (cancelled_) return absl::CancelledError("the sweep was cancelled");
  const std::string name = NameOf(address);
  auto it = agents_.find(name);
  if (it == agents_.end() || it->second.dead) {
    ++calls_to_dead_;
    return absl::UnavailableError(absl::StrCat("failed to connect to ", address));
  }
  return name;
}

absl::StatusOr<v1::NodeInventory> FakeAgents::GetInventory(const std::string& address,
                                                           absl::Duration) {
  MutexLock lock(&mu_);
  auto name = Alive(address);
  if (!name.ok()) return name.status();
  v1::NodeInventory inventory;
  inventory.set_node_name(*name);
  inventory.set_agent_address(address);
  if (!agents_[*name].no_rdma) inventory.add_rdma_devices()->set_name("mlx5_0");
  int i = 0;
  for (const auto& [netdev, gbps] : agents_[*name].nics) {
    v1::NetInterface* itf = inventory.add_interfaces();
    itf->set_name(netdev);
    itf->set_up(true);
    itf->add_addresses(absl::StrCat("10.0.", i++, ".1"));
    itf->set_mtu(1500);
  }
  return inventory;
}

void FakeAgents::FlapWatch(const std::string& name, const std::string& netdev) {
  MutexLock lock(&mu_);
  agents_[name].watch_flapping = netdev;
}

int FakeAgents::WatchAsked() const {
  MutexLock lock(&mu_);
  return watch_asked_;
}

absl::StatusOr<v1::RunAuditsResponse> FakeAgents::RunAudits(const std::string& address,
                                                            const v1::RunAuditsRequest& request,
                                                            absl::Duration) {
  MutexLock lock(&mu_);
  auto name = Alive(address);
  if (!name.ok()) return name.status();
  v1::RunAuditsResponse response;
  if (request.audits_size() == 1 && request.audits(0) == "link_watch") {
    ++watch_asked_;
    v1::AuditResult* watch = response.add_audits();
    watch->set_audit("link_watch");
    watch->set_outcome(v1::AUDIT_RAN);
    if (const std::string& netdev = agents_[*name].watch_flapping; !netdev.empty()) {
      v1::Finding f = report::Make(report::kind::kLinkFlapping, *name,
                                   absl::StrCat(*name, ": ", netdev, " went down 2 times"));
      f.set_device(netdev);
      *watch->add_findings() = std::move(f);
    }
    return response;
  }
  if (request.audits_size() > 0) return response;  // other named ones: none here
  v1::AuditResult* audit = response.add_audits();
  audit->set_audit("memlock");
  audit->set_outcome(v1::AUDIT_RAN);
  return response;
}

absl::StatusOr<v1::StartProbeServerResponse> FakeAgents::StartProbeServer(
    const std::string& address, const v1::StartProbeServerRequest& request, absl::Duration) {
  MutexLock lock(&mu_);
  auto name = Alive(address);
  if (!name.ok()) return name.status();
  RETURN_IF_ERROR(probes::ValidateRunId(request.run_id()));  // the real agent's rule
  if (agents_[*name].busy > 0) {
    --agents_[*name].busy;
    return absl::ResourceExhaustedError("a probe is already running on this node");
  }
  servers_[request.run_id()] = *name;
  v1::StartProbeServerResponse response;
  const std::string& lie = agents_[*name].server_address;
  response.mutable_endpoint()->set_address(lie.empty() ? address : lie);
  return response;
}

void FakeAgents::Hold() {
  MutexLock lock(&mu_);
  held_ = true;
}

void FakeAgents::Release() {
  MutexLock lock(&mu_);
  held_ = false;
}

void FakeAgents::AnswerServerAs(const std::string& name, const std::string& address) {
  MutexLock lock(&mu_);
  agents_[name].server_address = address;
}

void FakeAgents::SetGpus(const std::string& name, int count) {
  MutexLock lock(&mu_);
  agents_[name].gpus = count;
}

void FakeAgents::RemoveRdma(const std::string& name) {
  MutexLock lock(&mu_);
  agents_[name].no_rdma = true;
}

void FakeAgents::BreakGpudirect(const std::string& name) {
  MutexLock lock(&mu_);
  agents_[name].gpudirect_broken = true;
}

absl::StatusOr<v1::RunProbeClientResponse> FakeAgents::RunProbeClient(
    const std::string& address, const v1::RunProbeClientRequest& request, absl::Duration) {
  MutexLock lock(&mu_);
  auto name = Alive(address);
  if (!name.ok()) return name.status();
  if (agents_[*name].delay > absl::ZeroDuration()) {
    peak_running_ = std::max(peak_running_, ++running_);
    mu_.AwaitWithTimeout(&cancelled_, agents_[*name].delay);
    --running_;
    if (cancelled_) return absl::CancelledError("the sweep was cancelled");
  }
  while (held_ && !cancelled_) {
    mu_.AwaitWithTimeout(
        +[](FakeAgents* f) ABSL_NO_THREAD_SAFETY_ANALYSIS { return !f->held_ || f->cancelled_; },
        this, absl::Milliseconds(100));
  }
  if (cancelled_) return absl::CancelledError("the sweep was cancelled");
  ++client_calls_;
  for (const auto& [who, after] : kill_after_) {
    if (after > 0 && client_calls_ >= after) agents_[who].dead = true;
  }
  auto server = servers_.find(request.run_id());
  if (server == servers_.end() || agents_[server->second].dead) {
    return absl::DeadlineExceededError("Deadline Exceeded");
  }
  auto& failures = failures_[{*name, server->second}];
  if (!failures.empty()) {
    absl::Status s = failures.front();
    failures.erase(failures.begin());
    return s;
  }
  ++measured_[Sorted(*name, server->second)];
  v1::RunProbeClientResponse response;
  v1::ProbeResult* r = response.mutable_result();
  r->set_kind(request.spec().kind());
  if (probes::IsRdmaProbe(request.spec().kind()) &&
      (agents_[*name].no_rdma || agents_[server->second].no_rdma)) {
    r->set_outcome(v1::PROBE_SKIPPED);
    r->set_reason(
        absl::StrCat("no RDMA device on ", agents_[*name].no_rdma ? *name : server->second));
    return response;
  }
  const auto& rdma = request.spec().rdma();
  const bool client_gpu = rdma.memory() == v1::MEMORY_GPU;
  const bool server_gpu = rdma.server_memory() == v1::MEMORY_GPU ||
                          (rdma.server_memory() == v1::MEMORY_BACKEND_UNSPECIFIED && client_gpu);
  if ((server_gpu && agents_[server->second].gpudirect_broken) ||
      (client_gpu && agents_[*name].gpudirect_broken)) {
    r->set_outcome(v1::PROBE_FAILED);
    // The server refuses in its handshake, before the client registers anything; its own
    // half's failure is what StopProbeServer says of the run.
    const bool server_side = server_gpu && agents_[server->second].gpudirect_broken;
    r->set_reason(absl::StrCat(server_side ? "server: " : "",
                               "GPUDirect RDMA unavailable on GPU 0: dma-buf: not supported; "
                               "peer memory: ibv_reg_mr: Bad address (is nvidia-peermem loaded?)"));
    r->set_cause(v1::CAUSE_GPUDIRECT_UNAVAILABLE);
    r->set_failed_side(server_side ? v1::SIDE_SERVER : v1::SIDE_CLIENT);
    if (server_side) server_failures_[request.run_id()] = v1::CAUSE_GPUDIRECT_UNAVAILABLE;
    return response;
  }
  if (dropped_.count(Sorted(*name, server->second))) {
    r->set_outcome(v1::PROBE_TIMEOUT);
    r->set_reason("connect to the server half: timed out");
    r->set_cause(v1::CAUSE_TIMEOUT);
    r->set_failed_side(v1::SIDE_CLIENT);
    return response;
  }
  const std::string& netdev =
      request.spec().has_tcp() ? request.spec().tcp().netdev() : request.spec().rdma().netdev();
  for (const std::string* end : {&*name, &server->second}) {
    if (!netdev.empty() && agents_[*end].nics.count(netdev) == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("rail interface ", netdev, ": no such interface on this node"));
    }
  }
  auto speed = [&](const std::string& end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return netdev.empty() ? agents_[end].speed_gbps : agents_[end].nics[netdev];
  };
  auto link = links_.find(Sorted(*name, server->second));
  double factor = link == links_.end() ? 1.0 : link->second;
  if (auto on_rail = rail_links_.find({netdev, Sorted(*name, server->second)});
      on_rail != rail_links_.end()) {
    factor *= on_rail->second;
  }
  const bool bandwidth =
      request.spec().kind() == v1::TCP_BW || request.spec().kind() == v1::RDMA_WRITE_BW ||
      request.spec().kind() == v1::RDMA_READ_BW || request.spec().kind() == v1::RDMA_SEND_BW;
  if (auto flap = flaps_.find(Sorted(*name, server->second)); flap != flaps_.end() && bandwidth) {
    if ((flap->second.calls++ / 2) % 2 == 0)
      factor *= flap->second.factor;  // both directions alike
  }
  double gbps = std::min(speed(*name), speed(server->second)) * factor;
  if (agents_[*name].egress_gbps > 0) gbps = std::min(gbps, agents_[*name].egress_gbps);
  for (const std::string* end : {&*name, &server->second}) {
    Agent& agent = agents_[*end];
    if (agent.slow_calls > 0) {
      --agent.slow_calls;
      gbps = std::min(gbps, agent.slow_gbps);
    }
  }
  r->set_outcome(v1::PROBE_OK);
  const auto& sizes = request.spec().measurement().sizes_bytes();  // a point at a size asked for
  if (request.spec().kind() == v1::TCP_LAT || request.spec().kind() == v1::RDMA_WRITE_LAT ||
      request.spec().kind() == v1::RDMA_SEND_LAT) {
    v1::LatPoint* p = r->add_lat();
    p->set_size_bytes(sizes.empty() ? 0 : sizes.Get(0));
    p->set_t_typical_us(10.0 * 10.0 / gbps);
  } else {
    v1::BwPoint* p = r->add_bw();
    p->set_size_bytes(sizes.empty() ? 0 : sizes.Get(sizes.size() - 1));
    p->set_bw_avg_gbps(gbps);
    p->set_bw_peak_gbps(gbps);
    constexpr uint64_t kSegments = 100000;
    double rate = 0;
    if (auto loss = losses_.find(Sorted(*name, server->second));
        loss != losses_.end() && loss->second.measurements != 0) {
      rate = loss->second.rate;
      if (loss->second.measurements > 0) --loss->second.measurements;
    }
    p->set_segments(kSegments);
    p->set_retransmits(static_cast<uint64_t>(rate * kSegments));
  }
  return response;
}

absl::StatusOr<v1::StopProbeServerResponse> FakeAgents::StopProbeServer(
    const std::string& address, const v1::StopProbeServerRequest& request, absl::Duration) {
  MutexLock lock(&mu_);
  const bool cancelled = cancelled_;
  cancelled_ = false;  // stops go through a cancelled sweep, as the real client's do
  auto name = Alive(address);
  cancelled_ = cancelled;
  if (!name.ok()) return name.status();
  if (servers_.erase(request.run_id()) == 0) return absl::NotFoundError("no such run");
  v1::StopProbeServerResponse response;
  if (auto f = server_failures_.find(request.run_id()); f != server_failures_.end()) {
    response.mutable_result()->set_outcome(v1::PROBE_FAILED);
    response.mutable_result()->set_cause(f->second);
    response.mutable_result()->set_failed_side(v1::SIDE_SERVER);
    server_failures_.erase(f);
  }
  return response;
}

absl::StatusOr<v1::RunLocalProbeResponse> FakeAgents::RunLocalProbe(
    const std::string& address, const v1::RunLocalProbeRequest& request, absl::Duration) {
  MutexLock lock(&mu_);
  auto name = Alive(address);
  if (!name.ok()) return name.status();
  if (request.spec().kind() == v1::GPU_COPY) {
    v1::RunLocalProbeResponse response;
    v1::ProbeResult* r = response.mutable_result();
    r->set_kind(v1::GPU_COPY);
    r->set_outcome(agents_[*name].gpus > 0 ? v1::PROBE_OK : v1::PROBE_SKIPPED);
    if (agents_[*name].gpus == 0) r->set_reason("the GPU driver sees no GPU");
    for (int g = 0; g < agents_[*name].gpus; ++g) {
      v1::CopyPoint* p = r->add_copy();
      p->set_gpu_index(static_cast<uint32_t>(g));
      p->set_size_bytes(request.spec().measurement().sizes_bytes(0));
      p->set_h2d_gbytes(25);
      p->set_d2h_gbytes(25);
    }
    return response;
  }
  servers_.erase(request.run_id());
  if (request.spec().kind() != v1::ALLREDUCE || request.world_size() > 0) {
    return absl::UnimplementedError("the fake agents run the host ring's all-reduce only");
  }
  v1::RunLocalProbeResponse response;
  *response.mutable_result() = RingRank(*name, request);
  return response;
}

void FakeAgents::LieAboutRingLink(const std::string& name, double send_time_us) {
  MutexLock lock(&mu_);
  agents_[name].ring_link_us = send_time_us;
}

v1::ProbeResult FakeAgents::RingRank(const std::string& name,
                                     const v1::RunLocalProbeRequest& request) {
  const Agent& agent = agents_[name];
  const double gbps =
      agent.egress_gbps > 0 ? std::min(agent.speed_gbps, agent.egress_gbps) : agent.speed_gbps;
  const double n = std::max(2, request.ranks_size());
  const double us_per_byte = 8 / (gbps * 1e3);
  v1::ProbeResult r;
  r.set_kind(v1::ALLREDUCE);
  r.set_node(name);
  r.set_outcome(v1::PROBE_OK);
  for (uint64_t size : request.spec().measurement().sizes_bytes()) {
    v1::CollectivePoint* p = r.add_collective();
    p->set_size_bytes(size);
    p->set_time_us(size * 2 * (n - 1) / n * us_per_byte);
    p->set_algbw_gbytes(size / p->time_us() / 1e3);
    p->set_busbw_gbytes(p->algbw_gbytes() * 2 * (n - 1) / n);
    p->set_send_time_us(agent.ring_link_us >= 0
                            ? agent.ring_link_us
                            : std::min(size, probes::kLinkTimedBytes) * us_per_byte);
  }
  return r;
}

}  // namespace fabricctl::controller::sweep
