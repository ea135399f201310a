#include "controller/service.h"

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/grpc_status.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "base/tls.h"
#include "google/protobuf/util/time_util.h"

namespace fabricctl::controller {
namespace {

using google::protobuf::util::TimeUtil;

constexpr size_t kMaxNameLength = 253;  // a DNS name
constexpr int kMaxInterfaces = 1024;
constexpr int kMaxAddressesPerInterface = 64;
constexpr int kMaxRdmaDevices = 256;
constexpr int kMaxPortsPerDevice = 16;
constexpr int kMaxGpus = 64;
constexpr int kMaxLabels = 64;
constexpr int kMaxListNames = 100000;
constexpr size_t kMaxInventoryString = 4096;

absl::Status ValidateNodeName(const std::string& name, const std::string& field) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is longer than ", kMaxNameLength, " characters"));
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", name, "' may hold only letters, digits, '-', '.' and '_'"));
    }
  }
  return absl::OkStatus();
}

// Every string of a message (nested messages, repeated fields and map entries included) at
// most `max_length` bytes; the error names the field's path.
absl::Status BoundStrings(const google::protobuf::Message& message, size_t max_length,
                          const std::string& path) {
  const auto* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    const std::string where = absl::StrCat(path, ".", field->name());
    const int n = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < n; ++i) {
      if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
        std::string scratch;
        const std::string& value =
            field->is_repeated() ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                                 : reflection->GetStringReference(message, field, &scratch);
        if (value.size() > max_length) {
          return absl::InvalidArgumentError(absl::StrCat(where, " is ", value.size(),
                                                         " bytes long; at most ", max_length));
        }
      } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
        const auto& child = field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                                 : reflection->GetMessage(message, field);
        if (auto s = BoundStrings(child, max_length, where); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

google::protobuf::Timestamp ToProto(absl::Time t) {
  return TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(t));
}

}  // namespace

