#include "report/render_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "google/protobuf/util/time_util.h"

namespace fabricctl::report::internal {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string SeverityName(v1::Severity s) {
  switch (s) {
    case v1::SEVERITY_CRITICAL:
      return "CRITICAL";
    case v1::SEVERITY_WARNING:
      return "WARNING";
    default:
      return "OK";
  }
}

std::string SeverityLabel(v1::Severity s) { return Lower(SeverityName(s)); }

std::string ActionName(v1::Action a) {
  switch (a) {
    case v1::ACTION_DRAIN:
      return "drain";
    case v1::ACTION_INVESTIGATE:
      return "investigate";
    default:
      return "none";
  }
}

std::string StatusName(v1::HealthStatus s) {
  switch (s) {
    case v1::HEALTH_OK:
      return "ok";
    case v1::HEALTH_WARNING:
      return "warning";
    case v1::HEALTH_CRITICAL:
      return "critical";
    default:
      return "unknown";
  }
}

std::string ProbeName(int kind) {
  return Lower(v1::ProbeKind_Name(static_cast<v1::ProbeKind>(kind)));
}

double Seconds(const google::protobuf::Duration& d) {
  return static_cast<double>(google::protobuf::util::TimeUtil::DurationToMilliseconds(d)) / 1000.0;
}

std::string When(const google::protobuf::Timestamp& t) {
  if (t.seconds() <= 0) return "";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

std::string Title(const v1::Report& report) {
  if (report.source() == "check" && report.health().nodes_size() == 1) {
    return absl::StrCat("fabricctl check ", report.health().nodes(0).node());
  }
  if (report.source() == "sweep" || report.has_sweep()) {
    return absl::StrCat("fabricctl sweep ", report.sweep().sweep_id());
  }
  return absl::StrCat("fabricctl ", report.source());
}

std::string HeadlineProbe(const v1::Report& report) {
  for (int kind : report.sweep().probes()) {
    std::string name = ProbeName(kind);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, "_bw") == 0) return name;
  }
  return "";
}

std::vector<std::string> RailsOf(const v1::Report& report) {
  if (report.health().rails().empty()) return {""};
  return {report.health().rails().begin(), report.health().rails().end()};
}

PairIndex IndexPairs(const v1::Report& report, const std::string& rail) {
  PairIndex index;
  for (const auto& p : report.health().pairs()) {
    if (p.rail() != rail) continue;
    index[{p.node(), p.peer()}] = &p;
    index[{p.peer(), p.node()}] = &p;
  }
  return index;
}

double DirectedBw(const v1::PairHealth& pair, const std::string& from) {
  if (from == pair.peer() && pair.has_bw_reverse_gbps()) return pair.bw_reverse_gbps();
  return pair.has_bw_gbps() ? pair.bw_gbps() : std::nan("");
}

const v1::PairHealth* FindPair(const PairIndex& index, const std::string& node,
                               const std::string& peer) {
  auto it = index.find({node, peer});
  return it == index.end() ? nullptr : it->second;
}

std::string XmlEscape(const std::string& text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&apos;"}});
}

}  // namespace fabricctl::report::internal
