#include "cli/accept.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/exit_code.h"
#include "base/hostlist.h"
#include "base/process.h"
#include "base/status_macros.h"
#include "cli/acceptance.h"
#include "cli/controller_client.h"
#include "cli/output.h"
#include "google/protobuf/util/time_util.h"
#include "report/render_acceptance.h"

namespace fabricctl::cli {
namespace {

using google::protobuf::util::TimeUtil;

// The most passes a burn-in may run (--repeat's, and a soak's at most too: the controller
// records an acceptance of at most as many), and the longest soak.
constexpr uint32_t kMaxPasses = 1000;
constexpr absl::Duration kMaxSoak = absl::Hours(7 * 24);

// The references: --reference's nodes, none with --reference none, else chosen from the
// registry (AutoReferences), at least kMinReferences either way but "none".
absl::StatusOr<std::vector<std::string>> References(const AcceptOptions& o,
                                                    const std::vector<std::string>& new_nodes,
                                                    const v1::ListNodesResponse& registry,
                                                    std::string& source, std::ostream& err) {
  if (o.reference == "none") {
    source = "none";
    return std::vector<std::string>{};
  }
  std::vector<std::string> refs;
  if (!o.reference.empty()) {
    ASSIGN_OR_RETURN(refs, ExpandHostlist(o.reference, "--reference"));
    std::vector<std::string> warnings;
    RETURN_IF_ERROR(CheckReferences(refs, new_nodes, registry, &warnings));
    for (const std::string& w : warnings) err << "fabricctl accept: warning: " << w << "\n";
    source = "--reference";
  } else {
    refs = AutoReferences(new_nodes, registry, o.placed);
    source = "known-good";
  }
  if (refs.size() < kMinReferences) {
    return absl::FailedPreconditionError(absl::StrCat(
        refs.size(), " reference node(s) (", source, ": ",
        refs.empty() ? "none" : absl::StrJoin(refs, ","), "); at least ", kMinReferences,
        " are needed to judge new nodes against the fleet: name them with --reference, or "
        "judge the new nodes only among themselves with --reference none"));
  }
  return refs;
}

// A burn-in's passes: how many (--repeat), or for how long (--soak), and whom they judge.
struct BurnIn {
  uint32_t repeat = 0;
  absl::Duration soak;
  absl::Time start;
  std::vector<std::string> nodes, references;

  // Whether another pass starts: --repeat's count, else until --soak has gone, else one.
  bool Another(size_t done) const {
    if (repeat > 0) return done < repeat;
    if (soak > absl::ZeroDuration()) {
      return done == 0 || (done < kMaxPasses && absl::Now() - start < soak);
    }
    return done == 0;
  }

