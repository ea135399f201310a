#include "cli/render.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/exit_code.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"

namespace fabricctl::cli {
namespace {

using google::protobuf::util::TimeUtil;

std::string SeverityName(v1::Severity s) {
  switch (s) {
    case v1::SEVERITY_CRITICAL: return "CRITICAL";
    case v1::SEVERITY_WARNING: return "WARNING";
    default: return "OK";
  }
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string ProbeName(int kind) {
  return Lower(v1::ProbeKind_Name(static_cast<v1::ProbeKind>(kind)));
}

std::string ActionName(v1::Action a) {
  switch (a) {
    case v1::ACTION_DRAIN: return "drain";
    case v1::ACTION_INVESTIGATE: return "investigate";
    default: return "none";
  }
}

std::string StatusName(v1::HealthStatus s) {
  switch (s) {
    case v1::HEALTH_OK: return "ok";
    case v1::HEALTH_WARNING: return "warning";
    case v1::HEALTH_CRITICAL: return "critical";
    default: return "unknown";
  }
}

double Seconds(const google::protobuf::Duration& d) {
  return static_cast<double>(TimeUtil::DurationToMilliseconds(d)) / 1000.0;
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

// The bandwidth probe the heat map shows: the first bandwidth probe of the sweep.
std::string HeadlineProbe(const v1::Report& report) {
  for (int kind : report.sweep().probes()) {
    std::string name = ProbeName(kind);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, "_bw") == 0) return name;
  }
  return "";
}

// Pair lookup by unordered node names.
std::map<std::pair<std::string, std::string>, const v1::PairHealth*> PairIndex(
    const v1::Report& report) {
  std::map<std::pair<std::string, std::string>, const v1::PairHealth*> index;
  for (const auto& p : report.health().pairs()) {
    index[{p.node(), p.peer()}] = &p;
    index[{p.peer(), p.node()}] = &p;
  }
  return index;
}

std::string XmlEscape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"},
                                    {"\"", "&quot;"}, {"'", "&apos;"}});
}

std::string PromEscape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

}  // namespace

