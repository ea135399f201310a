#ifndef FABRICCTL_REPORT_RENDER_UTIL_H_
#define FABRICCTL_REPORT_RENDER_UTIL_H_

// What the renderers (render_*.cc) share: names of enum values as the formats spell them, the
// report's title, the headline probe and pair lookup. Private to //report:render.

#include <map>
#include <string>
#include <utility>

#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::report::internal {

// "CRITICAL", "WARNING" or "OK".
std::string SeverityName(v1::Severity s);
// "critical", "warning" or "ok": a CSS class, a Prometheus label value.
std::string SeverityLabel(v1::Severity s);
// "drain", "investigate" or "none".
std::string ActionName(v1::Action a);
// "ok", "warning", "critical" or "unknown".
std::string StatusName(v1::HealthStatus s);
// A ProbeKind in lower case ("tcp_bw").
std::string ProbeName(int kind);
double Seconds(const google::protobuf::Duration& d);
// "2024-05-01 12:00:00 UTC"; "" when unset.
std::string When(const google::protobuf::Timestamp& t);

// "fabricctl check NODE", "fabricctl sweep ID" or "fabricctl SOURCE".
std::string Title(const v1::Report& report);
// The bandwidth probe the heat map shows: the first bandwidth probe of the sweep ("" if none).
std::string HeadlineProbe(const v1::Report& report);

// Pair lookup by node names, in either order.
using PairIndex = std::map<std::pair<std::string, std::string>, const v1::PairHealth*>;
// The pairs of one rail ("" without rails), both ways round.
PairIndex IndexPairs(const v1::Report& report, const std::string& rail = "");
// The rails of a report's health map, or one unnamed rail without rails.
std::vector<std::string> RailsOf(const v1::Report& report);
// The pair of `node` and `peer` in either order; nullptr when it was not measured.
// The pair's bandwidth from `from` to the other end: bw_gbps from its node, bw_reverse_gbps
// from its peer (the forward figure where the reverse was not measured); NaN when none.
double DirectedBw(const v1::PairHealth& pair, const std::string& from);

const v1::PairHealth* FindPair(const PairIndex& index, const std::string& node,
                               const std::string& peer);

// The HTML report's maps, each with its legend: pair status; bandwidth on a colour scale up to
// the fabric's median. Unreachable nodes are marked on both (render_html_map.cc).
// The most cells (ordered pairs) a whole-fleet HTML map draws; larger sweeps are drawn leaf
// by leaf (about 3 MB for 1,000 nodes in leaves of 32, fully measured).
inline constexpr int kMaxHtmlMapCells = 20000;
std::string StatusMapHtml(const v1::Report& report);
std::string BandwidthMapHtml(const v1::Report& report);

// Escapes the five XML special characters (for XML and HTML text and attributes).
std::string XmlEscape(const std::string& text);

// `fabricctl accept --format html`: one self-contained page (render_acceptance_html.cc).
std::string AcceptanceHtml(const v1::Acceptance& acceptance);

}  // namespace fabricctl::report::internal

#endif  // FABRICCTL_REPORT_RENDER_UTIL_H_
