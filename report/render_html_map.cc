// The HTML report's two node x node maps (SVG): pair status, and bandwidth on a colour scale
// against the fabric's median; with their legends. Unreachable nodes are marked on both.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/group_matrix.h"
#include "report/render_util.h"

namespace fabricctl::report::internal {
namespace {

const char* StatusFill(v1::HealthStatus s) {
  switch (s) {
    case v1::HEALTH_OK:
      return "#3a9d5d";
    case v1::HEALTH_WARNING:
      return "#e0a526";
    case v1::HEALTH_CRITICAL:
      return "#d64545";
    default:
      return "#9a9a9a";
  }
}

constexpr const char* kUnreachableFill = "#5b5b5b";
constexpr const char* kUnmeasuredFill = "#ffffff";

// Red at 0, amber at half the median, green at the median and above.
std::string BandwidthFill(double bw, double median) {
  const double t = median > 0 ? std::clamp(bw / median, 0.0, 1.0) : 1.0;
  auto mix = [](int a, int b, double f) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  int r, g, b;
  if (t < 0.5) {
    const double f = t / 0.5;
    r = mix(0xd6, 0xe0, f), g = mix(0x45, 0xa5, f), b = mix(0x45, 0x26, f);
  } else {
    const double f = (t - 0.5) / 0.5;
    r = mix(0xe0, 0x3a, f), g = mix(0xa5, 0x9d, f), b = mix(0x26, 0x5d, f);
  }
  return absl::StrFormat("#%02x%02x%02x", r, g, b);
}

// Why each unreachable node is (its node_unreachable finding), by node.
std::map<std::string, std::string> Unreachable(const v1::Report& report) {
  std::map<std::string, std::string> out;
  for (const auto& f : report.findings()) {
    if (f.kind() == "node_unreachable") out[f.node()] = f.detail();
  }
  return out;
}

// How a map draws its cells: their size, coloured by status or by bandwidth (against the
// median), compact (a fleet's leaf maps: colour and title only) or not.
struct CellStyle {
  int cell = 44;
  bool by_bandwidth = false;
  bool compact = false;
  double median = 0;
};

// One cell of a map at (x, y): a pair's status or bandwidth, its figures on hover. A compact
// cell carries only its colour and its title.
void AppendCell(const v1::PairHealth& p, const std::string& a, const std::string& b,
                const CellStyle& style, std::pair<int, int> at, std::string& svg) {
  const auto [x, y] = at;
  const int cell = style.cell;
  const bool by_bandwidth = style.by_bandwidth, compact = style.compact;
  const double median = style.median;
  const double bw = DirectedBw(p, a);
  const std::string value = std::isnan(bw) ? "n/a" : absl::StrFormat("%.2f", bw);
  const std::string lat = p.has_lat_us() ? absl::StrFormat(", %.1f us", p.lat_us()) : "";
  const std::string fill = by_bandwidth
                               ? (std::isnan(bw) ? kUnmeasuredFill : BandwidthFill(bw, median))
                               : StatusFill(p.status());
  if (compact) {
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                          "fill=\"%s\"><title>%s -&gt; %s %s %s</title></rect>\n",
                          x, y, cell - 1, cell - 1, fill, XmlEscape(a), XmlEscape(b), value,
                          StatusName(p.status()));
    return;
  }
  absl::StrAppendFormat(
      &svg,
      "<rect class=\"cell\" data-node=\"%s\" data-peer=\"%s\" data-status=\"%s\" x=\"%d\" "
      "y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s -&gt; %s: %s Gb/s%s (%s, %d "
      "attempts)</title></rect>\n",
      XmlEscape(a), XmlEscape(b), StatusName(p.status()), x, y, cell - 1, cell - 1, fill,
      XmlEscape(a), XmlEscape(b), value, lat, StatusName(p.status()), p.attempts());
  if (cell >= 40) {
    absl::StrAppendFormat(
        &svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#fff\">%s</text>\n",
        x + cell / 2, y + cell / 2 + 4, value);
  }
}

// The node x node map of `names` (every node of the report when empty).
std::string Map(const v1::Report& report, bool by_bandwidth, const std::string& id,
                const std::string& rail, std::vector<std::string> names = {},
                bool compact = false) {
  if (names.empty()) {
    for (const auto& node : report.health().nodes()) names.push_back(node.node());
  }
  const PairIndex index = IndexPairs(report, rail);
  const std::map<std::string, std::string> unreachable = Unreachable(report);
  const double median = report.health().has_median_bw_gbps() ? report.health().median_bw_gbps() : 0;
  const int n = names.size();
  const int cell = n > 64 ? 8 : n > 24 ? 16 : 44;
  const int label = 120;
  const int size = label + cell * n;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" id=\"%s\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      size + 10, size + 10, id);
  for (int i = 0; i < n; ++i) {
    const bool gone = unreachable.count(names[i]) > 0;
    const std::string name = XmlEscape(names[i]) + (gone ? " \xE2\x9C\x95" : "");  // ✕
    const char* colour = gone ? " fill=\"#b32d2d\"" : "";
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s>%s</text>\n",
                          label - 4, label + cell * i + cell / 2 + 4, colour, name);
    absl::StrAppendFormat(&svg, "<text transform=\"translate(%d,%d) rotate(-60)\"%s>%s</text>\n",
                          label + cell * i + cell / 2, label - 4, colour, name);
  }
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const int x = label + cell * c, y = label + cell * r;
      const std::string& a = names[r];
      const std::string& b = names[c];
      if (r == c) {
        absl::StrAppendFormat(
            &svg, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eeeeee\"/>\n", x, y,
            cell - 1, cell - 1);
        continue;
      }
      const v1::PairHealth* p = FindPair(index, a, b);
      if (p == nullptr) {
        // Not measured: an unreachable end says so; otherwise the pair was not planned.
        const auto gone = unreachable.count(a) ? unreachable.find(a) : unreachable.find(b);
        if (gone == unreachable.end()) continue;
        absl::StrAppendFormat(
            &svg,
            "<rect class=\"unreachable\" data-node=\"%s\" data-peer=\"%s\" x=\"%d\" y=\"%d\" "
            "width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s unreachable: %s</title></rect>\n",
            XmlEscape(a), XmlEscape(b), x, y, cell - 1, cell - 1, kUnreachableFill,
            XmlEscape(gone->first), XmlEscape(gone->second));
        continue;
      }
      // A large fabric's second map: colour only (the status map carries each cell's figures),
      // which keeps a 512-node report's file size near one map's.
      if (by_bandwidth && n > 64 && !compact) {
        const double bw = DirectedBw(*p, a);
        absl::StrAppendFormat(
            &svg,
            "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", x,
            y, cell - 1, cell - 1, std::isnan(bw) ? kUnmeasuredFill : BandwidthFill(bw, median));
        continue;
      }
      AppendCell(*p, a, b, CellStyle{cell, by_bandwidth, compact, median}, {x, y}, svg);
    }
  }
  svg += "</svg>\n";
  return svg;
}