std::string RenderText(const v1::Report& report, bool color) {
  const auto& sum = report.summary();
  const char* reset = color ? "\033[0m" : "";
  auto paint = [&](v1::Severity s) -> const char* {
    if (!color) return "";
    return s == v1::SEVERITY_CRITICAL ? "\033[31m" : s == v1::SEVERITY_WARNING ? "\033[33m" : "\033[32m";
  };
  std::string out;
  if (report.source() == "check") {
    int audits = 0, skipped = 0;
    for (const auto& node : report.health().nodes()) {
      for (const auto& a : node.audits()) {
        ++audits;
        skipped += a.outcome() == v1::AUDIT_SKIPPED;
      }
    }
    out = absl::StrFormat("%s: %s%s%s - %d audits (%d skipped), %d findings\n", Title(report),
                          paint(sum.worst_severity()), SeverityName(sum.worst_severity()), reset,
                          audits, skipped, report.findings_size());
  } else {
    out = absl::StrFormat(
      "%s: %s%s%s - %d nodes (%d ok, %d warning, %d critical, %d unknown), %d pairs (%d flagged), "
      "%d findings, %.1fs\n",
      Title(report), paint(sum.worst_severity()), SeverityName(sum.worst_severity()), reset,
      sum.nodes(), sum.nodes_ok(), sum.nodes_warning(), sum.nodes_critical(), sum.nodes_unknown(),
      sum.pairs(), sum.pairs_failed(), report.findings_size(), Seconds(sum.elapsed()));
  }
  const std::string probe = HeadlineProbe(report);
  if (report.health().has_best_bw_gbps()) {
    absl::StrAppendFormat(&out, "%s: best pair %.2f Gb/s, median %.2f Gb/s\n", probe,
                          report.health().best_bw_gbps(), report.health().median_bw_gbps());
  }
  if (report.findings_size() > 0) {
    out += "\nFINDINGS\n";
    for (const auto& f : report.findings()) {
      absl::StrAppendFormat(&out, "%s%-8s%s %-20s %s  [%s]\n", paint(f.severity()),
                            SeverityName(f.severity()), reset, f.kind(), f.detail(),
                            ActionName(f.action()));
    }
  }
  if (sum.drain_size() > 0) absl::StrAppend(&out, "\nDRAIN: ", absl::StrJoin(sum.drain(), " "), "\n");
  for (const auto& node : report.health().nodes()) {
    if (node.audits_size() == 0) continue;
    absl::StrAppend(&out, "\nAUDITS (", node.node(), ")\n");
    for (const auto& audit : node.audits()) {
      std::string outcome = audit.outcome() == v1::AUDIT_SKIPPED  ? "skipped"
                            : audit.outcome() == v1::AUDIT_FAILED ? "failed"
                            : audit.findings_size() > 0           ? "findings"
                                                                  : "ok";
      absl::StrAppendFormat(&out, "%-12s %-9s %s\n", audit.audit(), outcome,
                            audit.reason().empty()
                                ? absl::StrCat(audit.observed_size(), " checked")
                                : audit.reason());
    }
  }

  for (const auto& c : report.health().collectives()) {
    absl::StrAppendFormat(&out, "\nALLREDUCE (%s, %d nodes from %s)%s\n", c.device(),
                          c.effective_spec().allreduce().group_size(), c.node(),
                          c.outcome() == v1::PROBE_OK ? "" : absl::StrCat(": ", c.reason()));
    if (c.has_nccl() && !c.nccl().net().empty()) {
      absl::StrAppendFormat(&out, "NCCL network %s, GPUDirect RDMA %s\n", c.nccl().net(),
                            c.nccl().gpudirect_rdma() ? "in use" : "not in use");
    }
    if (c.collective_size() > 0) {
      out += "        size     time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n";
      for (const auto& p : c.collective()) {
        absl::StrAppendFormat(&out, "%12d %12.1f %12.3f %12.3f %7d\n", p.size_bytes(), p.time_us(),
                              p.algbw_gbytes(), p.busbw_gbytes(), p.wrong());
      }
    }
  }
  const auto& nodes = report.health().nodes();
  if (nodes.empty() || report.health().pairs().empty()) return out;
  constexpr int kMaxMapNodes = 40;
  if (nodes.size() > kMaxMapNodes) {
    absl::StrAppendFormat(&out, "\n(heat map left out for %d nodes: --format html draws it)\n",
                          nodes.size());
    return out;
  }
  auto index = PairIndex(report);
  size_t width = 6;
  for (const auto& n : nodes) width = std::max(width, n.node().size());
  absl::StrAppendFormat(&out, "\nHEAT MAP (%s Gb/s; * critical, ! warning, ? not measured)\n",
                        probe.empty() ? "bandwidth" : probe);
  out += std::string(width + 1, ' ');
  for (const auto& n : nodes) absl::StrAppendFormat(&out, " %*s", static_cast<int>(std::max<size_t>(8, n.node().size())), n.node());
  out += "\n";
  for (const auto& row : nodes) {
    absl::StrAppendFormat(&out, "%-*s ", static_cast<int>(width), row.node());
    for (const auto& col : nodes) {
      const int w = static_cast<int>(std::max<size_t>(8, col.node().size()));
      if (row.node() == col.node()) {
        absl::StrAppendFormat(&out, " %*s", w, "-");
        continue;
      }
      auto it = index.find({row.node(), col.node()});
      if (it == index.end()) {
        absl::StrAppendFormat(&out, " %*s", w, "");
        continue;
      }
      const v1::PairHealth& p = *it->second;
      std::string cell = p.has_bw_gbps() ? absl::StrFormat("%.2f", p.bw_gbps()) : "?";
      const char* mark = p.status() == v1::HEALTH_CRITICAL ? "*"
                         : p.status() == v1::HEALTH_WARNING ? "!"
                         : p.status() == v1::HEALTH_UNKNOWN ? "?"
                                                            : " ";
      v1::Severity sev = p.status() == v1::HEALTH_CRITICAL ? v1::SEVERITY_CRITICAL
                         : p.status() == v1::HEALTH_WARNING ? v1::SEVERITY_WARNING
                                                            : v1::SEVERITY_OK;
      absl::StrAppendFormat(&out, " %s%*s%s%s", paint(sev), w - 1, cell, mark, reset);
    }
    out += "\n";
  }
  return out;
}

std::string RenderJson(const v1::Report& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  return json;
}

