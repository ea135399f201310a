#include "controller/service.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/config.h"
#include "base/grpc_status.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "base/status_macros.h"
#include "base/tls.h"
#include "base/utf8.h"
#include "controller/acceptances.h"
#include "controller/sweep/incremental.h"
#include "controller/sweep/inventory_check.h"
#include "controller/verdict/inventory_diff.h"
#include "google/protobuf/util/time_util.h"
#include "report/chunks.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

using google::protobuf::util::TimeUtil;

constexpr size_t kListSweepsPageBytes = 1 << 20;
constexpr size_t kMaxInventoryString = 4096;
// Listed with their verdicts, acceptances come this many a page at most: the store reads each
// whole before the page's bytes are counted.
constexpr uint32_t kMaxVerdictsPage = 16;

google::protobuf::Timestamp ToProto(absl::Time t) {
  return TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(t));
}

// What Sweep takes: bounded, its names node names, its values in range.
grpc::Status ValidateSweepRequest(const v1::SweepRequest& r) {
  if (r.nodes_size() > kMaxListNames) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("nodes has ", r.nodes_size(), " entries; at most ", kMaxListNames));
  }
  for (const auto& name : r.nodes()) {
    if (auto s = ValidateNodeName(name, "nodes"); !s.ok()) return ToGrpcStatus(s);
  }
  if (const std::string& b = r.allreduce_backend();
      !b.empty() && b != "auto" && b != "nccl" && b != "rdma" && b != "tcp") {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        "allreduce_backend: '" + b.substr(0, 64) + "' is none of auto, nccl, rdma, tcp");
  }
  if (r.rails_size() > 64) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "rails: at most 64 names");
  }
  if (r.allreduce_group_by().size() > 253) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "allreduce_group_by is longer than 253");
  }
  if (r.wait().seconds() < 0 || r.wait().nanos() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "wait is negative");
  }
  if (r.pairing_file().size() > (1 << 20)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "pairing_file is larger than 1 MiB");
  }
  return grpc::Status::OK;
}

// A node's known-good state as the API carries it.
v1::KnownGood KnownGoodProto(const Store::KnownGood& k) {
  v1::KnownGood kg;
  kg.set_sweep_id(k.sweep_id);
  *kg.mutable_passed() = ToProto(k.passed);
  if (k.figures.has_median_bw_gbps()) kg.set_median_bw_gbps(k.figures.median_bw_gbps());
  *kg.mutable_probes() = k.coverage.probes();
  *kg.mutable_rails() = k.coverage.rails();
  if (!k.Good()) {
    *kg.mutable_lost() = ToProto(k.lost);
    kg.set_lost_why(k.lost_why);
  }
  return kg;
}

}  // namespace

v1::NodeState NodeStateAt(const StoredNode& node, absl::Time now, absl::Duration stale_after) {
  return now - node.last_seen > stale_after ? v1::NODE_STALE : v1::NODE_ONLINE;
}

ControllerServiceImpl::ControllerServiceImpl(Store* store, RegistryOptions options,
                                             SweepRunner* sweeps)
    : store_(store), options_(std::move(options)), sweeps_(sweeps) {
  SetRoles(options_.roles);
}

void ControllerServiceImpl::SetRoles(Roles roles) {
  MutexLock lock(&roles_mu_);
  roles_ = std::move(roles);
}

grpc::Status ControllerServiceImpl::Require(const grpc::ServerContext& context, Role role,
                                            const std::string& what) {
  Roles roles;
  {
    MutexLock lock(&roles_mu_);
    roles = roles_;
  }
  grpc::Status allowed = RequireRole(context, roles, role, what);
  if (!allowed.ok()) Logger("registry")->warn("refused: {}", allowed.error_message());
  return allowed;
}