std::string Swatch(const char* fill, const std::string& text) {
  return absl::StrFormat(
      "<span class=\"swatch\"><svg width=\"14\" height=\"14\"><rect width=\"14\" height=\"14\" "
      "fill=\"%s\" stroke=\"#999\"/></svg> %s</span>\n",
      fill, text);
}

// A fleet's status map, leaf by leaf: one compact map per group of the topology's first level,
// each in a <details> to open, with its bad pairs in the summary; the leaf x leaf table above
// the maps gives the pairs between leaves.
std::string LeafMaps(const v1::Report& report, const std::string& id, const std::string& rail) {
  const auto m = GroupMatrixOf(report, rail);
  if (!m) {
    return absl::StrFormat(
        "<p class=\"fleet\">%d nodes: the node x node maps are drawn up to %d cells; with "
        "topology.levels they are drawn %s by %s. The nodes and the flagged pairs are below.</p>\n",
        report.health().nodes_size(), kMaxHtmlMapCells, "leaf", "leaf");
  }
  std::string out = absl::StrFormat(
      "<p class=\"fleet\">%d nodes in %d %s groups: each %s's own map below (the pairs between "
      "them are in the %s map above).</p>\n",
      report.health().nodes_size(), m->groups.size(), XmlEscape(m->level), XmlEscape(m->level),
      XmlEscape(m->level));
  for (size_t g = 0; g < m->groups.size(); ++g) {
    absl::StrAppendFormat(
        &out,
        "<details class=\"group\"><summary>%s: %d nodes, %d of %d pairs within it bad</summary>\n",
        XmlEscape(m->groups[g]), m->members[g].size(), m->bad[g][g], m->pairs[g][g]);
    out += Map(report, false, absl::StrCat(id, "-", g), rail, m->members[g], /*compact=*/true);
    out += "</details>\n";
  }
  return out;
}

