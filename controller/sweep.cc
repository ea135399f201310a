#include "controller/sweep.h"

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "base/version.h"
#include "controller/pairing.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/create_channel.h"
#include "probes/collective/ring.h"
#include "probes/common/params.h"
#include "probes/common/sizes.h"
#include "probes/table.h"

namespace fabricctl::controller {
namespace {

using google::protobuf::util::TimeUtil;

constexpr absl::Duration kStartTimeout = absl::Seconds(10);
// Memlock an agent needs for the all-reduce ring over RDMA ("auto" picks TCP below it).
constexpr uint64_t kRingMemlockBytes = 64ull << 20;
constexpr absl::Duration kStopTimeout = absl::Seconds(5);
// The client half's RPC deadline is the pair's timeout plus this, so that the agent's own
// bound (the spec's timeout) fires first and reports what it saw.
constexpr absl::Duration kRpcSlack = absl::Seconds(5);

std::chrono::system_clock::time_point Deadline(absl::Duration d) {
  return std::chrono::system_clock::now() + absl::ToChronoMicroseconds(d);
}

google::protobuf::Timestamp ToProto(absl::Time t) {
  return TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(t));
}

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Microseconds(TimeUtil::DurationToMicroseconds(d));
}

bool IsTransportFailure(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

v1::HealthStatus ToHealth(Verdict v) {
  switch (v) {
    case Verdict::kOk: return v1::HEALTH_OK;
    case Verdict::kWarning: return v1::HEALTH_WARNING;
    case Verdict::kCritical: return v1::HEALTH_CRITICAL;
    case Verdict::kUnknown: return v1::HEALTH_UNKNOWN;
  }
  return v1::HEALTH_UNKNOWN;
}

bool HasActiveRdmaPort(const v1::NodeInventory& inventory) {
  for (const auto& device : inventory.rdma_devices()) {
    for (const auto& port : device.ports()) {
      if (port.state() == "ACTIVE") return true;
    }
  }
  return false;
}

bool IsRdma(v1::ProbeKind kind) {
  return kind == v1::RDMA_WRITE_BW || kind == v1::RDMA_SEND_BW || kind == v1::RDMA_READ_BW ||
         kind == v1::RDMA_WRITE_LAT || kind == v1::RDMA_SEND_LAT;
}

// Headline figures of a result: average bandwidth at the largest size, typical latency at the
// smallest; NaN when not measured.
float HeadlineBw(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || r.bw_size() == 0) return std::nanf("");
  return static_cast<float>(r.bw(r.bw_size() - 1).bw_avg_gbps());
}
float HeadlineLat(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || r.lat_size() == 0) return std::nanf("");
  return static_cast<float>(r.lat(0).t_typical_us());
}

// Which of two results of the same probe on the same pair to keep: a measurement beats a
// failure; the better measurement beats the worse (a re-test that recovers was a transient).
bool Better(const v1::ProbeResult& candidate, const v1::ProbeResult& kept) {
  if (kept.outcome() != v1::PROBE_OK) return candidate.outcome() == v1::PROBE_OK;
  if (candidate.outcome() != v1::PROBE_OK) return false;
  if (!std::isnan(HeadlineBw(kept))) return HeadlineBw(candidate) > HeadlineBw(kept);
  if (!std::isnan(HeadlineLat(kept))) return HeadlineLat(candidate) < HeadlineLat(kept);
  return false;
}

}  // namespace

struct SweepRunner::Node {
  std::string name;
  std::string address;
  v1::NodeInventory inventory;
  bool reachable = true;
  std::string reason;
  std::atomic<bool> transport_failures{false};
};

// Everything measured on one pair: the kept result per probe, and how often it was measured.
struct SweepRunner::PairRun {
  uint32_t client = 0, server = 0;
  std::vector<v1::ProbeResult> results;  // one per probe, in the sweep's probe order
  uint32_t attempts = 0;
};

uint32_t AgentInterfaceMtu(const v1::NodeInventory& inventory, std::string* interface_name) {
  auto address = ParseHostPort(inventory.agent_address(), "agent_address");
  if (!address.ok()) return 0;
  for (const auto& itf : inventory.interfaces()) {
    for (const auto& a : itf.addresses()) {
      if (a == address->host) {
        if (interface_name) *interface_name = itf.name();
        return itf.mtu();
      }
    }
  }
  return 0;
}

SweepRunner::SweepRunner(Store* store, std::shared_ptr<grpc::ChannelCredentials> credentials,
                         SweepOptions options)
    : store_(store), credentials_(std::move(credentials)), options_(std::move(options)) {}

v1::AgentService::Stub* SweepRunner::StubFor(const std::string& address) {
  std::lock_guard<std::mutex> lock(stubs_mu_);
  auto& stub = stubs_[address];
  if (!stub) stub = v1::AgentService::NewStub(grpc::CreateChannel(address, credentials_));
  return stub.get();
}

v1::ProbeResult SweepRunner::MeasurePair(const Node& client, const Node& server,
                                         const v1::ProbeSpec& spec, const std::string& run_id) {
  v1::ProbeResult result;
  result.set_kind(spec.kind());
  result.set_node(client.name);
  result.set_peer(server.name);
  *result.mutable_started() = ToProto(absl::Now());
  const absl::Duration timeout = FromProto(spec.timeout());
  auto fail = [&](const Node& who, const char* half, const grpc::Status& s) {
    if (IsTransportFailure(s)) const_cast<Node&>(who).transport_failures = true;
    result.set_outcome(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? v1::PROBE_TIMEOUT
                                                                              : v1::PROBE_FAILED);
    result.set_reason(absl::StrCat(half, " on ", who.name, ": ", s.error_message()));
    return result;
  };

  v1::StartProbeServerRequest start;
  *start.mutable_spec() = spec;
  start.set_run_id(run_id);
  start.set_peer(client.name);
  v1::StartProbeServerResponse started;
  grpc::ClientContext start_context;
  start_context.set_deadline(Deadline(kStartTimeout));
  grpc::Status s = StubFor(server.address)->StartProbeServer(&start_context, start, &started);
  if (!s.ok()) return fail(server, "server half", s);

  v1::RunProbeClientRequest run;
  *run.mutable_spec() = spec;
  run.set_run_id(run_id);
  run.set_peer(server.name);
  *run.mutable_server() = started.endpoint();
  v1::RunProbeClientResponse ran;
  grpc::ClientContext run_context;
  run_context.set_deadline(Deadline(timeout + kRpcSlack));
  s = StubFor(client.address)->RunProbeClient(&run_context, run, &ran);

  v1::StopProbeServerRequest stop;
  stop.set_run_id(run_id);
  v1::StopProbeServerResponse stopped;
  grpc::ClientContext stop_context;
  stop_context.set_deadline(Deadline(kStopTimeout));
  grpc::Status stop_status = StubFor(server.address)->StopProbeServer(&stop_context, stop, &stopped);
  if (IsTransportFailure(stop_status)) const_cast<Node&>(server).transport_failures = true;

  if (!s.ok()) return fail(client, "client half", s);
  v1::ProbeResult measured = ran.result();
  measured.set_node(client.name);
  measured.set_peer(server.name);
  *measured.mutable_started() = result.started();
  return measured;
}

