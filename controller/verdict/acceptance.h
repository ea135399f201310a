#ifndef FABRICCTL_CONTROLLER_VERDICT_ACCEPTANCE_H_
#define FABRICCTL_CONTROLLER_VERDICT_ACCEPTANCE_H_

// `fabricctl accept`'s verdict: new nodes judged over the passes of a burn-in, each a sweep the
// controller ran and holds. The controller judges it when the acceptance is recorded, from the
// stored reports, so that what is recorded (and what ends a node's pass) is the same whichever
// client asked.
//
// A new node is accepted when
//  - every pass measured it: it is among the nodes of each pass's report (else its "reachable"
//    check fails: not in sweep N);
//  - no warning or critical finding of any pass names it (as its node, or as the peer of a pair
//    with a reference), each kept once with evidence `passes` ("2 of 3"); a configuration
//    finding whose kind every reference shows too is the fleet's state, kept as shared;
//  - a fabric finding raised in some passes and not in others is `unstable` (the pair's, or the
//    node's when it named no peer), the kinds and passes in its evidence: a burn-in exists to
//    find what comes and goes;
//  - its link watch counted no flap and no error counter rise that grew during the burn-in
//    (`link_flapping` / `link_errors` with the counts, from each pass's link_watch result);
//  - its pairs were measured: with at least kMinReferencePartners reference nodes on a rail
//    (with another new node without references), else its fabric check fails as
//    insufficient_data.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "proto/report.pb.h"

namespace fabricctl::controller {

// Distinct references a new node must have been measured with on a rail: two that agree are the
// re-test one pair would need (the sweep's own rule, verdict/reference.h).
inline constexpr uint32_t kMinReferencePartners = 2;

// The check a finding's kind belongs to: "cabling", "configuration", "reachable" or "fabric".
std::string CheckOf(const std::string& kind);

// Folds the passes one at a time (a week's soak holds a thousand reports; none is kept).
class AcceptanceJudge {
 public:
  AcceptanceJudge(std::vector<std::string> new_nodes, std::vector<std::string> references);
  // The next pass's report.
  void Add(const v1::Report& pass);
  // The verdict over the passes added: nodes, checks, findings, figures, `incomplete` and
  // exit_code: 2 (critical) when a node is rejected; else 3 when `incomplete` says why a pass
  // gave no verdict, or none was added (what was not measured accepts nobody); else by the
  // worst fabric finding about a reference (the figures the new nodes were judged against) or
  // finding about no single node; else 0. The sweep ids, times and reference source are the
  // caller's to set.
  v1::Acceptance Result(const std::string& incomplete) const;

  // Pairs' figures gathered over the passes.
  struct Samples {
    std::vector<double> bw_gbps, lat_us;
  };
  struct RailSamples {
    Samples between;                                        // pairs between references
    std::map<std::string, Samples> with;                    // each new node's with partners
    std::map<std::string, std::set<std::string>> partners;  // and who they were
  };
  // One finding across the passes: its first instance, and the passes that raised it.
  struct Seen {
    v1::Finding finding;
    std::vector<int64_t> sweeps;
  };
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  // One link counter of a new node, from its link watch in each pass: the first pass's windowed
  // count and the largest since.
  struct Counter {
    uint64_t first = 0, most = 0;
    bool flaps = false;
  };

 private:
  // Each new node's failed checks: node -> check -> findings.
  using Failed = std::map<std::string, std::map<std::string, std::vector<v1::Finding>>>;
  void AddFindings(const v1::Report& pass);
  void AddPairs(const v1::Report& pass);
  void AddWatch(const v1::Report& pass);
  void SortFindings(v1::Acceptance& out, Failed& failed) const;
  void NoteUnstable(const v1::Finding& f, const std::vector<int64_t>& sweeps, v1::Finding& u) const;
  void AddGrowth(Failed& failed) const;
  void AddMissing(Failed& failed) const;
  void AddFigures(v1::Acceptance& out, Failed& failed) const;
  static int ExitCode(const v1::Acceptance& acceptance, size_t passes);

  std::vector<std::string> new_nodes_, references_;
  std::set<std::string> fresh_, refs_;
  size_t passes_ = 0;
  std::map<Key, Seen> seen_;
  std::vector<Key> order_;
  std::vector<std::string> rails_;  // in the order the passes name them
  std::map<std::string, RailSamples> by_rail_;
  std::map<std::string, std::vector<int64_t>> missing_;  // a new node: the sweeps without it
  std::map<std::pair<std::string, std::string>, Counter> counters_;  // (node, "link counter")
};

// The passes at once (tests, and a burn-in's progress).
v1::Acceptance JudgeAcceptance(const std::vector<std::string>& new_nodes,
                               const std::vector<std::string>& references,
                               const std::vector<v1::Report>& passes,
                               const std::string& incomplete = "");

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_ACCEPTANCE_H_
