#include "report/render_acceptance.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "report/render_util.h"

namespace fabricctl::report {
namespace {

using internal::XmlEscape;

std::string Passes(const v1::Finding& f) {
  auto it = f.evidence().find("passes");
  return it == f.evidence().end() ? "" : absl::StrCat(" (", it->second, " passes)");
}

std::string Where(const v1::Finding& f) {
  std::string out = f.node();
  if (!f.peer().empty()) absl::StrAppend(&out, "~", f.peer());
  if (!f.rail().empty()) absl::StrAppend(&out, " on ", f.rail());
  return out;
}

void FindingLines(const google::protobuf::RepeatedPtrField<v1::Finding>& findings,
                  std::string& out) {
  for (const v1::Finding& f : findings) {
    absl::StrAppend(&out, "    ", f.kind(), " ", Where(f), Passes(f), ": ", f.detail(), "\n");
  }
}

std::string Text(const v1::Acceptance& a) {
  std::string out = absl::StrCat(
      "acceptance of ", a.nodes_size(), " node(s) against ",
      a.reference_nodes().empty() ? "no reference node" : absl::StrJoin(a.reference_nodes(), ","),
      a.reference_source().empty() ? "" : absl::StrCat(" (", a.reference_source(), ")"), ", ",
      a.sweep_ids_size(), " pass(es): sweep ", absl::StrJoin(a.sweep_ids(), ", "), "\n");
  if (!a.incomplete().empty()) absl::StrAppend(&out, "INCOMPLETE: ", a.incomplete(), "\n");
  int accepted = 0;
  for (const auto& node : a.nodes()) {
    accepted += node.accepted();
    std::vector<std::string> failed;
    for (const auto& check : node.checks()) {
      if (check.passed()) continue;
      std::vector<std::string> kinds;
      for (const v1::Finding& f : check.findings()) kinds.push_back(f.kind());
      failed.push_back(absl::StrCat(check.name(), " (", absl::StrJoin(kinds, ","), ")"));
    }
    absl::StrAppend(&out, node.node(), "  ", node.accepted() ? "accepted" : "REJECTED",
                    failed.empty() ? "" : absl::StrCat(": ", absl::StrJoin(failed, "; ")), "\n");
    for (const auto& check : node.checks()) FindingLines(check.findings(), out);
  }
  if (!a.shared_findings().empty()) {
    absl::StrAppend(&out, "shared with every reference node (the fleet's state, not failing):\n");
    FindingLines(a.shared_findings(), out);
  }
  if (!a.reference_findings().empty()) {
    absl::StrAppend(&out, "about the reference nodes:\n");
    FindingLines(a.reference_findings(), out);
  }
  if (!a.other_findings().empty()) {
    absl::StrAppend(&out, "about no single new node:\n");
    FindingLines(a.other_findings(), out);
  }
  absl::StrAppend(&out, accepted, " accepted, ", a.nodes_size() - accepted, " rejected\n");
  return out;
}

std::string Junit(const v1::Acceptance& a) {
  int tests = 0, failures = 0;
  std::string cases;
  for (const auto& node : a.nodes()) {
    for (const auto& check : node.checks()) {
      ++tests;
      absl::StrAppend(&cases, "    <testcase classname=\"fabricctl.accept.", XmlEscape(node.node()),
                      "\" name=\"", XmlEscape(check.name()), "\"");
      if (check.passed()) {
        absl::StrAppend(&cases, "/>\n");
        continue;
      }
      ++failures;
      std::vector<std::string> kinds, details;
      for (const v1::Finding& f : check.findings()) {
        kinds.push_back(f.kind());
        details.push_back(absl::StrCat(f.kind(), " ", Where(f), Passes(f), ": ", f.detail()));
      }
      absl::StrAppend(&cases, ">\n      <failure type=\"", XmlEscape(absl::StrJoin(kinds, ",")),
                      "\" message=\"", XmlEscape(absl::StrJoin(details, "; ")),
                      "\"/>\n    </testcase>\n");
    }
  }
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n",
                      "  <testsuite name=\"fabricctl accept\" tests=\"", tests, "\" failures=\"",
                      failures, "\" errors=\"", a.incomplete().empty() ? 0 : 1, "\">\n", cases,
                      "  </testsuite>\n</testsuites>\n");
}

}  // namespace

const std::vector<std::string>& AcceptanceFormats() {
  static const std::vector<std::string> formats = {"text", "json", "junit", "html"};
  return formats;
}

absl::StatusOr<std::string> RenderAcceptance(const v1::Acceptance& acceptance,
                                             const std::string& format) {
  if (format == "text") return Text(acceptance);
  if (format == "junit") return Junit(acceptance);
  if (format == "html") return internal::AcceptanceHtml(acceptance);
  if (format == "json") {
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;
    std::string json;
    if (auto s = google::protobuf::util::MessageToJsonString(acceptance, &json, options); !s.ok())
      return absl::InternalError(absl::StrCat("json: ", s.ToString()));
    return json;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", format, "' is not ", absl::StrJoin(AcceptanceFormats(), ", ")));
}

}  // namespace fabricctl::report