  // "pass 2 of 3" or "pass 2, 1h0m of the soak left", and the new nodes failed so far.
  void Progress(const std::vector<v1::Report>& reports, std::ostream& err) const {
    err << "fabricctl accept: pass " << reports.size() + 1;
    if (repeat > 0) err << " of " << repeat;
    if (soak > absl::ZeroDuration()) {
      err << ", "
          << absl::FormatDuration(absl::Trunc(
                 std::max(soak - (absl::Now() - start), absl::ZeroDuration()), absl::Seconds(1)))
          << " of the soak left";
    }
    if (!reports.empty()) {
      const v1::SweepInfo& last = reports.back().sweep();
      err << "; sweep " << last.sweep_id() << " (pass " << reports.size()
          << "): " << v1::Severity_Name(last.worst_severity()) << ", " << last.findings_count()
          << " finding(s)";
    }
    err << "\n";
  }
};

// The passes, each a sweep; the first that gives no verdict ends them, its reason in
// `incomplete`.
std::vector<v1::Report> RunPasses(v1::ControllerService::Stub& stub,
                                  const v1::SweepRequest& request, const AcceptOptions& o,
                                  const BurnIn& burn_in, std::string& incomplete,
                                  std::ostream& err) {
  std::vector<v1::Report> reports;
  while (burn_in.Another(reports.size())) {
    burn_in.Progress(reports, err);
    bool started = false;
    auto report = StreamSweep(stub, request, o.sweep, err, started);
    if (!report.ok()) {
      incomplete = absl::StrCat("pass ", reports.size() + 1, ": ", report.status().message());
      break;
    }
    reports.push_back(*std::move(report));
  }
  if (burn_in.repeat == 0 && reports.size() >= kMaxPasses) {
    err << "fabricctl accept: the soak stopped at " << kMaxPasses
        << " passes, the most one acceptance holds\n";
  }
  return reports;
}

// Records the acceptance in the controller's history: the controller judges the new nodes over
// the stored reports of its sweeps (controller/verdict/acceptance.h) and adds who and when.
// Its id, and the acceptance as judged.
absl::StatusOr<v1::RecordAcceptanceResponse> RecordAcceptance(v1::ControllerService::Stub& stub,
                                                              const ControllerTarget& controller,
                                                              const v1::Acceptance& asked) {
  v1::RecordAcceptanceRequest request;
  *request.mutable_acceptance() = asked;
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(controller.timeout));
  v1::RecordAcceptanceResponse response;
  grpc::Status status = stub.RecordAcceptance(&context, request, &response);
  if (!status.ok()) return DescribeRpcFailure(controller, status);
  return response;
}

// What was asked and run, for the controller to judge: the nodes, references, passes and times.
v1::Acceptance Asked(const std::vector<std::string>& new_nodes, const BurnIn& burn_in,
                     const std::string& source, const std::vector<v1::Report>& reports,
                     const std::string& incomplete) {
  v1::Acceptance asked;
  for (const std::string& name : new_nodes) asked.add_nodes()->set_node(name);
  for (const std::string& r : burn_in.references) asked.add_reference_nodes(r);
  asked.set_reference_source(source);
  asked.set_incomplete(incomplete);
  for (const v1::Report& r : reports) asked.add_sweep_ids(r.sweep().sweep_id());
  *asked.mutable_started() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(burn_in.start));
  *asked.mutable_duration() =
      TimeUtil::MillisecondsToDuration(absl::ToInt64Milliseconds(absl::Now() - burn_in.start));
  return asked;
}

// The acceptance as the controller judged and recorded it; when it could not (unreachable, its
// store down, a pass's sweep pruned), no verdict: every node unaccepted, exit 3, and why.
v1::Acceptance Judged(v1::ControllerService::Stub& stub, const ControllerTarget& controller,
                      v1::Acceptance asked, std::ostream& err) {
  auto recorded = RecordAcceptance(stub, controller, asked);
  if (recorded.ok()) {
    err << "fabricctl accept: recorded as acceptance " << recorded->acceptance_id()
        << " (fabricctl history --acceptances)\n";
    return recorded->acceptance();
  }
  const std::string why = absl::StrCat("not judged: the controller did not record the acceptance: ",
                                       recorded.status().message());
  err << "fabricctl accept: " << why << "\n";
  asked.set_incomplete(asked.incomplete().empty() ? why
                                                  : absl::StrCat(asked.incomplete(), "; ", why));
  asked.set_exit_code(kExitUnknown);
  return asked;
}

}  // namespace