grpc::Status ControllerServiceImpl::Register(grpc::ServerContext* context,
                                             const v1::RegisterRequest* request,
                                             v1::RegisterResponse* response) {
  const auto& inventory = request->inventory();
  if (auto s = ValidateInventory(inventory); !s.ok()) return ToGrpcStatus(s);
  // Under mutual TLS a node registers only under a name its certificate carries: any other
  // certificate of the cluster cannot take its place in the registry.
  if (auto s = RequireNodeName(*context, inventory.node_name(), options_.node_name_any,
                               "a node registers only under its certificate's name");
      !s.ok()) {
    Logger("registry")->warn("registration refused: {}", s.error_message());
    return s;
  }
  if (options_.loopback_only) {
    auto agent = ParseHostPort(inventory.agent_address(), "agent_address");
    if (!agent.ok() || !IsLoopbackHost(agent->host)) {
      return grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          "this controller speaks plain text, allowed on loopback only: an agent at " +
              inventory.agent_address().substr(0, 256) +
              " needs mutual TLS (tls:) or --insecure on the controller");
    }
  }
  // Printable text only from here on: a name or a line with control characters in it would
  // reach terminals, XML and Prometheus through every report.
  v1::NodeInventory clean = inventory;
  SanitizeText(&clean);
  LoseKnownGoodOnChange(clean);
  if (auto s = store_->UpsertNode(clean, options_.now()); !s.ok()) return ToGrpcStatus(s);
  Logger("registry")
      ->info("node {} registered from {} ({} RDMA devices, {} GPUs)", inventory.node_name(),
             inventory.agent_address(), inventory.rdma_devices_size(), inventory.gpus_size());
  *response->mutable_heartbeat_interval() =
      TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(options_.heartbeat_interval));
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::Heartbeat(grpc::ServerContext* context,
                                              const v1::HeartbeatRequest* request,
                                              v1::HeartbeatResponse* response) {
  if (auto s = ValidateNodeName(request->node_name(), "node_name"); !s.ok()) return ToGrpcStatus(s);
  if (auto s = RequireNodeName(*context, request->node_name(), options_.node_name_any,
                               "a node heartbeats only under its certificate's name");
      !s.ok()) {
    return s;
  }
  const std::string link_state = request->link_state().substr(0, kMaxInventoryString);
  auto touch = store_->TouchNode(request->node_name(), options_.now(), link_state);
  if (!touch.ok()) return ToGrpcStatus(touch.status());
  response->set_known(touch->known);
  if (!touch->previous_link_state.empty()) {
    const std::string why =
        absl::StrCat("a link changed: ", touch->previous_link_state, " -> ", link_state);
    Logger("registry")->info("node {}: {}", request->node_name(), why);
    (void)store_->LoseKnownGood(request->node_name(), options_.now(), PrintableText(why));
  }
  // The node's own state, after what this heartbeat changed; a store that cannot say leaves it
  // out (the agent then knows of no pass), never fails the heartbeat.
  if (touch->known) {
    LoseKnownGoodOnWatch(*request);
    auto known_good = store_->ListKnownGood({request->node_name()});
    if (known_good.ok() && !known_good->empty()) {
      *response->mutable_known_good() = KnownGoodProto(known_good->front());
      response->mutable_known_good()->clear_median_bw_gbps();
    }
  }
  return grpc::Status::OK;
}

void ControllerServiceImpl::LoseKnownGoodOnWatch(const v1::HeartbeatRequest& request) {
  // Only kinds an agent may raise about itself (the catalogue's RaisedBy); a pass already lost
  // stays as it was (no write a heartbeat while the finding lasts: a sweep raises it too).
  std::vector<std::string> what;
  for (const v1::Finding& f : request.watch()) {
    if (what.size() >= 8) break;
    if (report::AgentMayRaise(f.kind()) && f.severity() >= v1::SEVERITY_WARNING) {
      what.push_back(absl::StrCat(f.kind(), " on ", f.device().substr(0, 64)));
    }
  }
  if (what.empty()) return;
  auto known_good = store_->ListKnownGood({request.node_name()});
  if (!known_good.ok() || known_good->empty() || !known_good->front().Good()) return;
  const std::string why = absl::StrCat("its link watch: ", absl::StrJoin(what, ", "));
  Logger("registry")->info("node {}: {}", request.node_name(), why);
  (void)store_->LoseKnownGood(request.node_name(), options_.now(), PrintableText(why));
}

void ControllerServiceImpl::LoseKnownGoodOnChange(const v1::NodeInventory& inventory) {
  auto stored = store_->ListNodes({inventory.node_name()});
  if (!stored.ok()) return;
  if (stored->empty()) {
    // Nothing to compare with (forgotten, or a registry restored without it): what runs there
    // now is not what a sweep measured, as after a restart.
    (void)store_->LoseKnownGood(inventory.node_name(), options_.now(),
                                "registered with no stored inventory: taken as a restart");
    return;
  }
  const std::vector<std::string> changes = InventoryChanges(stored->front().inventory, inventory);
  if (changes.empty()) return;
  const std::string why = absl::StrJoin(changes, "; ");
  Logger("registry")->info("node {} registered again with changes: {}", inventory.node_name(), why);
  (void)store_->LoseKnownGood(inventory.node_name(), options_.now(), why);
}