absl::StatusOr<v1::Report> SweepRunner::Run(
    const v1::SweepRequest& request, const std::vector<StoredNode>& registry,
    const std::function<void(const v1::SweepEvent&)>& progress) {
  std::unique_lock<std::mutex> one_at_a_time(running_, std::try_to_lock);
  if (!one_at_a_time.owns_lock()) {
    return absl::FailedPreconditionError("a sweep is already running on this controller");
  }
  auto log = Logger("sweep");
  const v1::Config& config = options_.config;
  const absl::Time started = options_.now();

  // What to measure.
  std::vector<v1::ProbeKind> kinds;
  for (int kind : request.probes()) kinds.push_back(static_cast<v1::ProbeKind>(kind));
  if (kinds.empty()) {
    for (const auto& name : config.sweep().probes()) {
      const probes::Probe* probe = probes::FindProbe(name);
      if (name == "allreduce") {
        kinds.push_back(v1::ALLREDUCE);
        continue;
      }
      if (probe == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sweep.probes: '", name, "' is not a probe of sweeps (", probes::ProbeNames(), ", allreduce)"));
      }
      kinds.push_back(probe->kind());
    }
  }
  if (kinds.empty()) kinds = {v1::TCP_BW, v1::TCP_LAT};
  // The group collective runs after the pairs; the rest are pair probes.
  const bool allreduce = std::count(kinds.begin(), kinds.end(), v1::ALLREDUCE) > 0;
  kinds.erase(std::remove(kinds.begin(), kinds.end(), v1::ALLREDUCE), kinds.end());
  for (v1::ProbeKind kind : kinds) {
    if (probes::FindProbe(kind) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "probes: ", v1::ProbeKind_Name(kind), " is not a probe of sweeps (", probes::ProbeNames(), ", allreduce)"));
    }
  }
  const absl::Duration pair_timeout = FromProto(config.sweep().pair_timeout());
  std::vector<v1::ProbeSpec> specs;
  for (v1::ProbeKind kind : kinds) {
    const probes::Probe* probe = probes::FindProbe(kind);
    probes::ProbeParams p;
    p.kind = kind;
    const v1::Measurement& m = request.measurement();
    if (m.sizes_bytes_size() > 0) {
      p.sizes_bytes.assign(m.sizes_bytes().begin(), m.sizes_bytes().end());
    } else if (probe->measures_bandwidth()) {
      auto sizes = probes::ParseSizeSweep(config.probes().sizes(), probes::ProbeLimits().max_message_bytes);
      if (!sizes.ok()) return absl::InvalidArgumentError(absl::StrCat("probes.sizes: ", sizes.status().message()));
      p.sizes_bytes = *sizes;
    } else {
      p.sizes_bytes = {2};  // perftest's latency default
    }
    const bool by_time = m.has_duration() || (m.iterations() == 0 && config.probes().has_duration());
    if (m.iterations() > 0) {
      p.iterations = m.iterations();
    } else if (by_time && !IsRdma(kind)) {
      p.duration = FromProto(m.has_duration() ? m.duration() : config.probes().duration());
    } else {
      p.iterations = config.probes().iterations() > 0 ? config.probes().iterations() : 1000;
    }
    p.warmup_iterations = m.warmup_iterations() ? m.warmup_iterations()
                                                : config.probes().warmup_iterations();
    p.tcp_streams = std::max<uint32_t>(1, config.probes().tcp_streams());
    p.rdma.device = config.probes().rdma_device();
    p.rdma.port = config.probes().rdma_port();
    p.rdma.gid_index = config.probes().gid_index();
    p.timeout = pair_timeout;
    if (auto s = probes::ValidateParams(p, probes::LimitsFromConfig(config.probes().limits()));
        !s.ok()) {
      return s;
    }
    specs.push_back(probes::ToSpec(p));
  }

  // Which nodes.
  std::vector<std::unique_ptr<Node>> nodes;
  for (const auto& stored : registry) {
    if (!request.nodes().empty() &&
        std::find(request.nodes().begin(), request.nodes().end(),
                  stored.inventory.node_name()) == request.nodes().end()) {
      continue;
    }
    auto node = std::make_unique<Node>();
    node->name = stored.inventory.node_name();
    node->address = stored.inventory.agent_address();
    node->inventory = stored.inventory;
    nodes.push_back(std::move(node));
  }
  for (const auto& name : request.nodes()) {
    if (std::none_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n->name == name; })) {
      return absl::InvalidArgumentError(absl::StrCat("nodes: '", name, "' is not registered"));
    }
  }
  if (nodes.size() < 2) {
    return absl::FailedPreconditionError(
        absl::StrCat("a sweep needs at least 2 nodes; ", nodes.size(), " registered"));
  }
  v1::Report baseline;
  if (request.baseline_sweep_id() != 0) {
    auto found = store_->GetReport(request.baseline_sweep_id());
    if (!found.ok()) return absl::InvalidArgumentError(absl::StrCat("--baseline: ", found.status().message()));
    baseline = *std::move(found);
  }

  // Who answers: a node that does not costs one deadline here and is left out of the plan.
  auto check_reachable = [&](Node& node) {
    v1::NodeInventory inventory;
    grpc::ClientContext context;
    context.set_deadline(Deadline(options_.inventory_timeout));
    grpc::Status s = StubFor(node.address)->GetInventory(&context, v1::GetInventoryRequest(), &inventory);
    if (s.ok()) {
      node.inventory = inventory;
      node.reachable = true;
    } else {
      node.reachable = false;
      node.reason = absl::StrCat(node.address, ": ", s.error_message());
    }
  };
  {
    std::vector<std::thread> threads;
    for (auto& node : nodes) threads.emplace_back([&, n = node.get()] { check_reachable(*n); });
    for (auto& t : threads) t.join();
  }
  // Node audits on every reachable node, at once, when asked for.
  std::map<uint32_t, std::vector<v1::AuditResult>> audits;
  if (request.audits()) {
    std::mutex audits_mu;
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i]->reachable) continue;
      threads.emplace_back([&, i] {
        v1::RunAuditsResponse response;
        grpc::ClientContext context;
        context.set_deadline(Deadline(options_.inventory_timeout * 2));
        grpc::Status s = StubFor(nodes[i]->address)->RunAudits(&context, v1::RunAuditsRequest(), &response);
        std::vector<v1::AuditResult> results(response.audits().begin(), response.audits().end());
        if (!s.ok()) {
          v1::AuditResult failed;
          failed.set_audit("all");
          failed.set_outcome(v1::AUDIT_FAILED);
          failed.set_reason(s.error_message());
          results = {failed};
        }
        std::lock_guard<std::mutex> lock(audits_mu);
        audits[i] = std::move(results);
      });
    }
    for (auto& t : threads) t.join();
  }
  std::vector<uint32_t> live;  // indices of reachable nodes
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->reachable) live.push_back(i);
  }

  // The plan, over the reachable nodes.
  v1::Pairing pairing =
      request.pairing() != v1::PAIRING_UNSPECIFIED ? request.pairing() : config.sweep().pairing();
  std::vector<Round> plan;
  const uint32_t n_live = static_cast<uint32_t>(live.size());
  if (pairing == v1::PAIRING_FILE) {
    std::vector<std::string> names;
    for (uint32_t i : live) names.push_back(nodes[i]->name);
    auto rounds = FileRounds(request.pairing_file(), names);
    if (!rounds.ok()) return rounds.status();
    plan = *std::move(rounds);
  } else if (pairing == v1::PAIRING_QUICK) {
    std::vector<uint32_t> groups;
    if (!config.sweep().group_by_label().empty()) {
      std::map<std::string, uint32_t> ids;
      for (uint32_t i : live) {
        const auto& labels = nodes[i]->inventory.labels();
        auto it = labels.find(config.sweep().group_by_label());
        std::string group = it == labels.end() ? "" : it->second;
        groups.push_back(ids.emplace(group, ids.size()).first->second);
      }
    }
    plan = QuickRounds(n_live, groups);
  } else if (pairing == v1::PAIRING_SAMPLE) {
    uint32_t k = request.sample_rounds() ? request.sample_rounds() : config.sweep().sample_rounds();
    plan = SampleRounds(n_live, k, static_cast<uint64_t>(absl::ToUnixNanos(started)));
  } else {
    pairing = v1::PAIRING_FULL;
    plan = FullRounds(n_live);
  }
  if (kinds.empty()) plan.clear();  // a collective-only sweep measures no pairs
  for (Round& round : plan) {
    for (Pair& p : round) p = {live[p.first], live[p.second]};
  }

  auto sweep_id = store_->CreateSweep(request, started);
  if (!sweep_id.ok()) return sweep_id.status();
  v1::SweepInfo info;
  info.set_sweep_id(*sweep_id);
  info.set_state(v1::SWEEP_RUNNING);
  *info.mutable_started() = ToProto(started);
  info.set_pairing(pairing);
  for (v1::ProbeKind kind : kinds) info.add_probes(kind);
  if (allreduce) info.add_probes(v1::ALLREDUCE);
  for (const auto& node : nodes) info.add_nodes(node->name);
  info.set_rounds(static_cast<uint32_t>(plan.size()));
  info.set_baseline_sweep_id(request.baseline_sweep_id());
  if (progress) {
    v1::SweepEvent event;
    *event.mutable_started() = info;
    progress(event);
  }
  log->info("sweep {}: {} nodes ({} reachable), {} rounds, probes {}", *sweep_id, nodes.size(),
            live.size(), plan.size(), specs.size());

  // Measure, round by round; every pair of a round at once.
  std::map<std::pair<uint32_t, uint32_t>, PairRun> pairs;
  auto key = [](uint32_t a, uint32_t b) { return std::make_pair(std::min(a, b), std::max(a, b)); };
  std::mutex pairs_mu;
  // Rounds are numbered in the order they run: the plan's, then re-tests, then localisation.
  uint32_t next_round = 0;
  auto measure_round = [&](const Round& round, uint32_t attempt) {
    const uint32_t round_index = next_round++;
    std::atomic<uint32_t> failed{0};
    for (size_t begin = 0; begin < round.size(); begin += options_.max_parallel_pairs) {
      const size_t end = std::min(round.size(), begin + options_.max_parallel_pairs);
      std::vector<std::thread> threads;
      for (size_t i = begin; i < end; ++i) {
        threads.emplace_back([&, pair = round[i]] {
          Node& client = *nodes[pair.first];
          Node& server = *nodes[pair.second];
          std::vector<v1::ProbeResult> results;
          for (const v1::ProbeSpec& spec : specs) {
            std::string run_id = absl::StrCat("s", *sweep_id, "-r", round_index, "-a", attempt,
                                              "-", client.name, "-", server.name, "-",
                                              probes::FindProbe(spec.kind())->name());
            v1::ProbeResult result = MeasurePair(client, server, spec, run_id);
            result.set_round(round_index);
            result.set_attempt(attempt);
            if (auto s = store_->InsertResult(*sweep_id, round_index, attempt, result); !s.ok()) {
              log->error("sweep {}: cannot store a result: {}", *sweep_id, std::string(s.message()));
            }
            if (result.outcome() == v1::PROBE_FAILED || result.outcome() == v1::PROBE_TIMEOUT) ++failed;
            results.push_back(std::move(result));
          }
          std::lock_guard<std::mutex> lock(pairs_mu);
          PairRun& run = pairs[key(pair.first, pair.second)];
          run.client = pair.first;
          run.server = pair.second;
          ++run.attempts;
          if (run.results.empty()) {
            run.results = std::move(results);
          } else {
            for (size_t k = 0; k < results.size(); ++k) {
              if (Better(results[k], run.results[k])) run.results[k] = std::move(results[k]);
            }
          }
        });
      }
      for (auto& t : threads) t.join();
    }
    return failed.load();
  };
  auto emit_round = [&](uint32_t index, uint32_t total, uint32_t size, uint32_t failed,
                        const char* phase) {
    if (!progress) return;
    v1::SweepEvent event;
    auto* r = event.mutable_round();
    r->set_round(index + 1);
    r->set_rounds(total);
    r->set_pairs(size);
    r->set_pairs_failed(failed);
    r->set_phase(phase);
    progress(event);
  };
  for (uint32_t r = 0; r < plan.size(); ++r) {
    uint32_t failed = measure_round(plan[r], 1);
    emit_round(r, static_cast<uint32_t>(plan.size()), static_cast<uint32_t>(plan[r].size()), failed,
               "measure");
  }

  // Nodes whose RPCs failed in transport: still there?
  auto recheck = [&] {
    std::vector<std::thread> threads;
    for (auto& node : nodes) {
      if (node->reachable && node->transport_failures) {
        threads.emplace_back([&, n = node.get()] {
          check_reachable(*n);
          n->transport_failures = false;
        });
      }
    }
    for (auto& t : threads) t.join();
  };
  recheck();

  // Re-test failing pairs between reachable nodes before a verdict.
  for (uint32_t attempt = 2; attempt <= 1 + config.sweep().retests(); ++attempt) {
    std::vector<Pair> failing;
    for (const auto& [k, run] : pairs) {
      if (!nodes[run.client]->reachable || !nodes[run.server]->reachable) continue;
      bool bad = std::any_of(run.results.begin(), run.results.end(), [](const auto& r) {
        return r.outcome() == v1::PROBE_FAILED || r.outcome() == v1::PROBE_TIMEOUT;
      });
      if (bad) failing.push_back({run.client, run.server});
    }
    if (failing.empty()) break;
    const std::vector<Round> retest = PackRounds(failing);
    for (uint32_t r = 0; r < retest.size(); ++r) {
      uint32_t failed = measure_round(retest[r], attempt);
      emit_round(r, static_cast<uint32_t>(retest.size()), static_cast<uint32_t>(retest[r].size()),
                 failed, "retest");
    }
    recheck();
  }

  // The all-reduce: over every reachable node, or one ring per value of the node label named
  // by request.allreduce_group_by (a rack, a rail). In each ring every node opens a listener,
  // then all join at once and measure; the ranks' figures are combined as nccl-tests does
  // (times averaged). Rings run one after the other.
  struct RingRun {
    std::string group;           // "rack=r1"; empty for the whole sweep
    std::vector<uint32_t> ring;  // node index of each rank (NCCL: of each node's first rank)
    v1::ProbeResult collective;
    std::vector<v1::ProbeResult> rank_results;
    bool nccl = false;              // NCCL, one rank per GPU, rather than the host ring
    bool rdma = false;              // the host ring over RDMA rather than TCP
    std::vector<uint32_t> gpus;     // NCCL: ranks on each node of `ring`
    std::string skipped;            // why the group could not run as asked
  };
  std::vector<RingRun> rings;
  if (allreduce) {
    const std::string& by = request.allreduce_group_by();
    std::map<std::string, std::vector<uint32_t>> groups;
    for (uint32_t i : live) {
      const auto& labels = nodes[i]->inventory.labels();
      auto it = labels.find(by);
      groups[by.empty() ? "" : absl::StrCat(by, "=", it == labels.end() ? "" : it->second)].push_back(i);
    }
    // "auto": NCCL where every node of a group has GPUs and NCCL, else the host ring over RDMA
    // where every node has an active RDMA port, else over TCP; or as asked.
    const std::string backend = request.allreduce_backend().empty() ? "auto" : request.allreduce_backend();
    for (auto& [group, members] : groups) {
      if (members.size() < 2) continue;
      RingRun rr{group, std::move(members), {}, {}};
      std::string lacking, no_rdma;
      for (uint32_t i : rr.ring) {
        const v1::NodeInventory& inv = nodes[i]->inventory;
        if (no_rdma.empty() && !HasActiveRdmaPort(inv)) {
          const std::string& why = inv.rdma_unavailable_reason();
          no_rdma = absl::StrCat(nodes[i]->name, " has no active RDMA port",
                                 why.empty() ? "" : absl::StrCat(" (", why, ")"));
        } else if (no_rdma.empty() && inv.memlock_limit_bytes() < kRingMemlockBytes) {
          // A rank registers up to 32 MiB (two queue pairs, double-buffered 4 MiB slots).
          no_rdma = absl::StrCat(nodes[i]->name, "'s memlock limit of ", inv.memlock_limit_bytes(),
                                 " bytes is below the ring's ", kRingMemlockBytes);
        }
      }
      for (uint32_t i : rr.ring) {
        const v1::NodeInventory& inv = nodes[i]->inventory;
        if (inv.gpus_size() == 0) {
          lacking = absl::StrCat(nodes[i]->name, " has no GPU (", inv.gpu_unavailable_reason(), ")");
        } else if (inv.nccl_version().empty()) {
          lacking = absl::StrCat(nodes[i]->name, " has no NCCL (", inv.nccl_unavailable_reason(), ")");
        }
        if (!lacking.empty()) break;
        rr.gpus.push_back(static_cast<uint32_t>(std::min(inv.gpus_size(), 64)));
      }
      rr.nccl = (backend == "auto" || backend == "nccl") && lacking.empty();
      if (backend == "nccl" && !lacking.empty()) rr.skipped = absl::StrCat("NCCL asked for, but ", lacking);
      if (!rr.nccl) rr.gpus.clear();
      rr.rdma = !rr.nccl && (backend == "auto" || backend == "rdma") && no_rdma.empty();
      if (backend == "rdma" && !no_rdma.empty()) rr.skipped = absl::StrCat("RDMA asked for, but ", no_rdma);
      rings.push_back(std::move(rr));
    }
  }
  for (size_t g = 0; g < rings.size(); ++g) {
    auto& ring = rings[g].ring;
    auto& collective = rings[g].collective;
    auto& rank_results = rings[g].rank_results;
    const bool nccl = rings[g].nccl;
    const std::vector<uint32_t>& gpus = rings[g].gpus;
    probes::ProbeParams p;
    p.kind = v1::ALLREDUCE;
    if (nccl) p.allreduce_backend = "nccl";
    if (rings[g].rdma) p.ring_transport = "rdma";
    const v1::Measurement& m = request.measurement();
    if (m.sizes_bytes_size() > 0) {
      p.sizes_bytes.assign(m.sizes_bytes().begin(), m.sizes_bytes().end());
    } else {
      p.sizes_bytes = {4u << 20};
    }
    p.iterations = m.iterations() > 0 ? m.iterations() : 10;
    p.warmup_iterations = m.warmup_iterations() ? m.warmup_iterations() : 2;
    p.timeout = pair_timeout * 2;
    if (auto s = probes::ValidateParams(p, probes::LimitsFromConfig(config.probes().limits())); !s.ok()) {
      return s;
    }
    const v1::ProbeSpec spec = probes::ToSpec(p);
    const std::string run_id = absl::StrCat("s", *sweep_id, "-allreduce-", g);
    const size_t n = ring.size();
    // NCCL ranks: node r runs gpus[r] of them from first_rank[r]; the host ring, one per node.
    std::vector<uint32_t> first_rank(n, 0);
    uint32_t world = static_cast<uint32_t>(n);
    if (nccl) {
      world = 0;
      for (size_t r = 0; r < n; ++r) {
        first_rank[r] = world;
        world += gpus[r];
      }
    } else {
      for (size_t r = 0; r < n; ++r) first_rank[r] = static_cast<uint32_t>(r);
    }
    const std::string what = absl::StrCat(
        nccl ? absl::StrCat("nccl, ", world, " ranks on ", n, " nodes")
             : std::string(rings[g].rdma ? "rdma ring" : "tcp ring"),
        rings[g].group.empty() ? "" : absl::StrCat(", ", rings[g].group));
    if (!rings[g].skipped.empty()) {
      collective.set_kind(v1::ALLREDUCE);
      collective.set_node(nodes[ring[0]]->name);
      collective.set_device(what);
      collective.set_outcome(v1::PROBE_SKIPPED);
      collective.set_reason(rings[g].skipped);
      *collective.mutable_effective_spec() = spec;
      for (uint32_t i : ring) collective.mutable_effective_spec()->mutable_allreduce()->add_group(nodes[i]->name);
      if (auto s = store_->InsertResult(*sweep_id, next_round++, 1, collective); !s.ok()) {
        log->error("sweep {}: cannot store a result: {}", *sweep_id, std::string(s.message()));
      }
      continue;
    }
    std::vector<v1::Endpoint> endpoints(n);
    std::vector<grpc::Status> started_status(n);
    {
      std::vector<std::thread> threads;
      for (size_t r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
          v1::StartProbeServerRequest start;
          *start.mutable_spec() = spec;
          start.set_run_id(run_id);
          start.set_rank(first_rank[r]);
          v1::StartProbeServerResponse response;
          grpc::ClientContext context;
          context.set_deadline(Deadline(kStartTimeout));
          started_status[r] = StubFor(nodes[ring[r]]->address)->StartProbeServer(&context, start, &response);
          endpoints[r] = response.endpoint();
        });
      }
      for (auto& t : threads) t.join();
    }
    rank_results.resize(n);
    const bool all_started = std::all_of(started_status.begin(), started_status.end(),
                                         [](const grpc::Status& s) { return s.ok(); });
    std::vector<char> stand_down(n, 0);  // stopped because another rank could not start
    std::vector<std::thread> threads;
    for (size_t r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        Node& node = *nodes[ring[r]];
        v1::ProbeResult& out = rank_results[r];
        out.set_kind(v1::ALLREDUCE);
        out.set_node(node.name);
        grpc::Status s = started_status[r];
        if (s.ok() && all_started) {
          v1::RunLocalProbeRequest run;
          *run.mutable_spec() = spec;
          run.set_run_id(run_id);
          run.set_rank(first_rank[r]);
          for (const auto& e : endpoints) *run.add_ranks() = e;
          if (nccl) {
            run.set_world_size(world);
            run.set_local_ranks(gpus[r]);
          }
          v1::RunLocalProbeResponse response;
          grpc::ClientContext context;
          context.set_deadline(Deadline(p.timeout + kRpcSlack));
          s = StubFor(node.address)->RunLocalProbe(&context, run, &response);
          if (s.ok()) {
            out = response.result();
            out.set_node(node.name);
            return;
          }
        } else {
          // Some rank could not start: free this one's slot, also where its own start failed
          // here but may still finish there (a late answer); unknown runs are NotFound.
          v1::StopProbeServerRequest stop;
          stop.set_run_id(run_id);
          v1::StopProbeServerResponse stopped;
          grpc::ClientContext context;
          context.set_deadline(Deadline(kStopTimeout));
          (void)StubFor(node.address)->StopProbeServer(&context, stop, &stopped);
          if (s.ok()) {
            s = grpc::Status(grpc::StatusCode::ABORTED, "another rank could not start");
            stand_down[r] = 1;
          }
        }
        if (IsTransportFailure(s)) node.transport_failures = true;
        out.set_outcome(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? v1::PROBE_TIMEOUT
                                                                              : v1::PROBE_FAILED);
        out.set_reason(absl::StrCat("rank ", r, " on ", node.name, ": ", s.error_message()));
      });
    }
    for (auto& t : threads) t.join();
    // Combine: nccl-tests averages the time across ranks (a node's figure is its ranks'
    // average already); wrong elements add up.
    collective.set_kind(v1::ALLREDUCE);
    collective.set_node(nodes[ring[0]]->name);
    collective.set_device(what);
    *collective.mutable_effective_spec() = spec;
    for (uint32_t i : ring) collective.mutable_effective_spec()->mutable_allreduce()->add_group(nodes[i]->name);
    collective.set_outcome(v1::PROBE_OK);
    // A rank that failed outright is the cause; its neighbours then time out waiting for it,
    // and ranks stopped because another could not start are no cause at all.
    auto cause = std::find_if(rank_results.begin(), rank_results.end(), [&](const v1::ProbeResult& r) {
      return r.outcome() == v1::PROBE_FAILED && !stand_down[&r - rank_results.data()];
    });
    if (cause != rank_results.end()) {
      collective.set_outcome(cause->outcome());
      collective.set_reason(cause->reason());
    }
    for (const auto& r : rank_results) {
      if (collective.outcome() != v1::PROBE_OK) break;
      if (r.outcome() != v1::PROBE_OK) {
        collective.set_outcome(r.outcome());
        collective.set_reason(r.reason());
        break;
      }
      if (r.collective_size() != rank_results[0].collective_size()) {
        collective.set_outcome(v1::PROBE_FAILED);
        collective.set_reason(absl::StrCat(r.node(), " measured ", r.collective_size(),
                                           " sizes, ", rank_results[0].node(), " ",
                                           rank_results[0].collective_size()));
        break;
      }
    }
    if (collective.outcome() == v1::PROBE_OK) {
      for (int k = 0; k < rank_results[0].collective_size(); ++k) {
        double time_us = 0;
        uint64_t wrong = 0;
        for (size_t r = 0; r < n; ++r) {
          const double ranks_here = nccl ? gpus[r] : 1;
          time_us += ranks_here * rank_results[r].collective(k).time_us();
          wrong += rank_results[r].collective(k).wrong();
        }
        time_us /= static_cast<double>(world);
        v1::CollectivePoint* c = collective.add_collective();
        c->set_size_bytes(rank_results[0].collective(k).size_bytes());
        c->set_time_us(time_us);
        c->set_algbw_gbytes(probes::AllreduceAlgBwGBytes(c->size_bytes(), time_us * 1e-6));
        c->set_busbw_gbytes(probes::AllreduceBusBwGBytes(c->size_bytes(), time_us * 1e-6, world));
        c->set_wrong(wrong);
      }
    }
    if (nccl) {  // how NCCL moved the data: sockets anywhere make the group's network Socket
      v1::NcclTransport* t = collective.mutable_nccl();
      bool gdr = true, any = false;
      for (const auto& r : rank_results) {
        if (!r.has_nccl() || r.nccl().net().empty()) continue;
        any = true;
        if (t->net().empty() || r.nccl().net() == "Socket") t->set_net(r.nccl().net());
        gdr = gdr && r.nccl().gpudirect_rdma();
        for (const auto& line : r.nccl().evidence()) {
          if (t->evidence_size() < 16) t->add_evidence(line);
        }
      }
      t->set_gpudirect_rdma(any && gdr);
    }
    if (auto s = store_->InsertResult(*sweep_id, next_round++, 1, collective); !s.ok()) {
      log->error("sweep {}: cannot store a result: {}", *sweep_id, std::string(s.message()));
    }
    if (progress) {
      v1::SweepEvent event;
      auto* r = event.mutable_round();
      r->set_round(static_cast<uint32_t>(g + 1));
      r->set_rounds(static_cast<uint32_t>(rings.size()));
      r->set_pairs(static_cast<uint32_t>(n));
      r->set_pairs_failed(collective.outcome() == v1::PROBE_OK ? 0 : 1);
      r->set_phase("allreduce");
      progress(event);
    }
  }
  if (!rings.empty()) recheck();

  // Analysis input from everything measured so far.
  int bw_index = -1, lat_index = -1;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const probes::Probe* probe = probes::FindProbe(kinds[k]);
    if (probe->measures_bandwidth() && bw_index < 0) bw_index = static_cast<int>(k);
    if (!probe->measures_bandwidth() && lat_index < 0) lat_index = static_cast<int>(k);
  }
  const bool rdma_asked = std::any_of(kinds.begin(), kinds.end(), IsRdma);
  std::vector<const PairRun*> ordered;
  auto build_input = [&]() {
    AnalysisInput in;
    in.expect = config.expect();
    in.thresholds = config.thresholds();
    if (bw_index >= 0) {
      in.bandwidth_probe = probes::FindProbe(kinds[bw_index])->name();
      in.bandwidth_is_rdma = IsRdma(kinds[bw_index]);
    }
    if (lat_index >= 0) in.latency_probe = probes::FindProbe(kinds[lat_index])->name();
    for (const auto& node : nodes) {
      NodeInput n;
      n.name = node->name;
      n.reachable = node->reachable;
      n.unreachable_reason = node->reason;
      n.netdev_mtu = AgentInterfaceMtu(node->inventory, &n.netdev);
      if (rdma_asked && node->reachable && node->inventory.rdma_devices_size() == 0) {
        n.rdma_unavailable_reason = node->inventory.rdma_unavailable_reason().empty()
                                        ? "no RDMA device"
                                        : node->inventory.rdma_unavailable_reason();
      }
      in.nodes.push_back(std::move(n));
    }
    ordered.clear();
    for (const auto& [k, run] : pairs) ordered.push_back(&run);
    for (const PairRun* run : ordered) {
      PairInput p;
      p.client = run->client;
      p.server = run->server;
      const bool ends_up = nodes[run->client]->reachable && nodes[run->server]->reachable;
      if (bw_index >= 0) p.bw_gbps = HeadlineBw(run->results[bw_index]);
      if (lat_index >= 0) p.lat_us = HeadlineLat(run->results[lat_index]);
      for (const auto& r : run->results) {
        if (r.outcome() == v1::PROBE_SKIPPED && IsRdma(r.kind())) {
          p.tcp_fallback = true;
          in.reasons.push_back(r.reason());
          p.reason = static_cast<int32_t>(in.reasons.size() - 1);
        } else if (r.outcome() == v1::PROBE_FAILED || r.outcome() == v1::PROBE_TIMEOUT) {
          p.status = !ends_up ? PairStatus::kNotMeasured
                     : r.outcome() == v1::PROBE_TIMEOUT ? PairStatus::kTimeout
                                                        : PairStatus::kFailed;
          in.reasons.push_back(absl::StrCat(probes::FindProbe(r.kind())->name(), ": ", r.reason()));
          p.reason = static_cast<int32_t>(in.reasons.size() - 1);
          break;
        }
      }
      in.pairs.push_back(p);
    }
    return in;
  };

  // Localisation: a bad pair whose ends were each measured once or less cannot say which end
  // (or the link) is at fault; each end is re-paired with a node known to be good, and the
  // node common to the failing pairs shows itself (full pairing never needs this).
  {
    AnalysisInput in = build_input();
    AnalysisResult first = Analyze(in);
    std::vector<uint32_t> good;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i]->reachable && first.nodes[i].verdict == Verdict::kOk && first.nodes[i].pairs > 0) {
        good.push_back(i);
      }
    }
    std::vector<Pair> wanted;
    for (size_t i = 0; i < in.pairs.size(); ++i) {
      const PairResult& r = first.pairs[i];
      const PairInput& p = in.pairs[i];
      if (!(r.slow || r.high_latency)) continue;
      if (first.nodes[p.client].straggler || first.nodes[p.server].straggler) continue;
      for (uint32_t end : {p.client, p.server}) {
        if (first.nodes[end].pairs >= 2) continue;
        for (uint32_t g : good) {
          if (g == p.client || g == p.server || pairs.count(key(end, g))) continue;
          wanted.push_back({end, g});
          break;
        }
      }
    }
    const std::vector<Round> localise = PackRounds(wanted);
    for (uint32_t r = 0; r < localise.size(); ++r) {
      uint32_t failed = measure_round(localise[r], 1);
      emit_round(r, static_cast<uint32_t>(localise.size()),
                 static_cast<uint32_t>(localise[r].size()), failed, "localise");
    }
  }

  // The verdict, on everything measured.
  AnalysisInput in = build_input();
  AnalysisResult analysis = Analyze(in);

  // The all-reduce against its thresholds: the configured busbw, and the group's own pairwise
  // bandwidth (a bandwidth-optimal ring reaches close to it). A slow link shows in the send
  // time of the rank it leaves; a node's own links are the one out of it and the one into it
  // (its left neighbour's), so the node whose two add up highest is the one to name.
  for (const RingRun& rr : rings) {
    const auto& ring = rr.ring;
    const auto& collective = rr.collective;
    const auto& rank_results = rr.rank_results;
    // What NCCL's logs say, node by node: sockets between nodes, staging through host memory.
    for (const auto& r : rank_results) {
      for (v1::Finding f : r.findings()) {
        f.set_node(r.node());
        analysis.findings.push_back(std::move(f));
      }
    }
    if (collective.collective_size() == 0) {
      if (collective.outcome() == v1::PROBE_FAILED || collective.outcome() == v1::PROBE_TIMEOUT) {
        v1::Finding f;
        f.set_kind(collective.outcome() == v1::PROBE_TIMEOUT ? "probe_timeout" : "probe_failed");
        f.set_severity(v1::SEVERITY_WARNING);
        f.set_action(v1::ACTION_INVESTIGATE);
        f.set_node(collective.node());
        f.set_detail(absl::StrCat("allreduce: ", collective.reason()));
        analysis.findings.push_back(std::move(f));
      }
      continue;
    }
    const v1::CollectivePoint& last = collective.collective(collective.collective_size() - 1);
    std::vector<std::string> why;
    if (config.thresholds().min_allreduce_busbw_gbytes() > 0 &&
        last.busbw_gbytes() < config.thresholds().min_allreduce_busbw_gbytes()) {
      why.push_back(absl::StrFormat("below %.3f GB/s (thresholds.min_allreduce_busbw_gbytes)",
                                    config.thresholds().min_allreduce_busbw_gbytes()));
    }
    // The group's own pairwise bandwidth: the median of the pairs inside the ring.
    std::vector<double> inside;
    for (const PairInput& pair : in.pairs) {
      if (std::isnan(pair.bw_gbps)) continue;
      if (std::count(ring.begin(), ring.end(), pair.client) && std::count(ring.begin(), ring.end(), pair.server)) {
        inside.push_back(pair.bw_gbps);
      }
    }
    const double pairwise_gbytes = inside.empty() ? 0 : Median(inside) / 8.0;
    const double relative = config.thresholds().relative_allreduce_busbw();
    if (pairwise_gbytes > 0 && last.busbw_gbytes() < relative * pairwise_gbytes) {
      why.push_back(absl::StrFormat("below %.0f %% of the group's median pairwise %.3f GB/s",
                                    relative * 100, pairwise_gbytes));
    }
    // Each rank's send time is the time of its link to the right (the host ring; NCCL reports
    // none, so its group is named and the pairwise probes localise). Links slower than twice the
    // typical link (the median of the quicker half, as up to half the links of a small ring
    // may be slow) are slow; a node with both its links slow (in and out) is the straggler, a
    // lone slow link names its sending end.
    const size_t n = ring.size();
    std::vector<double> link(n, 0);
    for (size_t r = 0; r < n; ++r) {
      const auto& mine = rank_results[r];
      if (mine.collective_size() > 0) link[r] = mine.collective(mine.collective_size() - 1).send_time_us();
    }
    std::vector<double> sorted = link;
    std::sort(sorted.begin(), sorted.end());
    sorted.resize((n + 1) / 2);
    const double median_link = Median(sorted);
    std::vector<bool> slow(n, false);
    for (size_t r = 0; r < n; ++r) slow[r] = median_link > 0 && link[r] > 2 * median_link;
    std::string straggler;
    const bool timed_links = std::any_of(link.begin(), link.end(), [](double t) { return t > 0; });
    for (size_t r = 0; r < n && straggler.empty(); ++r) {
      if (slow[r] && slow[(r + n - 1) % n]) straggler = nodes[ring[r]]->name;  // in and out
    }
    for (size_t r = 0; r < n && straggler.empty(); ++r) {
      if (slow[r]) straggler = nodes[ring[r]]->name;
    }
    if (straggler.empty() && timed_links) {  // nothing stands out: the slowest link's sender
      straggler = nodes[ring[std::max_element(link.begin(), link.end()) - link.begin()]]->name;
    }
    // Without a threshold to miss, a slow link is still a finding.
    if (why.empty() && std::count(slow.begin(), slow.end(), true) > 0) {
      const size_t worst = std::max_element(link.begin(), link.end()) - link.begin();
      why.push_back(absl::StrFormat("the link out of %s took %.0f us to carry %d bytes on its own, "
                                    "%.1f times a typical link's",
                                    nodes[ring[worst]]->name, link[worst],
                                    std::min<uint64_t>(last.size_bytes(), 8u << 20),
                                    link[worst] / median_link));
    }
    if (!why.empty()) {
      v1::Finding f;
      f.set_kind("allreduce_below_threshold");
      f.set_severity(v1::SEVERITY_CRITICAL);
      f.set_action(v1::ACTION_INVESTIGATE);
      f.set_node(straggler);
      f.set_detail(absl::StrFormat(
          "allreduce (%s) over %d nodes%s: busbw %.3f GB/s at %d bytes, %s%s", collective.device(),
          n, rr.group.empty() ? "" : absl::StrCat(" (", rr.group, ")"), last.busbw_gbytes(),
          last.size_bytes(), absl::StrJoin(why, " and "),
          straggler.empty() ? "" : absl::StrCat("; the slowest links of the ring are ", straggler, "'s")));
      (*f.mutable_evidence())["busbw_gbytes"] = absl::StrFormat("%.3f", last.busbw_gbytes());
      if (!straggler.empty()) (*f.mutable_evidence())["straggler"] = straggler;
      analysis.findings.push_back(std::move(f));
    }
    if (last.wrong() > 0) {
      v1::Finding f;
      f.set_kind("probe_failed");
      f.set_severity(v1::SEVERITY_CRITICAL);
      f.set_action(v1::ACTION_INVESTIGATE);
      f.set_node(collective.node());
      f.set_detail(absl::StrCat("allreduce data check: ", last.wrong(), " wrong elements"));
      analysis.findings.push_back(std::move(f));
    }
  }

  // Regressions against the baseline sweep.
  if (request.baseline_sweep_id() != 0) {
    std::map<std::pair<std::string, std::string>, double> before;
    for (const auto& pair : baseline.health().pairs()) {
      if (!pair.has_bw_gbps()) continue;
      before[{std::min(pair.node(), pair.peer()), std::max(pair.node(), pair.peer())}] = pair.bw_gbps();
    }
    for (size_t i = 0; i < in.pairs.size(); ++i) {
      const PairInput& p = in.pairs[i];
      if (std::isnan(p.bw_gbps)) continue;
      const std::string& a = nodes[p.client]->name;
      const std::string& b = nodes[p.server]->name;
      auto it = before.find({std::min(a, b), std::max(a, b)});
      if (it == before.end() || p.bw_gbps >= it->second * config.thresholds().relative_bw()) continue;
      v1::Finding f;
      f.set_kind("regression");
      f.set_severity(v1::SEVERITY_WARNING);
      f.set_action(v1::ACTION_INVESTIGATE);
      f.set_node(a);
      f.set_peer(b);
      f.set_detail(absl::StrFormat("%s -> %s: %s %.2f Gb/s, was %.2f Gb/s in sweep %d", a, b,
                                   in.bandwidth_probe, p.bw_gbps, it->second,
                                   request.baseline_sweep_id()));
      (*f.mutable_evidence())["baseline_gbps"] = absl::StrFormat("%.2f", it->second);
      (*f.mutable_evidence())["bw_gbps"] = absl::StrFormat("%.2f", p.bw_gbps);
      analysis.findings.push_back(std::move(f));
    }
  }

  // The report.
  const absl::Time finished = options_.now();
  v1::Report report;
  report.set_schema("fabricctl.report/v1");
  report.set_generator(absl::StrCat("fabric-controller ", kVersion));
  *report.mutable_generated() = ToProto(finished);
  report.set_source("sweep");
  *report.mutable_expect() = config.expect();
  *report.mutable_thresholds() = config.thresholds();
  v1::HealthMap* health = report.mutable_health();
  if (!std::isnan(analysis.best_bw_gbps)) health->set_best_bw_gbps(analysis.best_bw_gbps);
  for (const RingRun& rr : rings) *health->add_collectives() = rr.collective;
  if (!std::isnan(analysis.median_bw_gbps)) health->set_median_bw_gbps(analysis.median_bw_gbps);
  v1::Summary* summary = report.mutable_summary();
  std::set<std::string> drain;
  for (const auto& f : analysis.findings) {
    if (f.action() == v1::ACTION_DRAIN) drain.insert(f.node());
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::NodeHealth* nh = health->add_nodes();
    nh->set_node(nodes[i]->name);
    nh->set_status(ToHealth(analysis.nodes[i].verdict));
    for (const auto& [k, v] : nodes[i]->inventory.labels()) (*nh->mutable_labels())[k] = v;
    if (!std::isnan(analysis.nodes[i].median_bw_gbps)) nh->set_median_bw_gbps(analysis.nodes[i].median_bw_gbps);
    if (!std::isnan(analysis.nodes[i].robust_z)) nh->set_robust_z(analysis.nodes[i].robust_z);
    for (const auto& audit : audits[i]) {
      *nh->add_audits() = audit;
      for (const auto& f : audit.findings()) {
        analysis.findings.push_back(f);
        if (f.severity() == v1::SEVERITY_CRITICAL) nh->set_status(v1::HEALTH_CRITICAL);
        if (f.severity() == v1::SEVERITY_WARNING && nh->status() == v1::HEALTH_OK) {
          nh->set_status(v1::HEALTH_WARNING);
        }
        if (f.action() == v1::ACTION_DRAIN) drain.insert(f.node());
      }
    }
    switch (nh->status()) {
      case v1::HEALTH_OK: summary->set_nodes_ok(summary->nodes_ok() + 1); break;
      case v1::HEALTH_WARNING: summary->set_nodes_warning(summary->nodes_warning() + 1); break;
      case v1::HEALTH_CRITICAL: summary->set_nodes_critical(summary->nodes_critical() + 1); break;
      default: summary->set_nodes_unknown(summary->nodes_unknown() + 1); break;
    }
  }
  for (size_t i = 0; i < ordered.size(); ++i) {
    const PairRun& run = *ordered[i];
    v1::PairHealth* ph = health->add_pairs();
    ph->set_node(nodes[run.client]->name);
    ph->set_peer(nodes[run.server]->name);
    ph->set_status(ToHealth(analysis.pairs[i].verdict));
    if (!std::isnan(in.pairs[i].bw_gbps)) ph->set_bw_gbps(in.pairs[i].bw_gbps);
    if (!std::isnan(in.pairs[i].lat_us)) ph->set_lat_us(in.pairs[i].lat_us);
    if (!std::isnan(analysis.pairs[i].relative_bw)) ph->set_relative_bw(analysis.pairs[i].relative_bw);
    ph->set_attempts(run.attempts);
    for (const auto& r : run.results) *ph->add_results() = r;
    if (ph->status() == v1::HEALTH_WARNING || ph->status() == v1::HEALTH_CRITICAL) {
      summary->set_pairs_failed(summary->pairs_failed() + 1);
    }
  }
  for (const auto& f : analysis.findings) *report.add_findings() = f;
  summary->set_nodes(static_cast<uint32_t>(nodes.size()));
  summary->set_pairs(static_cast<uint32_t>(ordered.size()));
  for (const auto& d : drain) summary->add_drain(d);
  summary->set_worst_severity(WorstSeverity(analysis.findings));
  *summary->mutable_elapsed() = TimeUtil::MicrosecondsToDuration(
      absl::ToInt64Microseconds(finished - started));
  info.set_state(v1::SWEEP_COMPLETED);
  *info.mutable_finished() = ToProto(finished);
  info.set_worst_severity(summary->worst_severity());
  info.set_findings_count(static_cast<uint32_t>(analysis.findings.size()));
  *report.mutable_sweep() = info;
  if (auto s = store_->FinishSweep(*sweep_id, report); !s.ok()) return s;
  log->info("sweep {}: done in {}, {} findings", *sweep_id,
            absl::FormatDuration(finished - started), analysis.findings.size());
  return report;
}

}  // namespace fabricctl::controller
