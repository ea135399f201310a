#ifndef FABRICCTL_CONTROLLER_VERDICT_REFERENCE_H_
#define FABRICCTL_CONTROLLER_VERDICT_REFERENCE_H_

// New or stale nodes judged against reference nodes: known-good members of the fleet they join
// (NodeInput::reference), measured in the same sweep. The fabric's own typical figure cannot
// judge a new rack that is slow as a whole (its nodes are the sweep's majority, and no outlier),
// but the references' figure among themselves can. The verdict package's own.
#include <cstdint>
#include <limits>
#include <vector>

#include "controller/verdict/analysis.h"

namespace fabricctl::controller {

struct Judged;

// References a sweep needs before anything is judged against them: with two, one reference's own
// fault shows as the pair between them, which every node is then measured beside.
inline constexpr size_t kMinReferences = 2;
// Distinct references a node must have been measured with before it is judged against them: two
// partners agreeing that it is slow is the re-test a single pair would need.
inline constexpr uint32_t kMinReferencePairs = 2;

struct ReferenceJudgement {
  size_t named = 0;       // reachable references in the sweep
  bool measured = false;  // any pair of the sweep has a bandwidth figure
  bool valid = false;     // enough references, measured among themselves
  // The median of the directions between references, Gb/s: the yardstick. Where no two
  // references were measured together (or fewer than kMinReferences answered), the median of
  // their figures where they last passed (NodeInput::stored_gbps), from kMinReferences of them
  // at least: `stored` then says so.
  double typical_gbps = std::numeric_limits<double>::quiet_NaN();
  bool stored = false;
  // The figure below which a node's is below the references': min_effect below the yardstick and
  // beyond the z bar of the pairs' noise on the log scale (LinkNoise).
  double bar_gbps = std::numeric_limits<double>::quiet_NaN();
  // Per node: the median of its directions with references (NaN for a reference, or with fewer
  // than kMinReferencePairs of them measured), how many references it was measured with, and
  // whether it is below.
  std::vector<float> figure;
  std::vector<uint32_t> references;
  std::vector<char> below;
};

// 11. Each node that is not a reference, against the references. Pairs a switch-level fault
// explains are left out (the fault is named, not its hosts), and so is a node the earlier passes
// already blamed (straggler, unstable, path down): one finding for one cause.
ReferenceJudgement JudgeAgainstReferences(const AnalysisInput& in, const Judged& j);

// below_reference for each node below, into `out` (its verdict critical), and insufficient_data
// for each node the references could not judge (fewer than kMinReferencePairs of them measured
// with it, or fewer than kMinReferences measured among themselves) when the sweep names any:
// not judged is not passed. When the nodes below are a split
// fleet's whole slow group and the fast one holds the references, the references answer the
// question fleet_split asks (a slower kind of node, or a faulty one?), so fleet_split is not
// raised for them.
void AddReferenceFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_REFERENCE_H_