void ControllerServiceImpl::ForgetExpired() {
  if (options_.forget_after <= absl::ZeroDuration()) return;
  auto forgotten = store_->ForgetNodesSeenBefore(options_.now() - options_.forget_after);
  if (forgotten.ok() && !forgotten->empty()) {
    Logger("registry")
        ->info("forgot {} node(s) silent for over {}: {}", forgotten->size(),
               absl::FormatDuration(options_.forget_after), absl::StrJoin(*forgotten, ", "));
  }
}

grpc::Status ControllerServiceImpl::PruneHistory(grpc::ServerContext* context,
                                                 const v1::PruneHistoryRequest* request,
                                                 v1::PruneHistoryResponse* response) {
  if (auto s = Require(*context, Role::kAdmin, "prune the history"); !s.ok()) return s;
  if (sweeps_ == nullptr)
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this controller keeps no history");
  v1::History policy = sweeps_->HistoryPolicy();
  if (request->has_keep()) {
    if (request->keep().seconds() < 0 || request->keep().nanos() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "keep: a negative duration");
    }
    *policy.mutable_keep() = request->keep();
  }
  if (request->has_keep_sweeps()) policy.set_keep_sweeps(request->keep_sweeps());
  auto pruned = sweeps_->PruneHistory(policy);
  if (!pruned.ok()) return ToGrpcStatus(pruned.status());
  response->set_sweeps(pruned->sweeps);
  response->set_results(pruned->results);
  response->set_acceptances(pruned->acceptances);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::RecordAcceptance(grpc::ServerContext* context,
                                                     const v1::RecordAcceptanceRequest* request,
                                                     v1::RecordAcceptanceResponse* response) {
  if (auto s = Require(*context, Role::kOperator, "record an acceptance"); !s.ok()) return s;
  if (auto s = ValidateAcceptance(request->acceptance()); !s.ok()) return ToGrpcStatus(s);
  // Printable text only: its names and reasons reach terminals through `fabricctl history`.
  v1::Acceptance asked = request->acceptance();
  SanitizeText(&asked);
  // The verdict is judged here, over the stored reports of its sweeps, whatever was sent.
  const v1::Acceptance clean = JudgeRecorded(*store_, asked);
  const std::string by = CallerOf(*context);
  auto id = store_->RecordAcceptance(clean, by, options_.now());
  if (!id.ok()) return ToGrpcStatus(id.status());
  int accepted = 0;
  for (const auto& node : clean.nodes()) {
    accepted += node.accepted() ? 1 : 0;
    // A node the acceptance rejected (a check failed; not one cut short before its verdict)
    // is vouched for by none of its passes' sweeps.
    if (Rejected(node)) {
      (void)store_->LoseKnownGood(
          node.node(), options_.now(),
          absl::StrCat("fabricctl accept rejected it (acceptance ", *id, ")"));
    }
  }
  const std::string sweeps =
      clean.sweep_ids().empty() ? "none" : absl::StrJoin(clean.sweep_ids(), ",");
  Logger("history")->info("acceptance {} recorded by {}: {} of {} node(s) accepted, sweeps {}", *id,
                          by, accepted, clean.nodes_size(), sweeps);
  response->set_acceptance_id(*id);
  *response->mutable_acceptance() = clean;
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListAcceptances(grpc::ServerContext* context,
                                                    const v1::ListAcceptancesRequest* request,
                                                    v1::ListAcceptancesResponse* response) {
  if (auto s = Require(*context, Role::kOperator, "read the history"); !s.ok()) return s;
  if (request->before_acceptance_id() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "before_acceptance_id is negative");
  }
  uint32_t limit = request->limit() == 0 ? 20 : std::min<uint32_t>(request->limit(), 10000);
  if (request->with_verdicts()) limit = std::min(limit, kMaxVerdictsPage);
  auto records =
      store_->ListAcceptances(limit, request->before_acceptance_id(), request->with_verdicts());
  if (!records.ok()) return ToGrpcStatus(records.status());
  // Pages of about 1 MiB, as ListSweeps' (one record at least, however large).
  size_t bytes = 0;
  for (auto& r : *records) {
    bytes += r.ByteSizeLong();
    if (response->acceptances_size() > 0 && bytes > kListSweepsPageBytes) break;
    *response->add_acceptances() = std::move(r);
  }
  const bool more =
      response->acceptances_size() < static_cast<int>(records->size()) || records->size() == limit;
  if (more && response->acceptances_size() > 0) {
    response->set_next_before_acceptance_id(
        response->acceptances(response->acceptances_size() - 1).acceptance_id());
  }
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::RemoveNodes(grpc::ServerContext* context,
                                                const v1::RemoveNodesRequest* request,
                                                v1::RemoveNodesResponse* response) {
  // Forgetting nodes is for an operator: a node's certificate may register and heartbeat as
  // itself, never remove others (a removed node is left out of default sweeps).
  if (auto s = Require(*context, Role::kAdmin, "remove nodes"); !s.ok()) return s;
  if (request->names().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "names: name at least one node");
  }
  if (request->names_size() > kMaxListNames) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("names has ", request->names_size(), " entries; at most ", kMaxListNames));
  }
  // Names are checked for size only: a node registered before today's rules must be removable.
  for (const auto& name : request->names()) {
    if (name.empty() || name.size() > kMaxInventoryString) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "names: an empty or oversized name");
    }
  }
  std::vector<std::string> names(request->names().begin(), request->names().end());
  auto removed = store_->RemoveNodes(names);
  if (!removed.ok()) return ToGrpcStatus(removed.status());
  for (auto& name : *removed) {
    Logger("registry")->info("node {} removed", name);
    response->add_removed(std::move(name));
  }
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListNodes(grpc::ServerContext* context,
                                              const v1::ListNodesRequest* request,
                                              v1::ListNodesResponse* response) {
  if (auto s = Require(*context, Role::kOperator, "list the nodes"); !s.ok()) return s;
  ForgetExpired();
  if (request->names_size() > kMaxListNames) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("names has ", request->names_size(), " entries; at most ", kMaxListNames));
  }
  std::vector<std::string> names(request->names().begin(), request->names().end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  auto nodes = store_->ListNodes(names);
  if (!nodes.ok()) return ToGrpcStatus(nodes.status());
  const absl::Time now = options_.now();
  for (auto& node : *nodes) {
    v1::NodeStatus* out = response->add_nodes();
    out->set_state(NodeStateAt(node, now, options_.stale_after));
    *out->mutable_first_seen() = ToProto(node.first_seen);
    *out->mutable_last_seen() = ToProto(node.last_seen);
    *out->mutable_inventory() = std::move(node.inventory);
  }
  auto known_good = store_->ListKnownGood(names);
  if (!known_good.ok()) return ToGrpcStatus(known_good.status());
  std::map<std::string, const Store::KnownGood*> by_node;
  for (const auto& k : *known_good) by_node[k.node] = &k;
  for (auto& out : *response->mutable_nodes()) {
    auto it = by_node.find(out.inventory().node_name());
    if (it == by_node.end()) continue;
    *out.mutable_known_good() = KnownGoodProto(*it->second);
  }
  *response->mutable_stale_after() =
      TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(options_.stale_after));
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::Sweep(grpc::ServerContext* context,
                                          const v1::SweepRequest* request,
                                          grpc::ServerWriter<v1::SweepEvent>* writer) {
  if (auto s = Require(*context, Role::kOperator, "start a sweep"); !s.ok()) return s;
  if (sweeps_ == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this controller runs no sweeps");
  }
  if (auto s = ValidateSweepRequest(*request); !s.ok()) return s;
  ForgetExpired();
  auto registry = store_->ListNodes({});
  if (!registry.ok()) return ToGrpcStatus(registry.status());
  // Every registered node, stale ones included: a default sweep that left a silent node out
  // would pass a cluster with a dead node in it; they are asked once and reported
  // node_unreachable (`fabricctl nodes remove` forgets a decommissioned one).
  std::vector<StoredNode> nodes = *std::move(registry);
  // --max-age: the controller decides what is stale, from the passes it recorded.
  std::optional<sweep::Incremental> incremental;
  if (request->has_max_age()) {
    auto narrowed = NarrowToStale(*request, nodes);
    if (!narrowed.ok()) return ToGrpcStatus(narrowed.status());
    incremental = *std::move(narrowed);
    Logger("sweep")->info("max age: {}", incremental->plan.decision);
  }
  const v1::SweepRequest& asked = incremental ? incremental->request : *request;
  // A client that goes away (Ctrl-C, a killed Slurm prolog) or stops reading (a write fails)
  // cancels its sweep.
  std::atomic<bool> write_failed{false};
  absl::StatusOr<v1::Report> report;
  if (incremental && incremental->plan.stale.empty()) {
    report = sweep::VouchedReport(incremental->plan, options_.now());
  } else {
    report = sweeps_->Run(
        asked, nodes,
        [&](const v1::SweepEvent& event) {
          if (!writer->Write(event)) write_failed = true;
        },
        [&] { return write_failed || context->IsCancelled(); }, CallerOf(*context));
  }
  if (!report.ok()) return ToGrpcStatus(report.status());
  if (incremental && !incremental->plan.stale.empty())
    sweep::NoteDecision(incremental->plan, &*report);
  // The report in chunks (the verdict and the drain list first), each write checked: a report
  // that did not reach its client is an error here too, never a silent success.
  const int64_t id = report->sweep().sweep_id();
  const bool sent =
      report::SendReportChunks(*report, report::kReportPartBytes, [&](v1::ReportChunk c) {
        v1::SweepEvent event;
        *event.mutable_chunk() = std::move(c);
        return writer->Write(event);
      });
  if (!sent) {
    Logger("sweep")->error(
        "sweep {}: its report did not reach the client (it is stored: "
        "fabricctl map {})",
        id, id);
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the report could not be sent");
  }
  return grpc::Status::OK;
}

