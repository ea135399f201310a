#include "cli/nodes.h"

#include <algorithm>
#include <iomanip>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/exit_code.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"

namespace fabricctl::cli {
namespace {

absl::Time FromProto(const google::protobuf::Timestamp& t) {
  return absl::FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(t));
}

// The devices, then their firmware: one version ("fw 28.39.1002"), or each distinct one where
// they differ ("fw 28.39.1002/28.35.2000"), so that a node whose NICs disagree shows it.
std::string RdmaSummary(const v1::NodeInventory& inventory) {
  if (inventory.rdma_devices_size() == 0) return "none";
  std::vector<std::string> names, firmware;
  for (const auto& device : inventory.rdma_devices()) {
    names.push_back(device.name());
    if (!device.fw_ver().empty() &&
        std::find(firmware.begin(), firmware.end(), device.fw_ver()) == firmware.end())
      firmware.push_back(device.fw_ver());
  }
  std::string out = names.size() > 3
                        ? absl::StrCat(names.front(), "..", names.back(), " (", names.size(), ")")
                        : absl::StrJoin(names, ",");
  if (!firmware.empty()) absl::StrAppend(&out, " fw ", absl::StrJoin(firmware, "/"));
  return out;
}

// What a pass covered: "tcp_bw,tcp_lat x3" (the probe kinds, the peers), each rail's peers
// where it has rails ("rdma_write_bw rail0 x3 rail1 x2"); empty when not recorded.
std::string Coverage(const v1::KnownGood& k) {
  if (k.probes().empty()) return "";
  std::vector<std::string> kinds;
  for (int p : k.probes()) kinds.push_back(absl::AsciiStrToLower(v1::ProbeKind_Name(p)));
  std::string out = absl::StrJoin(kinds, ",");
  for (const v1::RailPass& r : k.rails())
    absl::StrAppend(&out, r.rail().empty() ? "" : absl::StrCat(" ", r.rail()), " x", r.peers());
  return out;
}

// "sweep 12, 3h ago, tcp_bw x3" while known-good; "lost 5m ago" after; "never" when no sweep
// passed it.
std::string KnownGoodSummary(const v1::NodeStatus& node, absl::Time now) {
  if (!node.has_known_good()) return "never";
  const v1::KnownGood& k = node.known_good();
  if (k.has_lost()) return absl::StrCat("lost ", FormatAge(now - FromProto(k.lost())));
  const std::string covered = Coverage(k);
  return absl::StrCat("sweep ", k.sweep_id(), ", ", FormatAge(now - FromProto(k.passed())),
                      covered.empty() ? "" : ", ", covered);
}

}  // namespace

std::string FormatAge(absl::Duration age) {
  if (age < absl::ZeroDuration()) age = absl::ZeroDuration();
  int64_t s = absl::ToInt64Seconds(age);
  if (s < 120) return absl::StrCat(s, "s ago");
  if (s < 2 * 3600) return absl::StrCat(s / 60, "m ago");
  if (s < 2 * 86400) return absl::StrCat(s / 3600, "h ago");
  return absl::StrCat(s / 86400, "d ago");
}

void RenderNodesText(const v1::ListNodesResponse& nodes, absl::Time now, std::ostream& out) {
  const std::vector<std::string> header = {"NODE",    "STATE", "LAST SEEN", "KNOWN-GOOD",
                                           "ADDRESS", "RDMA",  "GPUS",      "VERSION"};
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> lost;  // why each node that was known-good is no longer
  int stale = 0;
  for (const auto& node : nodes.nodes()) {
    const auto& inv = node.inventory();
    bool is_stale = node.state() == v1::NODE_STALE;
    stale += is_stale;
    if (node.known_good().has_lost()) {
      lost.push_back(absl::StrCat(inv.node_name(), ": ", node.known_good().lost_why()));
    }
    rows.push_back({inv.node_name(), is_stale ? "stale" : "online",
                    FormatAge(now - FromProto(node.last_seen())), KnownGoodSummary(node, now),
                    inv.agent_address(), RdmaSummary(inv),
                    inv.nccl_version().empty() || inv.gpus_size() == 0
                        ? absl::StrCat(inv.gpus_size())
                        : absl::StrCat(inv.gpus_size(), ", nccl ", inv.nccl_version()),
                    inv.agent_version()});
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) {
      out << row[c];
      if (c + 1 < row.size()) out << std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << "\n";
  };
  if (!rows.empty()) {
    print_row(header);
    for (const auto& row : rows) print_row(row);
  }
  int64_t stale_after = google::protobuf::util::TimeUtil::DurationToSeconds(nodes.stale_after());
  out << nodes.nodes_size() << (nodes.nodes_size() == 1 ? " node" : " nodes") << ": "
      << nodes.nodes_size() - stale << " online, " << stale << " stale (stale after " << stale_after
      << "s without a heartbeat)\n";
  for (const std::string& line : lost) out << "  no longer known-good: " << line << "\n";
}

