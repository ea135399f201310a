#include "cli/history.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/exit_code.h"
#include "base/process.h"
#include "cli/output.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "proto/controller.grpc.pb.h"

namespace fabricctl::cli {
namespace {

// A listing as protobuf's JSON printer writes it, proto field names.
std::string Json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.preserve_proto_field_names = true;
  std::string text;
  (void)google::protobuf::util::MessageToJsonString(message, &text, json);
  return text;
}

std::string Utc(const google::protobuf::Timestamp& t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

// The first few of `items`, then how many more: a rack's names, or a long soak's passes, would
// run past a terminal's line.
template <typename Items>
std::string FirstFew(const Items& items) {
  constexpr int kShown = 8;
  const int n = items.size();
  std::string out = absl::StrJoin(items.begin(), items.begin() + std::min(n, kShown), ",");
  if (n > kShown) absl::StrAppend(&out, ",... (", n - kShown, " more)");
  return out;
}

// Up to `limit` acceptances, newest first, page by page (the controller keeps each page small).
absl::StatusOr<v1::ListAcceptancesResponse> FetchAcceptances(const ControllerTarget& controller,
                                                             uint32_t limit, bool with_verdicts) {
  auto stub = ConnectController(controller);
  if (!stub.ok()) return stub.status();
  v1::ListAcceptancesResponse all;
  int64_t before = 0;
  while (static_cast<uint32_t>(all.acceptances_size()) < limit) {
    grpc::ClientContext context;
    context.set_deadline(DeadlineAfter(controller.timeout));
    v1::ListAcceptancesRequest request;
    request.set_limit(limit - static_cast<uint32_t>(all.acceptances_size()));
    request.set_before_acceptance_id(before);
    request.set_with_verdicts(with_verdicts);
    v1::ListAcceptancesResponse page;
    grpc::Status status = (*stub)->ListAcceptances(&context, request, &page);
    if (!status.ok()) return DescribeRpcFailure(controller, status);
    for (auto& a : *page.mutable_acceptances()) *all.add_acceptances() = std::move(a);
    const int64_t next = page.next_before_acceptance_id();
    if (next <= 0 || page.acceptances_size() == 0 || (before != 0 && next >= before)) break;
    before = next;
  }
  return all;
}

// history's --format: text or json.
absl::Status TextOrJson(const std::string& format) {
  if (format == "text" || format == "json") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--format: '", format, "' is not text or json"));
}

}  // namespace

std::string FormatAcceptances(const v1::ListAcceptancesResponse& listed) {
  std::string out = absl::StrFormat("%-6s %-20s %-16s %s\n", "ID", "RECORDED", "BY", "VERDICT");
  for (const v1::AcceptanceRecord& r : listed.acceptances()) {
    std::string verdict = absl::StrCat("accepted ", r.accepted_size());
    if (!r.accepted().empty()) absl::StrAppend(&verdict, " (", FirstFew(r.accepted()), ")");
    absl::StrAppend(&verdict, ", rejected ", r.rejected_size());
    if (!r.rejected().empty()) absl::StrAppend(&verdict, " (", FirstFew(r.rejected()), ")");
    absl::StrAppend(&verdict, "; sweeps ",
                    r.sweep_ids().empty() ? std::string("none") : FirstFew(r.sweep_ids()));
    if (!r.incomplete().empty()) absl::StrAppend(&verdict, "; incomplete: ", r.incomplete());
    absl::StrAppendFormat(&out, "%-6d %-20s %-16s %s\n", r.acceptance_id(), Utc(r.recorded()),
                          r.recorded_by(), verdict);
  }
  return out;
}

int RunAcceptanceHistory(const ControllerTarget& controller, uint32_t limit,
                         const std::string& format, std::ostream& out, std::ostream& err) {
  if (auto s = TextOrJson(format); !s.ok()) return Fail(err, "history", s);
  auto listed = FetchAcceptances(controller, limit, /*with_verdicts=*/format == "json");
  if (!listed.ok()) return Fail(err, "history", listed.status());
  out << (format == "json" ? Json(*listed) : FormatAcceptances(*listed));
  return kExitOk;
}

int RunHistoryCommand(const ControllerTarget& controller, uint32_t limit, const std::string& format,
                      std::ostream& out, std::ostream& err) {
  if (auto s = TextOrJson(format); !s.ok()) return Fail(err, "history", s);
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
    out << Json(response);
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
    out << absl::StrFormat("%-6d %-11s %-20s %-8s %6d %8d %9s\n", s.sweep_id(),
                           absl::AsciiStrToLower(state), Utc(s.started()),
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
  out << "pruned " << response.sweeps() << " sweeps (" << response.results() << " results)";
  if (response.acceptances() > 0) out << " and " << response.acceptances() << " acceptances";
  out << "\n";
  return kExitOk;
}

CLI::App* AddHistoryCommand(CLI::App& app, HistoryOptions* options) {
  CLI::App* cmd =
      app.add_subcommand("history", "list recent sweeps; `history prune` deletes old ones");
  cmd->add_option("--limit", options->limit, "how many")->capture_default_str();
  cmd->add_option("--format", options->format, "text or json")->capture_default_str();
  cmd->add_flag("--acceptances", options->acceptances,
                "list the recorded acceptances (fabricctl accept) instead: who accepted which "
                "nodes, when, over which sweeps");
  options->prune = cmd->add_subcommand(
      "prune",
      "delete old sweeps and acceptances now, by the configuration's history.keep and "
      "history.keep_sweeps");
  options->prune->add_option(
      "--keep", options->keep,
      "delete sweeps that started longer ago than this (30d, 12h; 0: none by age)");
  options->prune->add_option("--keep-sweeps", options->keep_sweeps,
                             "keep at most this many sweeps, the newest (0: no limit by count)");
  return cmd;
}

}  // namespace fabricctl::cli