int RunAcceptCommand(AcceptOptions o, const AcceptFlags& flags, std::ostream& err) {
  const std::string cmd = "accept";
  auto fail = [&](const absl::Status& s) { return Fail(err, cmd, s); };
  const auto& formats = report::AcceptanceFormats();
  if (std::find(formats.begin(), formats.end(), o.format) == formats.end()) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--format: '", o.format, "' is not ", absl::StrJoin(formats, ", "))));
  }
  if (auto s = CheckOutput(o.output); !s.ok()) return fail(s);
  if (flags.nodes.empty()) return fail(absl::InvalidArgumentError("--nodes: the new nodes"));
  if (o.repeat > kMaxPasses) {
    return fail(absl::InvalidArgumentError(absl::StrCat("--repeat: at most ", kMaxPasses)));
  }
  if (o.repeat > 0 && !o.soak.empty())
    return fail(absl::InvalidArgumentError("--repeat and --soak: give one of them"));
  absl::Duration soak = absl::ZeroDuration();
  if (!o.soak.empty()) {
    auto d = ParsePositiveDuration(o.soak, "--soak");
    if (!d.ok()) return fail(d.status());
    if (*d > kMaxSoak) return fail(absl::InvalidArgumentError("--soak: at most 168h"));
    soak = *d;
  }
  auto timeout = ParsePositiveDuration(flags.timeout, "--sweep-timeout");
  if (!timeout.ok()) return fail(timeout.status());
  o.sweep.sweep_timeout = *timeout;
  o.sweep.nodes = flags.nodes;
  auto request = BuildSweepRequest(o.sweep);
  if (!request.ok()) return fail(request.status());
  const std::vector<std::string> new_nodes(request->nodes().begin(), request->nodes().end());
  auto stub = ConnectController(o.sweep.controller);
  if (!stub.ok()) return fail(stub.status());
  auto registry = ListRegistry(**stub, o.sweep.controller, {});
  if (!registry.ok()) return fail(registry.status());
  std::string source;
  auto refs = References(o, new_nodes, *registry, source, err);
  if (!refs.ok()) return fail(refs.status());
  for (const std::string& r : *refs) {
    request->add_nodes(r);
    request->add_reference_nodes(r);
  }
  request->set_audits(true);
  // Every new node must meet two references or more: full pairing, unless --pairing says else
  // (a node that then meets fewer is insufficient_data, not passed).
  if (o.sweep.pairing.empty()) request->set_pairing(v1::PAIRING_FULL);
  err << "fabricctl accept: " << absl::StrJoin(new_nodes, ",") << " against "
      << (refs->empty() ? "no reference (among themselves)" : absl::StrJoin(*refs, ",")) << "\n";

  const BurnIn burn_in{o.repeat, soak, absl::Now(), new_nodes, *refs};
  std::string incomplete;
  const std::vector<v1::Report> reports = RunPasses(**stub, *request, o, burn_in, incomplete, err);
  if (!incomplete.empty()) err << "fabricctl accept: " << incomplete << "\n";
  v1::Acceptance acceptance = Judged(**stub, o.sweep.controller,
                                     Asked(new_nodes, burn_in, source, reports, incomplete), err);
  auto rendered = report::RenderAcceptance(acceptance, o.format);
  if (!rendered.ok()) return fail(rendered.status());
  if (auto s = WriteOutput(o.output, *rendered); !s.ok()) return fail(s);
  return static_cast<int>(acceptance.exit_code());
}

CLI::App* AddAcceptCommand(CLI::App& app, AcceptOptions* options, AcceptFlags* flags) {
  CLI::App* cmd = app.add_subcommand(
      "accept",
      "judge new nodes (a rack) against known-good nodes of the fleet: configuration, cabling, "
      "fabric, with a burn-in (exit 0 only when every new node is accepted)");
  cmd->add_option("--nodes", flags->nodes, "the new nodes, a Slurm hostlist (rack7-[01-32])")
      ->required();
  cmd->add_option("--reference", options->reference,
                  "the nodes to judge them against, a hostlist (at least 2); none: the new "
                  "nodes only among themselves; default: up to 4 known-good online nodes, those "
                  "sharing a label with the new nodes first");
  cmd->add_option("--repeat", options->repeat, "burn-in: this many passes");
  cmd->add_option("--soak", options->soak,
                  "burn-in: passes back to back until this long has gone (30m, 8h)");
  cmd->add_option("--pairing", options->sweep.pairing,
                  "each pass's pairing: full, quick, sample, topology or file:PATH");
  cmd->add_option("--probes", options->sweep.probes,
                  "comma-separated probes (default: the controller's, tcp_bw,tcp_lat)");
  cmd->add_option("--duration", options->sweep.duration,
                  "time per size of the bandwidth probes and tcp_lat (4 = 4s, 500ms)");
  cmd->add_option("--wait", options->sweep.wait,
                  "queue behind a sweep already running for up to this long (at most 1h)");
  cmd->add_option("--format", options->format, "text, json, junit or html")->capture_default_str();
  cmd->add_option("--output", options->output, "write the acceptance here (default stdout)");
  cmd->add_option("--sweep-timeout", flags->timeout, "deadline of each pass's sweep")
      ->capture_default_str();
  return cmd;
}

}  // namespace fabricctl::cli