std::string RenderJunit(const v1::Report& report) {
  struct Case {
    std::string name, classname, failure_type, message;
    bool skipped = false;
    double time = 0;
  };
  std::map<std::string, std::vector<Case>> suites;  // family -> cases
  // Pair findings by unordered pair; node findings by node.
  std::map<std::pair<std::string, std::string>, std::vector<const v1::Finding*>> pair_findings;
  std::map<std::string, std::vector<const v1::Finding*>> node_findings;
  for (const auto& f : report.findings()) {
    if (f.peer().empty()) {
      node_findings[f.node()].push_back(&f);
    } else {
      pair_findings[{std::min(f.node(), f.peer()), std::max(f.node(), f.peer())}].push_back(&f);
    }
  }
  for (const auto& pair : report.health().pairs()) {
    const auto key = std::make_pair(std::min(pair.node(), pair.peer()), std::max(pair.node(), pair.peer()));
    for (const auto& result : pair.results()) {
      Case c;
      std::string family = ProbeName(result.kind());
      c.classname = absl::StrCat("fabricctl.", family);
      c.name = absl::StrCat(pair.node(), " -> ", pair.peer());
      c.time = Seconds(result.elapsed());
      if (result.outcome() == v1::PROBE_SKIPPED) {
        c.skipped = true;
        c.message = result.reason();
      } else if (result.outcome() != v1::PROBE_OK) {
        c.failure_type = result.outcome() == v1::PROBE_TIMEOUT ? "probe_timeout" : "probe_failed";
        c.message = result.reason();
      }
      suites[family].push_back(std::move(c));
    }
    // The pair's verdict (slow link, high latency) belongs to the pair family.
    if (auto it = pair_findings.find(key); it != pair_findings.end()) {
      for (const v1::Finding* f : it->second) {
        if (f->kind() == "probe_failed" || f->kind() == "probe_timeout") continue;
        Case c;
        c.classname = "fabricctl.pairs";
        c.name = absl::StrCat(f->node(), " -> ", f->peer(), ": ", f->kind());
        c.failure_type = f->kind();
        c.message = f->detail();
        suites["pairs"].push_back(std::move(c));
      }
    }
  }
  for (const auto& node : report.health().nodes()) {
    for (const auto& audit : node.audits()) {
      Case c;
      c.classname = absl::StrCat("fabricctl.audits.", audit.audit());
      c.name = absl::StrCat(node.node(), ": ", audit.audit());
      if (audit.outcome() == v1::AUDIT_SKIPPED) {
        c.skipped = true;
        c.message = audit.reason();
      } else if (audit.outcome() == v1::AUDIT_FAILED) {
        c.failure_type = "audit_failed";
        c.message = audit.reason();
      } else if (audit.findings_size() > 0) {
        std::vector<std::string> kinds, details;
        for (const auto& f : audit.findings()) {
          kinds.push_back(f.kind());
          details.push_back(f.detail());
        }
        c.failure_type = absl::StrJoin(kinds, ",");
        c.message = absl::StrJoin(details, "; ");
      }
      suites["audits"].push_back(std::move(c));
    }
  }
  for (const auto& node : report.health().nodes()) {
    Case c;
    c.classname = "fabricctl.nodes";
    c.name = node.node();
    std::vector<std::string> messages, kinds;
    for (const v1::Finding* f : node_findings[node.node()]) {
      messages.push_back(f->detail());
      kinds.push_back(f->kind());
    }
    if (!kinds.empty()) {
      c.failure_type = absl::StrJoin(kinds, ",");
      c.message = absl::StrJoin(messages, "; ");
    }
    suites["nodes"].push_back(std::move(c));
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  int total = 0, failures = 0, skipped = 0;
  for (const auto& [family, cases] : suites) {
    for (const auto& c : cases) {
      ++total;
      failures += !c.failure_type.empty();
      skipped += c.skipped;
    }
  }
  absl::StrAppendFormat(&out, "<testsuites name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                        XmlEscape(Title(report)), total, failures, skipped);
  for (const auto& [family, cases] : suites) {
    int f = 0, s = 0;
    for (const auto& c : cases) {
      f += !c.failure_type.empty();
      s += c.skipped;
    }
    absl::StrAppendFormat(&out,
                          "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
                          "skipped=\"%d\">\n",
                          XmlEscape(family), cases.size(), f, s);
    for (const auto& c : cases) {
      absl::StrAppendFormat(&out, "    <testcase classname=\"%s\" name=\"%s\" time=\"%.3f\"",
                            XmlEscape(c.classname), XmlEscape(c.name), c.time);
      if (c.failure_type.empty() && !c.skipped) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (c.skipped) {
        absl::StrAppendFormat(&out, "      <skipped message=\"%s\"/>\n", XmlEscape(c.message));
      } else {
        absl::StrAppendFormat(&out, "      <failure type=\"%s\" message=\"%s\">%s</failure>\n",
                              XmlEscape(c.failure_type), XmlEscape(c.message), XmlEscape(c.message));
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string RenderProm(const v1::Report& report) {
  std::string out;
  auto metric = [&](const std::string& name, const std::string& help) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n");
  };
  const std::string probe = HeadlineProbe(report);
  metric("fabricctl_sweep_worst_severity", "Worst finding severity: 0 ok, 1 warning, 2 critical.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_worst_severity %d\n",
                        ExitCodeFor(report));
  metric("fabricctl_sweep_id", "Id of the sweep these figures come from.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_id %d\n", report.sweep().sweep_id());
  metric("fabricctl_sweep_finished_timestamp_seconds", "When the sweep finished.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_finished_timestamp_seconds %d\n",
                        report.sweep().finished().seconds());
  metric("fabricctl_sweep_duration_seconds", "Wall time of the sweep.");
  absl::StrAppendFormat(&out, "fabricctl_sweep_duration_seconds %.3f\n", Seconds(report.summary().elapsed()));
  metric("fabricctl_node_status", "Node verdict: 0 ok, 1 warning, 2 critical, 3 unknown.");
  for (const auto& n : report.health().nodes()) {
    int v = n.status() == v1::HEALTH_OK ? 0 : n.status() == v1::HEALTH_WARNING ? 1
            : n.status() == v1::HEALTH_CRITICAL ? 2 : 3;
    absl::StrAppendFormat(&out, "fabricctl_node_status{node=\"%s\"} %d\n", PromEscape(n.node()), v);
  }
  // Base units, as Prometheus asks: bytes per second and seconds.
  metric("fabricctl_pair_bandwidth_bytes_per_second",
         "Average bandwidth of a pair at the largest message size.");
  for (const auto& p : report.health().pairs()) {
    if (!p.has_bw_gbps()) continue;
    absl::StrAppendFormat(&out,
                          "fabricctl_pair_bandwidth_bytes_per_second{node=\"%s\",peer=\"%s\",probe=\"%s\"} %.6g\n",
                          PromEscape(p.node()), PromEscape(p.peer()), probe, p.bw_gbps() * 1e9 / 8);
  }
  metric("fabricctl_pair_latency_seconds",
         "Typical one-way latency of a pair at the smallest message size.");
  for (const auto& p : report.health().pairs()) {
    if (!p.has_lat_us()) continue;
    absl::StrAppendFormat(&out, "fabricctl_pair_latency_seconds{node=\"%s\",peer=\"%s\"} %.6g\n",
                          PromEscape(p.node()), PromEscape(p.peer()), p.lat_us() * 1e-6);
  }
  metric("fabricctl_findings", "Findings of the sweep by kind and severity.");
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const auto& f : report.findings()) ++counts[{f.kind(), Lower(SeverityName(f.severity()))}];
  for (const auto& [k, count] : counts) {
    absl::StrAppendFormat(&out, "fabricctl_findings{kind=\"%s\",severity=\"%s\"} %d\n", k.first,
                          k.second, count);
  }
  return out;
}

std::string RenderHtml(const v1::Report& report) {
  const auto& nodes = report.health().nodes();
  auto index = PairIndex(report);
  const int n = nodes.size();
  const int cell = n > 64 ? 8 : n > 24 ? 16 : 44;
  const int label = 120;
  const int size = label + cell * n;
  auto fill = [](v1::HealthStatus s) {
    switch (s) {
      case v1::HEALTH_OK: return "#3a9d5d";
      case v1::HEALTH_WARNING: return "#e0a526";
      case v1::HEALTH_CRITICAL: return "#d64545";
      default: return "#9a9a9a";
    }
  };
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" id=\"heatmap\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      size + 10, size + 10);
  for (int i = 0; i < n; ++i) {
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", label - 4,
                          label + cell * i + cell / 2 + 4, XmlEscape(nodes[i].node()));
    absl::StrAppendFormat(&svg,
                          "<text transform=\"translate(%d,%d) rotate(-60)\">%s</text>\n",
                          label + cell * i + cell / 2, label - 4, XmlEscape(nodes[i].node()));
  }
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const int x = label + cell * c, y = label + cell * r;
      if (r == c) {
        absl::StrAppendFormat(&svg, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eeeeee\"/>\n",
                              x, y, cell - 1, cell - 1);
        continue;
      }
      auto it = index.find({nodes[r].node(), nodes[c].node()});
      if (it == index.end()) continue;
      const v1::PairHealth& p = *it->second;
      std::string value = p.has_bw_gbps() ? absl::StrFormat("%.2f", p.bw_gbps()) : "n/a";
      absl::StrAppendFormat(
          &svg,
          "<rect class=\"cell\" data-node=\"%s\" data-peer=\"%s\" data-status=\"%s\" x=\"%d\" "
          "y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s - %s: %s Gb/s (%s)</title></rect>\n",
          XmlEscape(nodes[r].node()), XmlEscape(nodes[c].node()), StatusName(p.status()), x, y,
          cell - 1, cell - 1, fill(p.status()), XmlEscape(nodes[r].node()),
          XmlEscape(nodes[c].node()), value, StatusName(p.status()));
      if (cell >= 40) {
        absl::StrAppendFormat(&svg,
                              "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#fff\">%s</text>\n",
                              x + cell / 2, y + cell / 2 + 4, value);
      }
    }
  }
  svg += "</svg>\n";

  std::string html = absl::StrFormat(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:13px}
.critical{color:#b32d2d;font-weight:bold}.warning{color:#a77400;font-weight:bold}
.ok{color:#2d7a48}.unknown{color:#777}
</style></head><body>
<h1>%s: <span class="%s">%s</span></h1>
<p>%d nodes (%d ok, %d warning, %d critical, %d unknown), %d pairs, %d findings, %.1f s.
Generated by %s.</p>
)",
                                     XmlEscape(Title(report)), XmlEscape(Title(report)),
                                     Lower(SeverityName(report.summary().worst_severity())),
                                     SeverityName(report.summary().worst_severity()),
                                     report.summary().nodes(), report.summary().nodes_ok(),
                                     report.summary().nodes_warning(), report.summary().nodes_critical(),
                                     report.summary().nodes_unknown(), report.summary().pairs(),
                                     report.findings_size(), Seconds(report.summary().elapsed()),
                                     XmlEscape(report.generator()));
  absl::StrAppend(&html, "<h2>Health map (", XmlEscape(HeadlineProbe(report)), " Gb/s)</h2>\n", svg);
  html += "<h2>Findings</h2>\n<table id=\"findings\"><tr><th>severity</th><th>kind</th><th>node</th><th>peer</th><th>detail</th><th>action</th></tr>\n";
  for (const auto& f : report.findings()) {
    absl::StrAppendFormat(&html,
                          "<tr><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                          Lower(SeverityName(f.severity())), SeverityName(f.severity()),
                          XmlEscape(f.kind()), XmlEscape(f.node()), XmlEscape(f.peer()),
                          XmlEscape(f.detail()), ActionName(f.action()));
  }
  html += "</table>\n<h2>Nodes</h2>\n<table id=\"nodes\"><tr><th>node</th><th>status</th><th>median Gb/s</th><th>robust z</th><th>labels</th></tr>\n";
  for (const auto& node : nodes) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : node.labels()) labels.push_back(absl::StrCat(k, "=", v));
    std::sort(labels.begin(), labels.end());
    absl::StrAppendFormat(&html, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                          XmlEscape(node.node()), StatusName(node.status()), StatusName(node.status()),
                          node.has_median_bw_gbps() ? absl::StrFormat("%.2f", node.median_bw_gbps()) : "",
                          node.has_robust_z() ? absl::StrFormat("%.2f", node.robust_z()) : "",
                          XmlEscape(absl::StrJoin(labels, " ")));
  }
  html += "</table>\n</body></html>\n";
  return html;
}

absl::StatusOr<std::string> Render(const v1::Report& report, const std::string& format,
                                   bool color) {
  if (format == "text") return RenderText(report, color);
  if (format == "json") return RenderJson(report);
  if (format == "junit") return RenderJunit(report);
  if (format == "html") return RenderHtml(report);
  if (format == "prom") return RenderProm(report);
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", format, "' is not text, json, junit, html or prom"));
}

int ExitCodeFor(const v1::Report& report) {
  switch (report.summary().worst_severity()) {
    case v1::SEVERITY_CRITICAL: return kExitCritical;
    case v1::SEVERITY_WARNING: return kExitWarning;
    default: return kExitOk;
  }
}

absl::Status WriteOutput(const std::string& path, const std::string& contents) {
  if (path.empty() || path == "-") {
    std::cout << contents;
    std::cout.flush();
    return absl::OkStatus();
  }
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--output: cannot write '", path, "': ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return absl::InternalError(absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    return absl::InternalError(absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::cli