absl::Status ValidateInventory(const v1::NodeInventory& inventory) {
  if (auto s = ValidateNodeName(inventory.node_name(), "inventory.node_name"); !s.ok()) return s;
  // No field of an inventory needs more than a path's length; the registry keeps it whole.
  if (auto s = BoundStrings(inventory, kMaxInventoryString, "inventory"); !s.ok()) return s;
  if (auto a = ParseHostPort(inventory.agent_address(), "inventory.agent_address"); !a.ok()) {
    return a.status();
  } else if (a->port == 0) {
    return absl::InvalidArgumentError("inventory.agent_address: port 0 cannot be dialled");
  }
  auto bound = [](int size, int max, const char* field) {
    return size <= max ? absl::OkStatus()
                       : absl::InvalidArgumentError(
                             absl::StrCat(field, " has ", size, " entries; at most ", max));
  };
  for (auto s : {bound(inventory.interfaces_size(), kMaxInterfaces, "inventory.interfaces"),
                 bound(inventory.rdma_devices_size(), kMaxRdmaDevices, "inventory.rdma_devices"),
                 bound(inventory.gpus_size(), kMaxGpus, "inventory.gpus"),
                 bound(static_cast<int>(inventory.labels_size()), kMaxLabels, "inventory.labels")}) {
    if (!s.ok()) return s;
  }
  for (const auto& itf : inventory.interfaces()) {
    if (auto s = bound(itf.addresses_size(), kMaxAddressesPerInterface,
                       "inventory.interfaces.addresses");
        !s.ok()) {
      return s;
    }
  }
  for (const auto& dev : inventory.rdma_devices()) {
    if (auto s = bound(dev.ports_size(), kMaxPortsPerDevice, "inventory.rdma_devices.ports");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

v1::NodeState NodeStateAt(const StoredNode& node, absl::Time now, absl::Duration stale_after) {
  return now - node.last_seen > stale_after ? v1::NODE_STALE : v1::NODE_ONLINE;
}

ControllerServiceImpl::ControllerServiceImpl(Store* store, RegistryOptions options,
                                             SweepRunner* sweeps)
    : store_(store), options_(std::move(options)), sweeps_(sweeps) {}

grpc::Status ControllerServiceImpl::Register(grpc::ServerContext* context,
                                       const v1::RegisterRequest* request,
                                       v1::RegisterResponse* response) {
  const auto& inventory = request->inventory();
  if (auto s = ValidateInventory(inventory); !s.ok()) return ToGrpcStatus(s);
  // Under mutual TLS a node registers only under a name its certificate carries: any other
  // certificate of the cluster cannot take its place in the registry.
  if (auto s = RequirePeerIdentity(*context, inventory.node_name(),
                                   "a node registers only under a name its certificate carries");
      !s.ok()) {
    Logger("registry")->warn("registration refused: {}", s.error_message());
    return s;
  }
  if (auto s = store_->UpsertNode(inventory, options_.now()); !s.ok()) return ToGrpcStatus(s);
  Logger("registry")->info("node {} registered from {} ({} RDMA devices, {} GPUs)",
                           inventory.node_name(), inventory.agent_address(),
                           inventory.rdma_devices_size(), inventory.gpus_size());
  *response->mutable_heartbeat_interval() = TimeUtil::MicrosecondsToDuration(
      absl::ToInt64Microseconds(options_.heartbeat_interval));
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::Heartbeat(grpc::ServerContext* context,
                                        const v1::HeartbeatRequest* request,
                                        v1::HeartbeatResponse* response) {
  if (auto s = ValidateNodeName(request->node_name(), "node_name"); !s.ok()) return ToGrpcStatus(s);
  if (auto s = RequirePeerIdentity(*context, request->node_name(),
                                   "a node heartbeats only under a name its certificate carries");
      !s.ok()) {
    return s;
  }
  auto known = store_->TouchNode(request->node_name(), options_.now());
  if (!known.ok()) return ToGrpcStatus(known.status());
  response->set_known(*known);
  return grpc::Status::OK;
}

void ControllerServiceImpl::ForgetExpired() {
  if (options_.forget_after <= absl::ZeroDuration()) return;
  auto forgotten = store_->ForgetNodesSeenBefore(options_.now() - options_.forget_after);
  if (forgotten.ok() && !forgotten->empty()) {
    Logger("registry")->info("forgot {} node(s) silent for over {}: {}", forgotten->size(),
                             absl::FormatDuration(options_.forget_after),
                             absl::StrJoin(*forgotten, ", "));
  }
}

grpc::Status ControllerServiceImpl::RemoveNodes(grpc::ServerContext* context,
                                          const v1::RemoveNodesRequest* request,
                                          v1::RemoveNodesResponse* response) {
  if (request->names().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "names: name at least one node");
  }
  if (request->names_size() > kMaxListNames) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("names has ", request->names_size(), " entries; at most ",
                                     kMaxListNames));
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
  ForgetExpired();
  if (request->names_size() > kMaxListNames) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("names has ", request->names_size(), " entries; at most ",
                                     kMaxListNames));
  }
  std::vector<std::string> names(request->names().begin(), request->names().end());
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
  *response->mutable_stale_after() =
      TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(options_.stale_after));
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::Sweep(grpc::ServerContext* context,
                                          const v1::SweepRequest* request,
                                          grpc::ServerWriter<v1::SweepEvent>* writer) {
  if (sweeps_ == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this controller runs no sweeps");
  }
  if (request->nodes_size() > kMaxListNames) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("nodes has ", request->nodes_size(), " entries; at most ",
                                     kMaxListNames));
  }
  for (const auto& name : request->nodes()) {
    if (auto s = ValidateNodeName(name, "nodes"); !s.ok()) return ToGrpcStatus(s);
  }
  if (const std::string& b = request->allreduce_backend();
      !b.empty() && b != "auto" && b != "nccl" && b != "rdma" && b != "tcp") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "allreduce_backend: '" + b.substr(0, 64) + "' is none of auto, nccl, rdma, tcp");
  }
  if (request->allreduce_group_by().size() > 253) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "allreduce_group_by is longer than 253");
  }
  if (request->wait().seconds() < 0 || request->wait().nanos() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "wait is negative");
  }
  if (request->pairing_file().size() > (1 << 20)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "pairing_file is larger than 1 MiB");
  }
  ForgetExpired();
  auto registry = store_->ListNodes({});
  if (!registry.ok()) return ToGrpcStatus(registry.status());
  // Every registered node, stale ones included: a default sweep that left a silent node out
  // would pass a cluster with a dead node in it; they are asked once and reported
  // node_unreachable (`fabricctl nodes remove` forgets a decommissioned one).
  std::vector<StoredNode> nodes = *std::move(registry);
  // A client that goes away (Ctrl-C, a killed Slurm prolog) or stops reading (a write fails)
  // cancels its sweep.
  std::atomic<bool> write_failed{false};
  auto report = sweeps_->Run(
      *request, nodes,
      [&](const v1::SweepEvent& event) {
        if (!writer->Write(event)) write_failed = true;
      },
      [&] { return write_failed || context->IsCancelled(); });
  if (!report.ok()) return ToGrpcStatus(report.status());
  v1::SweepEvent last;
  *last.mutable_report() = *std::move(report);
  writer->Write(last);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetReport(grpc::ServerContext* context,
                                              const v1::GetReportRequest* request,
                                              v1::Report* response) {
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
  uint32_t limit = request->limit() == 0 ? 20 : std::min<uint32_t>(request->limit(), 10000);
  auto sweeps = store_->ListSweeps(limit);
  if (!sweeps.ok()) return ToGrpcStatus(sweeps.status());
  for (auto& s : *sweeps) *response->add_sweeps() = std::move(s);
  return grpc::Status::OK;
}

}  // namespace fabricctl::controller