std::string RenderNodesJson(const v1::ListNodesResponse& nodes) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  // A generated message always serialises; the status is OK by construction.
  (void)google::protobuf::util::MessageToJsonString(nodes, &json, options);
  return json;
}

int RunNodes(const NodesOptions& options, std::ostream& out, std::ostream& err) {
  if (options.format != "text" && options.format != "json") {
    err << "fabricctl nodes: --format: '" << options.format << "' is not text or json\n";
    return kExitUnknown;
  }
  auto stub = ConnectController(options.controller);
  if (!stub.ok()) {
    err << "fabricctl nodes: " << stub.status().message() << "\n";
    return kExitUnknown;
  }
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options.controller.timeout));
  v1::ListNodesRequest request;
  v1::ListNodesResponse response;
  grpc::Status status = (*stub)->ListNodes(&context, request, &response);
  if (!status.ok()) {
    err << "fabricctl nodes: " << DescribeRpcFailure(options.controller, status).message() << "\n";
    return kExitUnknown;
  }
  if (options.format == "json") {
    out << RenderNodesJson(response);
  } else {
    RenderNodesText(response, absl::Now(), out);
  }
  std::vector<std::string> stale;
  for (const auto& node : response.nodes()) {
    if (node.state() == v1::NODE_STALE) stale.push_back(node.inventory().node_name());
  }
  if (!stale.empty()) {
    err << "WARNING: " << stale.size() << " of " << response.nodes_size()
        << " nodes stale: " << absl::StrJoin(stale, ", ") << "\n";
    return kExitWarning;
  }
  return kExitOk;
}

int RunRemoveNodes(const NodesOptions& options, std::ostream& out, std::ostream& err) {
  auto stub = ConnectController(options.controller);
  if (!stub.ok()) {
    err << "fabricctl nodes remove: " << stub.status().message() << "\n";
    return kExitUnknown;
  }
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options.controller.timeout));
  v1::RemoveNodesRequest request;
  for (const auto& name : options.remove) request.add_names(name);
  v1::RemoveNodesResponse response;
  grpc::Status status = (*stub)->RemoveNodes(&context, request, &response);
  if (!status.ok()) {
    err << "fabricctl nodes remove: " << DescribeRpcFailure(options.controller, status).message()
        << "\n";
    return kExitUnknown;
  }
  std::vector<std::string> unknown;
  for (const auto& name : options.remove) {
    if (std::find(response.removed().begin(), response.removed().end(), name) ==
        response.removed().end()) {
      unknown.push_back(name);
    }
  }
  for (const auto& name : response.removed()) out << "removed " << name << "\n";
  if (!unknown.empty()) {
    err << "WARNING: not registered: " << absl::StrJoin(unknown, ", ") << "\n";
    return kExitWarning;
  }
  return kExitOk;
}

CLI::App* AddNodesCommand(CLI::App& app, NodesOptions* options) {
  CLI::App* nodes = app.add_subcommand("nodes", "list registered nodes and their state");
  nodes->add_option("--format", options->format, "text or json")->capture_default_str();
  CLI::App* remove = nodes->add_subcommand(
      "remove", "forget nodes (decommissioned or renamed); an agent still running registers again");
  remove->add_option("names", options->remove, "node names")->required();
  return nodes;
}

}  // namespace fabricctl::cli