// Whether the whole fleet's node x node maps are drawn: a lab's or a rack's, or any sweep whose
// measured cells (two per pair) stay within kMaxHtmlMapCells.
bool WholeMaps(const v1::Report& report) {
  return report.health().nodes_size() <= 64 ||
         2 * static_cast<int64_t>(report.health().pairs_size()) <= kMaxHtmlMapCells;
}

// One map per rail (its id suffixed with the rail), or the one map without rails; a fleet's
// status map leaf by leaf, and no bandwidth map (its cells' titles carry the figures).
std::string Maps(const v1::Report& report, bool by_bandwidth, const std::string& id) {
  std::string out;
  const bool whole = WholeMaps(report);
  if (!whole && by_bandwidth)
    return "<p class=\"fleet\">Drawn for smaller sweeps; the status maps' cells give each pair's "
           "bandwidth.</p>\n";
  for (const std::string& rail : RailsOf(report)) {
    if (!rail.empty()) absl::StrAppend(&out, "<h3>", XmlEscape(rail), "</h3>\n");
    const std::string map_id = rail.empty() ? id : absl::StrCat(id, "-", rail);
    out += whole ? Map(report, by_bandwidth, map_id, rail) : LeafMaps(report, map_id, rail);
  }
  return out;
}

}  // namespace

std::string StatusMapHtml(const v1::Report& report) {
  std::string out = "<div class=\"legend\" id=\"status-legend\">\n";
  out += Swatch(StatusFill(v1::HEALTH_OK), "ok");
  out += Swatch(StatusFill(v1::HEALTH_WARNING), "warning");
  out += Swatch(StatusFill(v1::HEALTH_CRITICAL), "critical");
  out += Swatch(StatusFill(v1::HEALTH_UNKNOWN), "unknown (not measured, failed)");
  out += Swatch(kUnreachableFill, "node unreachable (&#x2715;)");
  out += "</div>\n";
  return out + Maps(report, false, "heatmap");
}

std::string BandwidthMapHtml(const v1::Report& report) {
  const double median = report.health().has_median_bw_gbps() ? report.health().median_bw_gbps() : 0;
  std::string out = "<div class=\"legend\" id=\"bandwidth-legend\">\n";
  // The scale: a gradient from 0 to the median, with its ticks.
  out += "<svg width=\"260\" height=\"34\"><defs><linearGradient id=\"bwscale\">";
  for (int i = 0; i <= 10; ++i) {
    absl::StrAppendFormat(&out, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", i * 10,
                          BandwidthFill(median * i / 10.0, median));
  }
  out +=
      "</linearGradient></defs><rect x=\"10\" y=\"2\" width=\"240\" height=\"14\" "
      "fill=\"url(#bwscale)\" stroke=\"#999\"/>";
  for (int i = 0; i <= 2; ++i) {
    absl::StrAppendFormat(
        &out, "<text x=\"%d\" y=\"30\" font-size=\"11\" text-anchor=\"middle\">%.1f</text>",
        10 + 120 * i, median * i / 2);
  }
  absl::StrAppendFormat(&out, "</svg> Gb/s, from 0 to the fabric's median (%.2f) and above\n",
                        median);
  out += Swatch(kUnmeasuredFill, "no figure");
  out += Swatch(kUnreachableFill, "node unreachable (&#x2715;)");
  out += "</div>\n";
  return out + Maps(report, true, "bwmap");
}

}  // namespace fabricctl::report::internal