absl::StatusOr<sweep::Incremental> ControllerServiceImpl::NarrowToStale(
    const v1::SweepRequest& request, const std::vector<StoredNode>& registry) {
  ASSIGN_OR_RETURN(const auto known_good, store_->ListKnownGood({}));
  const absl::Time now = options_.now();
  std::vector<bool> online;
  for (const StoredNode& node : registry)
    online.push_back(NodeStateAt(node, now, options_.stale_after) == v1::NODE_ONLINE);
  return sweep::NarrowToStale(request, sweeps_->Config(), registry, known_good, online, now);
}

grpc::Status ControllerServiceImpl::StreamReport(grpc::ServerContext* context,
                                                 const v1::GetReportRequest* request,
                                                 grpc::ServerWriter<v1::ReportChunk>* writer) {
  if (auto s = Require(*context, Role::kOperator, "read a report"); !s.ok()) return s;
  if (request->sweep_id() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "sweep_id is negative");
  }
  auto report = store_->GetReport(request->sweep_id());
  if (!report.ok()) return ToGrpcStatus(report.status());
  if (!report::SendReportChunks(*report, report::kReportPartBytes,
                                [&](v1::ReportChunk c) { return writer->Write(c); })) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the report could not be sent");
  }
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetReport(grpc::ServerContext* context,
                                              const v1::GetReportRequest* request,
                                              v1::Report* response) {
  if (auto s = Require(*context, Role::kOperator, "read a report"); !s.ok()) return s;
  if (request->sweep_id() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "sweep_id is negative");
  }
  auto report = store_->GetReport(request->sweep_id());
  if (!report.ok()) return ToGrpcStatus(report.status());
  *response = *std::move(report);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListSweeps(grpc::ServerContext* context,
                                               const v1::ListSweepsRequest* request,
                                               v1::ListSweepsResponse* response) {
  if (auto s = Require(*context, Role::kOperator, "read the history"); !s.ok()) return s;
  if (request->before_sweep_id() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "before_sweep_id is negative");
  }
  uint32_t limit = request->limit() == 0 ? 20 : std::min<uint32_t>(request->limit(), 10000);
  auto sweeps = store_->ListSweeps(limit, request->before_sweep_id());
  if (!sweeps.ok()) return ToGrpcStatus(sweeps.status());
  // A page stays well inside a client's 4 MiB: a sweep's entry lists its nodes, and thousands
  // of sweeps of thousands of nodes would not. The rest is the next page's.
  size_t bytes = 0;
  for (auto& s : *sweeps) {
    bytes += s.ByteSizeLong();
    if (response->sweeps_size() > 0 && bytes > kListSweepsPageBytes) {
      response->set_next_before_sweep_id(response->sweeps(response->sweeps_size() - 1).sweep_id());
      return grpc::Status::OK;
    }
    *response->add_sweeps() = std::move(s);
  }
  if (sweeps->size() == limit && response->sweeps_size() > 0) {
    response->set_next_before_sweep_id(response->sweeps(response->sweeps_size() - 1).sweep_id());
  }
  return grpc::Status::OK;
}

}  // namespace fabricctl::controller
