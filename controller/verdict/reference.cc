#include "controller/verdict/reference.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/passes.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

bool Blamed(const Judged& j, uint32_t i) {
  return j.blame.bw[i] != Side::kNone || j.blame.lat[i] != Side::kNone ||
         j.blame.dead[i] != Side::kNone || j.stability.blamed[i] != Side::kNone;
}

std::string Gbps(double v) { return absl::StrFormat("%.2f", v); }

}  // namespace

ReferenceJudgement JudgeAgainstReferences(const AnalysisInput& in, const Judged& j) {
  const size_t n = in.nodes.size();
  ReferenceJudgement r;
  r.figure.assign(n, std::nanf(""));
  r.references.assign(n, 0);
  r.below.assign(n, 0);
  for (const NodeInput& node : in.nodes) r.named += node.reference && node.reachable;
  if (r.named == 0 || r.named == n) return r;
  // A sweep without a bandwidth figure (latency probes only) judges nothing against them.
  for (const PairInput& pair : in.pairs) {
    for (const auto& d : pair.Directions())
      r.measured =
          r.measured || (pair.status == PairStatus::kMeasured && !std::isnan(d.figures.bw_gbps));
  }
  if (!r.measured) return r;
  // A reference an earlier pass blamed is no yardstick: its pairs are left out, both among the
  // references and with the nodes judged (a slow reference would excuse a slow rack, and make
  // a healthy node look slow).
  auto usable = [&](uint32_t i) { return in.nodes[i].reference && !Blamed(j, i); };
  std::vector<double> between;                  // directions between references
  std::vector<std::vector<double>> with(n);     // each node's directions with references
  std::vector<std::set<uint32_t>> partners(n);  // the references it was measured with
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (pair.status != PairStatus::kMeasured || j.paths.pair_fault[p] >= 0) continue;
    const bool a = in.nodes[pair.client].reference, b = in.nodes[pair.server].reference;
    if (!a && !b) continue;
    if ((a && !usable(pair.client)) || (b && !usable(pair.server))) continue;
    for (const auto& d : pair.Directions()) {
      const float bw = d.figures.bw_gbps;
      if (std::isnan(bw)) continue;
      if (a && b) {
        between.push_back(bw);
        continue;
      }
      const uint32_t node = a ? pair.server : pair.client;
      with[node].push_back(bw);
      partners[node].insert(a ? pair.client : pair.server);
    }
  }
  for (uint32_t i = 0; i < n; ++i) r.references[i] = static_cast<uint32_t>(partners[i].size());
  if (r.named < kMinReferences || between.empty()) {
    // No yardstick measured today: the references' own figures where they last passed, from
    // as many references as one measured would need (a pass was measured with its peers).
    std::vector<double> stored;
    for (uint32_t i = 0; i < n; ++i) {
      if (usable(i) && in.nodes[i].reachable && !std::isnan(in.nodes[i].stored_gbps))
        stored.push_back(in.nodes[i].stored_gbps);
    }
    if (stored.size() < kMinReferences) return r;
    between = std::move(stored);
    r.stored = true;
  }
  r.valid = true;
  r.typical_gbps = Median(between);
  const auto& t = in.thresholds;
  size_t judged = 0;
  for (size_t i = 0; i < n; ++i)
    judged += !in.nodes[i].reference && partners[i].size() >= kMinReferencePairs;
  const double z = ChanceBar(t.max_robust_z(), std::max<size_t>(judged, 1));
  r.bar_gbps = r.typical_gbps * std::min(1 - t.min_effect(), std::exp(-z * j.noise.log_spread));
  for (uint32_t i = 0; i < n; ++i) {
    if (in.nodes[i].reference || partners[i].size() < kMinReferencePairs) continue;
    r.figure[i] = static_cast<float>(Median(with[i]));
    r.below[i] = r.figure[i] < r.bar_gbps && !Blamed(j, i);
  }
  return r;
}

namespace {

// A node the references could not judge: too few of them measured with it, or none measured
// among themselves. Not judged is not passed: it says so (insufficient_data, a warning).
v1::Finding NotJudged(const AnalysisInput& in, const ReferenceJudgement& r, uint32_t i,
                      const std::string& names) {
  v1::Finding f = report::Make(
      report::kind::kInsufficientData, in.nodes[i].name,
      absl::StrFormat("%s: measured with %d of the sweep's %d reachable reference node(s) (%s)%s; "
                      "%d needed to judge it against them",
                      in.nodes[i].name, r.references[i], r.named, names,
                      r.named >= kMinReferences && !r.valid
                          ? ", no two of which were measured together without fault of their own"
                          : "",
                      kMinReferencePairs));
  (*f.mutable_evidence())["references"] = names;
  return f;
}

}  // namespace

void AddReferenceFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  const ReferenceJudgement& r = j.reference;
  if (r.named == 0 || r.named == in.nodes.size() || !r.measured) return;
  std::vector<std::string> refs;  // the reachable ones
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    if (in.nodes[i].reference && in.nodes[i].reachable) refs.push_back(in.nodes[i].name);
  }
  const std::string names = absl::StrJoin(refs, ",");
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    if (in.nodes[i].reference || !in.nodes[i].reachable || Blamed(j, i)) continue;
    if (!r.valid || r.references[i] < kMinReferencePairs) {
      if (out.nodes[i].verdict == Verdict::kOk) out.nodes[i].verdict = Verdict::kWarning;
      out.findings.push_back(NotJudged(in, r, i, names));
      continue;
    }
    if (!r.below[i]) continue;
    out.nodes[i].verdict = Verdict::kCritical;
    v1::Finding f = report::Make(
        report::kind::kBelowReference, in.nodes[i].name,
        absl::StrFormat(
            "%s: %s %s Gb/s with %d reference node(s), below the references' %s Gb/s "
            "%s (%s): %.0f %% short, beyond the %s Gb/s that noise "
            "and thresholds.min_effect allow",
            in.nodes[i].name, in.bandwidth_probe, Gbps(r.figure[i]), r.references[i],
            Gbps(r.typical_gbps), r.stored ? "where they last passed" : "among themselves",
            absl::StrJoin(refs, ", "), 100 * (1 - r.figure[i] / r.typical_gbps), Gbps(r.bar_gbps)));
    auto& e = *f.mutable_evidence();
    e["yardstick"] = r.stored ? "stored passes" : "this sweep";
    e["measured_gbps"] = Gbps(r.figure[i]);
    e["reference_gbps"] = Gbps(r.typical_gbps);
    e["bar_gbps"] = Gbps(r.bar_gbps);
    e["references"] = names;
    out.findings.push_back(std::move(f));
  }
}

}  // namespace fabricctl::controller
