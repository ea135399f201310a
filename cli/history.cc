#include "cli/history.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "cli/output.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "proto/controller.grpc.pb.h"

namespace fabricctl::cli {

int RunHistoryCommand(const ControllerTarget& controller, uint32_t limit, const std::string& format,
                      std::ostream& out, std::ostream& err) {
  if (format != "text" && format != "json") {
    return Fail(
        err, "history",
        absl::InvalidArgumentError(absl::StrCat("--format: '", format, "' is not text or json")));
  }
  auto stub = ConnectController(controller);
  if (!stub.ok()) return Fail(err, "history", stub.status());
  // Page by page (the controller keeps each page small) until `limit` sweeps or the oldest.
  v1::ListSweepsResponse response;
  int64_t before = 0;
  while (static_cast<uint32_t>(response.sweeps_size()) < limit) {
    grpc::ClientContext context;
    context.set_deadline(DeadlineAfter(controller.timeout));
    v1::ListSweepsRequest request;
    request.set_limit(limit - static_cast<uint32_t>(response.sweeps_size()));
    request.set_before_sweep_id(before);
    v1::ListSweepsResponse page;
    grpc::Status status = (*stub)->ListSweeps(&context, request, &page);
    if (!status.ok()) return Fail(err, "history", DescribeRpcFailure(controller, status));
    for (auto& s : *page.mutable_sweeps()) *response.add_sweeps() = std::move(s);
    if (page.next_before_sweep_id() <= 0 || page.sweeps_size() == 0 ||
        (before != 0 && page.next_before_sweep_id() >= before)) {
      break;
    }
    before = page.next_before_sweep_id();
  }
  if (format == "json") {
    google::protobuf::util::JsonPrintOptions json;
    json.add_whitespace = true;
    json.preserve_proto_field_names = true;
    std::string text;
    (void)google::protobuf::util::MessageToJsonString(response, &text, json);
    out << text;
    return kExitOk;
  }
  out << absl::StrFormat("%-6s %-11s %-20s %-8s %6s %8s %9s\n", "SWEEP", "STATE", "STARTED",
                         "PAIRING", "NODES", "FINDINGS", "WORST");
  for (const auto& s : response.sweeps()) {
    std::string state = v1::SweepState_Name(s.state()).substr(6);  // SWEEP_
    std::string pairing =
        s.pairing() == v1::PAIRING_UNSPECIFIED ? "-" : v1::Pairing_Name(s.pairing()).substr(8);
    std::string worst =
        s.state() == v1::SWEEP_COMPLETED ? v1::Severity_Name(s.worst_severity()).substr(9) : "-";
    out << absl::StrFormat(
        "%-6d %-11s %-20s %-8s %6d %8d %9s\n", s.sweep_id(), absl::AsciiStrToLower(state),
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(s.started().seconds()),
                         absl::UTCTimeZone()),
        absl::AsciiStrToLower(pairing), s.nodes_size(), s.findings_count(),
        absl::AsciiStrToLower(worst));
  }
  return kExitOk;
}

int RunPruneHistory(const ControllerTarget& controller, const HistoryOptions& options,
                    std::ostream& out, std::ostream& err) {
  v1::PruneHistoryRequest request;
  if (!options.keep.empty()) {
    absl::Duration keep = absl::ZeroDuration();
    if (options.keep != "0" && options.keep != "0s") {
      auto parsed = ParsePositiveDuration(options.keep, "--keep");
      if (!parsed.ok()) return Fail(err, "history prune", parsed.status());
      keep = *parsed;
    }
    *request.mutable_keep() =
        google::protobuf::util::TimeUtil::SecondsToDuration(absl::ToInt64Seconds(keep));
  }
  if (options.keep_sweeps) request.set_keep_sweeps(*options.keep_sweeps);
  auto stub = ConnectController(controller);
  if (!stub.ok()) return Fail(err, "history prune", stub.status());
  grpc::ClientContext context;
  // Deleting a large history takes a while: a minute's deadline beyond the usual.
  context.set_deadline(DeadlineAfter(controller.timeout + absl::Minutes(1)));
  v1::PruneHistoryResponse response;
  grpc::Status status = (*stub)->PruneHistory(&context, request, &response);
  if (!status.ok()) return Fail(err, "history prune", DescribeRpcFailure(controller, status));
  out << "pruned " << response.sweeps() << " sweeps (" << response.results() << " results)\n";
  return kExitOk;
}

CLI::App* AddHistoryCommand(CLI::App& app, HistoryOptions* options) {
  CLI::App* cmd =
      app.add_subcommand("history", "list recent sweeps; `history prune` deletes old ones");
  cmd->add_option("--limit", options->limit, "how many")->capture_default_str();
  cmd->add_option("--format", options->format, "text or json")->capture_default_str();
  options->prune = cmd->add_subcommand(
      "prune",
      "delete old sweeps now, by the configuration's history.keep and history.keep_sweeps");
  options->prune->add_option(
      "--keep", options->keep,
      "delete sweeps that started longer ago than this (30d, 12h; 0: none by age)");
  options->prune->add_option("--keep-sweeps", options->keep_sweeps,
                             "keep at most this many sweeps, the newest (0: no limit by count)");
  return cmd;
}

}  // namespace fabricctl::cli
